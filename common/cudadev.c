/* The CUDA runtime's errors of a device, not of a kernel (cudadev.h). */
#include "common/cudadev.h"

#include <stdio.h>
#include <string.h>

int cuda_device_error(const char *text)
{
    /* cudaGetErrorString's texts of cudaErrorNoDevice, cudaErrorInsufficientDriver,
     * cudaErrorDevicesUnavailable, cudaErrorInvalidDevice, cudaErrorSystemNotReady,
     * cudaErrorSystemDriverMismatch and cudaErrorCompatNotSupportedOnDevice; never an error a
     * kernel or its module can cause (an image for another architecture, out of memory) */
    static const char *const device[] = { "no CUDA-capable device is detected",
                                          "CUDA driver version is insufficient",
                                          "busy or unavailable",
                                          "invalid device ordinal",
                                          "system not yet initialized",
                                          "system has unsupported display driver",
                                          "forward compatibility was attempted",
                                          NULL };
    for (int i = 0; text && device[i]; i++)
        if (strstr(text, device[i]))
            return 1;
    return 0;
}

int cuda_device_open_failed(const char *text)
{
    static const char mark[] = "harness: device ";
    for (const char *p = text ? strstr(text, mark) : NULL; p; p = strstr(p + 1, mark)) {
        int dev, at = 0;
        char msg[256];
        if (sscanf(p, "harness: device %d: %n", &dev, &at) != 1 || at == 0)
            continue;
        size_t n = strcspn(p + at, "|\r\n");
        if (n >= sizeof(msg))
            n = sizeof(msg) - 1;
        memcpy(msg, p + at, n);
        msg[n] = '\0';
        if (cuda_device_error(msg) || strcmp(msg, "cannot read its description") == 0)
            return 1;
    }
    return 0;
}
