/* The sandbox tests of sandbox.c without bubblewrap (as on the GPU machines): network
 * namespace / Landlock / unprivileged uid / rlimits only. */
#define SANDBOX_FORCE_MODE "fallback"
#include "sandbox.c"
