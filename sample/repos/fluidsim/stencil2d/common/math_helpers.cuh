#pragma once

__device__ __forceinline__ float lerp(float a, float b, float t)
{
    return a + t * (b - a);
}

__device__ __forceinline__ float clampf(float v, float lo, float hi)
{
    return fminf(fmaxf(v, lo), hi);
}
