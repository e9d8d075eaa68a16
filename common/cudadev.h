/* Whether a harness's words say the device itself is unusable, whatever the kernel: no device,
 * no or a mismatched driver, the device busy or not yet initialised (a GPU that fell off the
 * bus, a driver being reloaded, another process holding an exclusive GPU). execute's probes and
 * tune's sweeps then record nothing for the kernel and stop using the device
 * (docs/execute.md "A device that goes", docs/tune.md "A device that goes"). */
#ifndef LSCAT_COMMON_CUDADEV_H
#define LSCAT_COMMON_CUDADEV_H

/* 1 when `text` (a CUDA error string, e.g. a result line's "error") is one of the CUDA
 * runtime's errors of the device rather than of a kernel or its module. */
int cuda_device_error(const char *text);

/* 1 when `text` (stderr, the last line or a tail whose lines may be joined by '|') holds a
 * generated harness's device-open failure (isolate/harness_core.cu): `harness: device N:
 * <a cuda_device_error>` or `harness: device N: cannot read its description`. */
int cuda_device_open_failed(const char *text);

#endif
