// A stand-in "kernel" for lscat sweep's CPU tests (LSCAT_SWEEP_NO_CUDA=1: no GPU is touched):
// its launch function does on the host what the record's Behave parameter says, so the tests
// see every outcome of the run stage for real: a crash (SIGSEGV), a hang, a launch error, a
// wrong result, and successes of a chosen duration. BROKEN=1 does not compile.
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if BROKEN
#error "this variant does not compile (a test of Error=Compile)"
#endif

static void spin_us(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) * 1e-3 < us);
}

extern "C" int fixture_launch(const char *behave, double us)
{
    if (!strcmp(behave, "crash"))
        raise(SIGSEGV);
    if (!strcmp(behave, "hang"))
        for (;;)
            pause();
    if (!strcmp(behave, "launch"))
        return 9; /* cudaErrorInvalidConfiguration */
    spin_us(us);
    return 0;
}
