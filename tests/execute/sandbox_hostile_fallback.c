/* The hostile-program set without bubblewrap (as on the GPU nodes): sandbox_hostile.c with
 * the fallback forced. */
#define SANDBOX_FORCE_MODE "fallback"
#include "sandbox_hostile.c"
