/* lscat's stand-in for CUDA texture references (texture<T, dim, mode>, removed in CUDA 12),
 * written from CUDA's documented texture-object API, not copied. execute's texture_object repair
 * rewrites a file-scope `texture<T, D, M> t;` into `static __device__ lscat_texref<T, D, M> t;`
 * plus a registration; the harness (isolate/harness_kernel.cu.in lscat_tex_refs) binds every
 * registered reference to texture objects over a buffer of the configuration's size and copies
 * them to the symbol. */
#ifndef LSCAT_TEXREF_H
#define LSCAT_TEXREF_H

#include <cuda_runtime.h>

/* The device-visible part of one reference: one object per resource the fetches need. */
template <class T, int D = 1, enum cudaTextureReadMode M = cudaReadModeElementType>
struct lscat_texref {
    cudaTextureObject_t lin;   /* linear memory: tex1Dfetch */
    cudaTextureObject_t pitch; /* pitched 2D memory: tex2D */
    cudaTextureObject_t arr;   /* a 1D cudaArray: tex1D */
};

/* `texture<float, 1> &t` elsewhere than a file-scope declaration (a parameter type) names the
 * stand-in too; file-scope declarations are rewritten to be __device__ (execute/texref.c). */
template <class T, int D = 1, enum cudaTextureReadMode M = cudaReadModeElementType>
using texture = lscat_texref<T, D, M>;

/* What a fetch returns: the element, or floats for cudaReadModeNormalizedFloat. */
template <class T, enum cudaTextureReadMode M> struct lscat_texret { typedef T type; };
template <class T> struct lscat_texret<T, cudaReadModeNormalizedFloat> { typedef float type; };
#define LSCAT_TEXRET_VEC(V, F)                                                                    \
    template <> struct lscat_texret<V, cudaReadModeNormalizedFloat> { typedef F type; };
LSCAT_TEXRET_VEC(char2, float2)
LSCAT_TEXRET_VEC(uchar2, float2)
LSCAT_TEXRET_VEC(short2, float2)
LSCAT_TEXRET_VEC(ushort2, float2)
LSCAT_TEXRET_VEC(char4, float4)
LSCAT_TEXRET_VEC(uchar4, float4)
LSCAT_TEXRET_VEC(short4, float4)
LSCAT_TEXRET_VEC(ushort4, float4)
#undef LSCAT_TEXRET_VEC

template <class T, int D, enum cudaTextureReadMode M>
static __device__ __forceinline__ typename lscat_texret<T, M>::type
tex1Dfetch(const lscat_texref<T, D, M> &t, int x)
{
    return tex1Dfetch<typename lscat_texret<T, M>::type>(t.lin, x);
}

template <class T, int D, enum cudaTextureReadMode M>
static __device__ __forceinline__ typename lscat_texret<T, M>::type
tex1D(const lscat_texref<T, D, M> &t, float x)
{
    return tex1D<typename lscat_texret<T, M>::type>(t.arr, x);
}

template <class T, int D, enum cudaTextureReadMode M>
static __device__ __forceinline__ typename lscat_texret<T, M>::type
tex2D(const lscat_texref<T, D, M> &t, float x, float y)
{
    return tex2D<typename lscat_texret<T, M>::type>(t.pitch, x, y);
}

/* The registry the harness binds from: the symbol (host shadow address), its channel format and
 * read mode, and its name for messages. */
struct lscat_texref_entry {
    const void *symbol;
    cudaChannelFormatDesc desc;
    int normalized;
    const char *name;
};
enum { LSCAT_TEXREF_MAX = 32 };
static lscat_texref_entry lscat_texrefs[LSCAT_TEXREF_MAX];
static int lscat_ntexrefs;

template <class T, int D, enum cudaTextureReadMode M>
static int lscat_texref_add(const lscat_texref<T, D, M> *symbol, const char *name)
{
    if (lscat_ntexrefs < LSCAT_TEXREF_MAX)
        lscat_texrefs[lscat_ntexrefs++] = { (const void *)symbol, cudaCreateChannelDesc<T>(),
                                            M == cudaReadModeNormalizedFloat, name };
    return lscat_ntexrefs;
}

/* Host binding calls of the old API, kept compiling where host code survives: the harness
 * binds every registered reference itself (a buffer of the configuration's size), so these do
 * nothing and report success. */
template <class T, int D, enum cudaTextureReadMode M>
static cudaError_t cudaBindTexture(size_t *offset, const lscat_texref<T, D, M> &, const void *,
                                   size_t = ~(size_t)0)
{
    if (offset)
        *offset = 0;
    return cudaSuccess;
}
template <class T, int D, enum cudaTextureReadMode M>
static cudaError_t cudaBindTexture(size_t *offset, const lscat_texref<T, D, M> &, const void *,
                                   const cudaChannelFormatDesc &, size_t = ~(size_t)0)
{
    if (offset)
        *offset = 0;
    return cudaSuccess;
}
template <class T, int D, enum cudaTextureReadMode M>
static cudaError_t cudaBindTexture2D(size_t *offset, const lscat_texref<T, D, M> &, const void *,
                                     size_t, size_t, size_t)
{
    if (offset)
        *offset = 0;
    return cudaSuccess;
}
template <class T, int D, enum cudaTextureReadMode M>
static cudaError_t cudaBindTexture2D(size_t *offset, const lscat_texref<T, D, M> &, const void *,
                                     const cudaChannelFormatDesc &, size_t, size_t, size_t)
{
    if (offset)
        *offset = 0;
    return cudaSuccess;
}
template <class T, int D, enum cudaTextureReadMode M, class A>
static cudaError_t cudaBindTextureToArray(const lscat_texref<T, D, M> &, A)
{
    return cudaSuccess;
}
template <class T, int D, enum cudaTextureReadMode M, class A>
static cudaError_t cudaBindTextureToArray(const lscat_texref<T, D, M> &, A,
                                          const cudaChannelFormatDesc &)
{
    return cudaSuccess;
}
template <class T, int D, enum cudaTextureReadMode M>
static cudaError_t cudaUnbindTexture(const lscat_texref<T, D, M> &)
{
    return cudaSuccess;
}

#define LSCAT_TEXREF_REGISTER(name)                                                               \
    static int lscat_texref_reg_##name = lscat_texref_add(&name, #name)

#endif
