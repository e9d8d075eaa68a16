/* A stand-in libnvidia-ml for machines without a driver, to test lscat's clock-locking paths
 * without touching a card: it knows two GPUs (GPU-fake-0, GPU-fake-1), grants locking on
 * GPU-fake-0 and refuses GPU-fake-1 with NVML_ERROR_NO_PERMISSION (4), and appends every
 * lock/reset call to $FAKE_NVML_LOG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dev *nvmlDevice_t;
struct dev {
    int index;
};
static struct dev devs[2] = { { 0 }, { 1 } };

static void note(const char *what, int index, unsigned mhz)
{
    const char *path = getenv("FAKE_NVML_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%s %d %u\n", what, index, mhz);
        fclose(f);
    }
}

int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *out)
{
    for (int i = 0; i < 2; i++) {
        char want[32];
        snprintf(want, sizeof(want), "GPU-fake-%d", i);
        if (strcmp(uuid, want) == 0) {
            *out = &devs[i];
            return 0;
        }
    }
    return 6; /* NVML_ERROR_NOT_FOUND */
}
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
    (void)d;
    *mhz = type == 1 ? 1980 : 2619;
    return 0;
}
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz)
{
    return nvmlDeviceGetClockInfo(d, type, mhz);
}
int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *c)
{
    (void)d;
    (void)sensor;
    *c = 42;
    return 0;
}
int nvmlSystemGetDriverVersion(char *out, unsigned len)
{
    snprintf(out, len, "999.fake");
    return 0;
}
int nvmlDeviceSetGpuLockedClocks(nvmlDevice_t d, unsigned lo, unsigned hi)
{
    (void)hi;
    note("lock", d->index, lo);
    return d->index == 0 ? 0 : 4; /* NVML_ERROR_NO_PERMISSION */
}
int nvmlDeviceResetGpuLockedClocks(nvmlDevice_t d)
{
    note("reset", d->index, 0);
    return 0;
}
