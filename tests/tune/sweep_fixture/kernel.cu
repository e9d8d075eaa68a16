// A stand-in "kernel" for lscat sweep's CPU tests (LSCAT_SWEEP_NO_CUDA=1: no GPU is touched):
// its launch function does on the host what the record's Behave parameter says, so the tests
// see every outcome of the run stage for real: a crash (SIGSEGV), a hang, a launch error, a
// wrong result, and successes of a chosen duration. BROKEN=1 does not compile. `gone`: the
// first time, the stand-in device goes (the file LSCAT_SWEEP_NO_CUDA_GONE names is made, and
// PATH.once) and the launch fails; once PATH.once is there, it runs as `ok`. `gonehang`: as
// `gone`, but the launch never returns (as real GPUs that went away left their runs). `sticky`:
// a launch error that ends the context (an illegal address) while the device stays. `gate`:
// the launch waits until the file LSCAT_SWEEP_NO_CUDA_GATE names exists, and says it waits by
// making PATH.<pid> first (a test sees which host processes wait at once, then opens the gate).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
    if (!strcmp(behave, "sticky"))
        return 700; /* cudaErrorIllegalAddress: the context is lost, the device stays */
    const char *gate = getenv("LSCAT_SWEEP_NO_CUDA_GATE");
    if (!strcmp(behave, "gate") && gate && *gate && access(gate, F_OK) != 0) {
        char mine[4096];
        snprintf(mine, sizeof(mine), "%s.%ld", gate, (long)getpid());
        FILE *f = fopen(mine, "w");
        if (f)
            fclose(f);
        while (access(gate, F_OK) != 0)
            usleep(10000);
    }
    const char *gone = getenv("LSCAT_SWEEP_NO_CUDA_GONE");
    int hang = !strcmp(behave, "gonehang");
    if ((hang || !strcmp(behave, "gone")) && gone && *gone) {
        char once[4096];
        snprintf(once, sizeof(once), "%s.once", gone);
        FILE *f = fopen(once, "r");
        if (f) { /* the device came back after it went: this record runs */
            fclose(f);
        } else {
            for (int i = 0; i < 2; i++)
                if ((f = fopen(i ? once : gone, "w")))
                    fclose(f);
            while (hang)
                pause();
            return 719; /* cudaErrorLaunchFailure: what a kernel in flight may get */
        }
    }
    spin_us(us);
    return 0;
}
