/* NVML loaded at run time with dlopen("libnvidia-ml.so.1"), so nothing that includes the timing
 * core needs NVML to link or to start: without a driver every reading is simply unknown (-1).
 * Header-only (static functions) because both the timing core (timing.cu, built into every
 * harness) and host tools (tune/clocks.c) use it, and the harness build links only timing.cu
 * and stats.c. The few NVML declarations are copied from nvml.h (stable C ABI since NVML 3). */
#ifndef LSCAT_NVML_DL_H
#define LSCAT_NVML_DL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvml_dl_device_st *nvml_dl_device;

enum {
    NVML_DL_SUCCESS = 0,
    NVML_DL_ERROR_UNINITIALIZED = 1,
    NVML_DL_ERROR_INVALID_ARGUMENT = 2,
    NVML_DL_ERROR_NOT_SUPPORTED = 3,
    NVML_DL_ERROR_NO_PERMISSION = 4,
    NVML_DL_ERROR_NOT_FOUND = 6,
    NVML_DL_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_DL_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_DL_ERROR_GPU_IS_LOST = 15,
    NVML_DL_ERROR_UNKNOWN = 999,
    /* ours: the library could not be loaded or lacks a symbol */
    NVML_DL_NO_LIBRARY = -1,
};
enum { NVML_DL_CLOCK_SM = 1, NVML_DL_CLOCK_MEM = 2, NVML_DL_TEMPERATURE_GPU = 0 };

struct nvml_dl {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*handle_by_uuid)(const char *uuid, nvml_dl_device *out);
    int (*clock_info)(nvml_dl_device dev, int type, unsigned *mhz);
    int (*max_clock_info)(nvml_dl_device dev, int type, unsigned *mhz);
    int (*temperature)(nvml_dl_device dev, int sensor, unsigned *c);
    int (*driver_version)(char *out, unsigned len);
    int (*set_locked_clocks)(nvml_dl_device dev, unsigned min_mhz, unsigned max_mhz);
    int (*reset_locked_clocks)(nvml_dl_device dev);
};

#define NVML_DL_SYM(nv, field, name) (*(void **)(&(nv)->field) = dlsym((nv)->lib, name))

/* Load the library and nvmlInit it. Returns NVML_DL_SUCCESS, NVML_DL_NO_LIBRARY, or the
 * NVML code nvmlInit returned. `path` NULL means libnvidia-ml.so.1 (LSCAT_NVML_LIB overrides,
 * for tests). */
static inline int nvml_dl_load(struct nvml_dl *nv, const char *path)
{
    memset(nv, 0, sizeof(*nv));
    if (!path) {
        const char *env = getenv("LSCAT_NVML_LIB");
        path = env && *env ? env : "libnvidia-ml.so.1";
    }
    nv->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib)
        return NVML_DL_NO_LIBRARY;
    NVML_DL_SYM(nv, init, "nvmlInit_v2");
    NVML_DL_SYM(nv, shutdown, "nvmlShutdown");
    NVML_DL_SYM(nv, handle_by_uuid, "nvmlDeviceGetHandleByUUID");
    NVML_DL_SYM(nv, clock_info, "nvmlDeviceGetClockInfo");
    NVML_DL_SYM(nv, max_clock_info, "nvmlDeviceGetMaxClockInfo");
    NVML_DL_SYM(nv, temperature, "nvmlDeviceGetTemperature");
    NVML_DL_SYM(nv, driver_version, "nvmlSystemGetDriverVersion");
    NVML_DL_SYM(nv, set_locked_clocks, "nvmlDeviceSetGpuLockedClocks");
    NVML_DL_SYM(nv, reset_locked_clocks, "nvmlDeviceResetGpuLockedClocks");
    if (!nv->init || !nv->handle_by_uuid || !nv->clock_info || !nv->temperature) {
        dlclose(nv->lib);
        memset(nv, 0, sizeof(*nv));
        return NVML_DL_NO_LIBRARY;
    }
    int rc = nv->init();
    if (rc != NVML_DL_SUCCESS) {
        dlclose(nv->lib);
        memset(nv, 0, sizeof(*nv));
    }
    return rc;
}

/* Undo nvml_dl_load: nvmlShutdown (NVML counts its initialisations) and dlclose. */
static inline void nvml_dl_unload(struct nvml_dl *nv)
{
    if (nv->lib && nv->shutdown)
        nv->shutdown();
    if (nv->lib)
        dlclose(nv->lib);
    memset(nv, 0, sizeof(*nv));
}

/* What an NVML code means, in words that say what to do. */
static inline const char *nvml_dl_describe(int rc)
{
    switch (rc) {
    case NVML_DL_SUCCESS: return "success";
    case NVML_DL_NO_LIBRARY: return "libnvidia-ml.so.1 not found (no NVIDIA driver on this machine)";
    case NVML_DL_ERROR_UNINITIALIZED: return "NVML not initialised";
    case NVML_DL_ERROR_INVALID_ARGUMENT: return "invalid argument (a clock the GPU does not support?)";
    case NVML_DL_ERROR_NOT_SUPPORTED: return "not supported by this GPU or driver";
    case NVML_DL_ERROR_NO_PERMISSION:
        return "no permission (locking clocks needs root or an administrator's grant)";
    case NVML_DL_ERROR_NOT_FOUND: return "GPU not found by NVML";
    case NVML_DL_ERROR_DRIVER_NOT_LOADED: return "the NVIDIA driver is not loaded";
    case NVML_DL_ERROR_LIBRARY_NOT_FOUND: return "NVML library not found";
    case NVML_DL_ERROR_GPU_IS_LOST: return "the GPU fell off the bus";
    default: return "NVML error";
    }
}

/* Format a 16-byte CUDA UUID the way NVML and nvidia-smi print it: GPU-8-4-4-4-12 hex. */
static inline void nvml_dl_format_uuid(char out[48], const unsigned char b[16])
{
    snprintf(out, 48,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

#endif
