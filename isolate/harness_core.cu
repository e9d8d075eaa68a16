// ---- lscat harness core (isolate/harness_core.cu): the same for every kernel ----
// Compiled once per lscat and architecture list and linked into every harness (execute/build.c,
// like the timing core). The kernel's own part is its harness.cu (the generated tables and
// isolate/harness_kernel.cu.in), which the core reads through lscat_kernel
// (isolate/harness_core.h): the arguments' types as data, so nothing here is per kernel.
#include "isolate/harness_core.h"
#include "tune/timing.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

/* The table types of the generated part of harness.cu, the same text (isolate/harness.c writes
 * them; tests/isolate/isolate.c checks that the two agree). */
struct lscat_member { int param, deref; unsigned long long off; char kind; int bytes; char ekind; int ebytes, cnst; const char *role, *name; };
struct lscat_texparam { int param; char kind; cudaChannelFormatDesc desc; };

/* The kernel's tables under the names the generated part gives them. */
using lscat_kfn_t = const void *; /* an instantiation of the kernel, for the runtime API */
static const char *const *const &lscat_roles = lscat_kernel.roles;
static const char *const *const &lscat_names = lscat_kernel.names;
static const int &lscat_dynshared = lscat_kernel.dynshared;
static const unsigned *const &lscat_src_block = lscat_kernel.src_block;
static const long long &lscat_src_smem = lscat_kernel.src_smem;
static const char *const *const &lscat_src_grid = lscat_kernel.src_grid;
static const long long *const &lscat_tile_align = lscat_kernel.tile_align;
static const long long *const &lscat_fixed_size = lscat_kernel.fixed_size;
static const unsigned *const &lscat_fixed_grid = lscat_kernel.fixed_grid;
static const long long *const &lscat_fixed_bytes = lscat_kernel.fixed_bytes;
static const int &lscat_grid2d = lscat_kernel.grid2d;
static const unsigned *const &lscat_ref_block = lscat_kernel.ref_block;
static const int &lscat_cooperative = lscat_kernel.cooperative;
static const lscat_member *const &lscat_members = lscat_kernel.members;
static const char *const &lscat_arg_note = lscat_kernel.arg_note;
static const lscat_texparam *const &lscat_texparams = lscat_kernel.texparams;
static const void *(*const &lscat_pick)(int) = lscat_kernel.pick;

/* A buffer the kernel may write (a non-const pointer parameter, or a pointer array's inner
 * buffer), with the copies the output check needs (docs/isolate.md "Output check"). */
struct lscat_buf {
    void *d;        /* the kernel's buffer */
    void *pristine; /* its initial contents (the check's inputs) */
    void *ref;      /* the reference configuration's output */
    size_t bytes;
    int cmp;        /* LSCAT_CMP_*: how its elements compare */
    int param;      /* parameter index */
    size_t cmp_bytes; /* what the output check compares: the first W*H elements; the padding
                         after them (--pad-elems) takes the overshoot of a kernel without a
                         bound, which differs by block shape and is not the kernel's work */
    std::vector<unsigned char> host; /* host copies of pristine and ref (2 * bytes): a kernel
                                        writing outside its buffers cannot change them */
};

/* A probe's guard (docs/execute.md "Guard after the buffers"): LSCAT_GUARD_BYTES after a
 * pointer buffer, filled with LSCAT_GUARD_BYTE when it is made and again after a write there,
 * and read back after each probe launch.
 * A byte changed there is a write past the buffer's W x H + pad elements, seen without a fault. */
#define LSCAT_GUARD_BYTES ((size_t)256 << 10)
#define LSCAT_GUARD_BYTE 0xA5
struct lscat_guard {
    void *at;  /* the guard's first byte: the buffer's end */
    int param; /* parameter index */
};

struct lscat_run {
    long long w, h;
    size_t elems;
    std::vector<void *> ptrs;
    std::vector<lscat_guard> guards; /* --probe only */
    std::vector<lscat_buf> bufs;
    std::vector<lscat_buf> inputs; /* const pointer buffers, with a host copy of their contents */
    std::vector<cudaTextureObject_t> texs; /* texture objects the kernel fetches through */
    std::vector<cudaArray_t> arrays;       /* and the arrays behind tex1D */
};


static uint64_t lscat_rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Role bindings (docs/isolate.md "Bindings"), in the order execute's probe tries them; --bind
 * picks one, the first is the default. area: a size is the element count W*H; side: a size is
 * a square matrix's side min(W, H) (matmul's n), so n*n elements fit the W*H buffers; tokens:
 * a transformer kernel's dims by their conventional names, aligned as a real model's
 * (lscat_token_shape), with every buffer holding the largest tensor of those dims; tiles: the
 * source's grid and sizes its tiles divide (isolate/harness_tiles.cu.in); fixed: a kernel with
 * hard-coded problem sizes (isolate's lscat_fixed_*, docs/isolate.md "Fixed sizes") gets the
 * source's buffer sizes and grid, scalars as under area. */
static const char *const lscat_bindings[] = { "area", "side", "tokens", "tiles", "fixed",
                                              nullptr };
static int lscat_bind = 0;
#define LSCAT_BIND_SIDE 1 /* indexes of lscat_bindings (execute/probe_params.c probe_bindings) */
#define LSCAT_BIND_TOKENS 2
#define LSCAT_BIND_TILES 3
#define LSCAT_BIND_FIXED 4

/* Under fixed: parameter i's element count from the source's allocation (0: not a fixed
 * buffer, it gets W*H as under area). */
static size_t lscat_fixed_elems(int i, size_t elem_bytes)
{
    if (lscat_bind != LSCAT_BIND_FIXED || elem_bytes == 0)
        return 0;
    for (int k = 0; lscat_fixed_bytes[k] >= 0; k++)
        if (k == i)
            return (size_t)lscat_fixed_bytes[k] / elem_bytes;
    return 0;
}

/* The tokens binding's dims for a W x H configuration: batch B = 1, head size 64, C channels
 * 256, 512 or 768 (a multiple of 256 = 32 lanes x 8 bf16 of a 16-byte load, GPT-2 small's 768
 * at most), NH = C / 64 heads, and T tokens a multiple of 32 (T % 4 asserts, whole warps): of
 * the pairs whose widest activations (B*T*4C), attention scores (B*NH*T*T) and weights (C*C)
 * fit W*H elements, the one with the most work B*T*C (the larger C on a tie), so the sweep's
 * sizes scale the dims; C = 256, T = 32 where none fits (the buffers then grow,
 * lscat_token_elems). */
struct lscat_tokens {
    long long b, t, c, nh, hs;
};
static lscat_tokens lscat_token_shape(long long w, long long h)
{
    long long a = w * h;
    lscat_tokens best = { 1, 32, 256, 4, 64 };
    for (long long c = 256; c <= 768; c += 256) {
        long long nh = c / 64, t = a / (4 * c), s = (long long)sqrt((double)a / (double)nh);
        t = t < s ? t : s;
        while (t > 0 && nh * t * t > a)
            t--;
        t -= t % 32;
        if (t >= 32 && c * c <= a && t * c >= best.t * best.c)
            best = { 1, t, c, nh, 64 };
    }
    return best;
}

/* Elements per buffer under tokens: W*H, or more where the dims' largest tensor needs it
 * (B*T*4C activations, B*NH*T*T attention, C*C weights). */
static long long lscat_token_elems(long long w, long long h)
{
    lscat_tokens d = lscat_token_shape(w, h);
    long long n = w * h, m[] = { d.b * d.t * 4 * d.c, d.b * d.nh * d.t * d.t, d.c * d.c };
    for (long long x : m)
        n = x > n ? x : n;
    return n;
}

static long long lscat_token_c = 0; /* tokens: the C of the buffers made last, else 0 */

/* Elements per buffer for W x H under the binding, before the pad (called when the buffers
 * are made: it keeps their C for lscat_token_shmem). */
static double lscat_tiles_scalar(const char *role, const char *name, long long w, long long h);
static long long lscat_tiles_elems(long long w, long long h);
static void lscat_tiles_show(FILE *f, const struct lscat_run &r);
static long long lscat_buffer_elems(long long w, long long h)
{
    if (lscat_bind == LSCAT_BIND_TILES)
        return lscat_tiles_elems(w, h);
    lscat_token_c = lscat_bind == LSCAT_BIND_TOKENS ? lscat_token_shape(w, h).c : 0;
    return lscat_bind == LSCAT_BIND_TOKENS ? lscat_token_elems(w, h) : w * h;
}

/* Dynamic shared memory a kernel of those dims asks for under tokens (0 otherwise): llm.c's
 * hosts size it by C, (2 + block_y) * C floats (layernorm_forward, fused_residual_forward)
 * or 2C + 2 * threads (+ f128 per thread) floats (layernorm_backward); this covers them with
 * (2 + threads/32) * C + 8 * threads + 64 floats, at most 40 KiB (room for static arrays). */
static size_t lscat_token_shmem(long long threads)
{
    long long n = ((2 + threads / 32) * lscat_token_c + 8 * threads + 64) * 4;
    return lscat_token_c <= 0 ? 0 : (size_t)(n < 40 * 1024 ? n : 40 * 1024);
}

static int lscat_has_scalar(const char *name)
{
    for (int i = 0; lscat_names[i]; i++)
        if (!strcmp(lscat_names[i], name))
            return 1;
    return 0;
}

/* The tokens binding's value of a scalar named `name`, or -1 when it does not name a dim:
 * B, T, C, NH as above, OC = C, V = Vp = P = 4C (a vocabulary wider than the model, a multiple
 * of 128 like llm.c's padded Vp), hs = HS = d = 64 (head size), N = B*T rows, except beside a
 * T where it is B*NH (attention's (N, T, T) scores). */
static double lscat_token_dim(const char *name, const lscat_run &r)
{
    if (!name)
        return -1.0;
    lscat_tokens d = lscat_token_shape(r.w, r.h);
    static const char *const vocab[] = { "V", "Vp", "P", nullptr },
                             *const hs[] = { "hs", "HS", "d", nullptr };
    for (int i = 0; vocab[i]; i++)
        if (!strcmp(name, vocab[i]))
            return (double)(4 * d.c);
    for (int i = 0; hs[i]; i++)
        if (!strcmp(name, hs[i]))
            return (double)d.hs;
    if (!strcmp(name, "B"))
        return (double)d.b;
    if (!strcmp(name, "T"))
        return (double)d.t;
    if (!strcmp(name, "C") || !strcmp(name, "OC"))
        return (double)d.c;
    if (!strcmp(name, "NH"))
        return (double)d.nh;
    if (!strcmp(name, "N"))
        return (double)(lscat_has_scalar("T") ? d.b * d.nh : d.b * d.t);
    return -1.0;
}

static double lscat_scalar(const char *role, const char *name, const lscat_run &r)
{
    double dim = lscat_bind == LSCAT_BIND_TOKENS ? lscat_token_dim(name, r) : -1.0;
    if (dim >= 0)
        return dim;
    if (lscat_bind == LSCAT_BIND_TILES)
        return lscat_tiles_scalar(role, name, r.w, r.h);
    if (!strcmp(role, "width") || !strcmp(role, "stride"))
        return (double)r.w;
    if (!strcmp(role, "height"))
        return (double)r.h;
    if (!strcmp(role, "size"))
        return lscat_bind == LSCAT_BIND_SIDE ? (double)(r.w < r.h ? r.w : r.h) : (double)(r.w * r.h);
    return 1.0; /* depth, scale, unknown */
}


/* A floating value of `size` bytes (float, double, long double) at `at`. */
static void lscat_put_float(unsigned char *at, size_t size, double v)
{
    if (size == sizeof(float)) {
        float x = (float)v;
        memcpy(at, &x, sizeof x);
    } else if (size == sizeof(double)) {
        memcpy(at, &v, sizeof v);
    } else {
        long double x = (long double)v;
        memset(at, 0, size);
        memcpy(at, &x, size < sizeof x ? size : sizeof x);
    }
}

/* A scalar argument's bytes for value v, as `(T)v` for a floating T and `(T)(long long)v`
 * for an integer, enum or bool T (isolate/harness_kernel.cu.in lscat_type_of: kind f, i, u, b). */
static void lscat_put_scalar(unsigned char *at, const lscat_argtype &t, double v)
{
    if (t.kind == 'f') {
        lscat_put_float(at, t.size, v);
    } else if (t.kind == 'b') {
        bool x = (long long)v != 0;
        memcpy(at, &x, sizeof x);
    } else {
        long long x = (long long)v; /* two's complement: (T)x keeps its low bytes */
        memset(at, t.kind == 'i' && x < 0 ? 0xff : 0, t.size);
        memcpy(at, &x, t.size < sizeof x ? t.size : sizeof x);
    }
}

/* What `(long long)(T)x` reads back from a scalar's bytes (--show-args). */
static long long lscat_get_integer(const unsigned char *at, const lscat_argtype &t)
{
    if (t.kind == 'b')
        return *(const bool *)at ? 1 : 0;
    unsigned long long u = 0;
    size_t n = t.size < sizeof u ? t.size : sizeof u;
    memcpy(&u, at, n);
    if (t.kind == 'i' && n < sizeof u && (u >> (8 * n - 1)) & 1)
        u |= ~0ULL << (8 * n); /* sign extension */
    return (long long)u;
}

/* Host contents of one buffer of n elements of `t`'s element (lscat_argtype's ekind, esize,
 * exsize): floats in [0,1), integers in [0, min(W,H)) so index arrays stay in range, integer
 * vector types (int2, int4, uint4, short2, ...) per component as integers (as floats their bits
 * read as counts near 1e9: a loop bound from `int4 info[b].y` never ends), anything else
 * (float2, float4, structs of floats) as floats over its bytes. */
static void lscat_fill(unsigned char *host, size_t n, char ekind, size_t esize, size_t exsize,
                       uint64_t seed, const lscat_run &r)
{
    uint64_t s = seed;
    long long range = r.w < r.h ? r.w : r.h;
    if (range < 1)
        range = 1;
    if (ekind == 'b') {
        for (size_t i = 0; i < n; i++)
            ((bool *)host)[i] = lscat_rng(&s) & 1;
    } else if (ekind == 'i') { /* (E)v: the low bytes of v, which is below 2^31 */
        for (size_t i = 0; i < n; i++) {
            uint64_t v = lscat_rng(&s) % (uint64_t)range;
            memset(host + i * esize, 0, esize);
            memcpy(host + i * esize, &v, esize < sizeof v ? esize : sizeof v);
        }
    } else if (ekind == 'f') {
        for (size_t i = 0; i < n; i++) {
            double v = (double)(lscat_rng(&s) & 0xffffff) / 16777216.0;
            lscat_put_float(host + i * esize, esize, v);
        }
    } else if (ekind == 'v' && exsize > 0) {
        for (size_t i = 0; i + exsize <= n * esize; i += exsize) {
            uint64_t v = lscat_rng(&s) % (uint64_t)range;
            memset(host + i, 0, exsize);
            memcpy(host + i, &v, exsize < sizeof v ? exsize : sizeof v);
        }
    } else {
        size_t bytes = n * esize;
        for (size_t i = 0; i + sizeof(float) <= bytes; i += sizeof(float)) {
            float v = (float)((double)(lscat_rng(&s) & 0xffffff) / 16777216.0);
            memcpy(host + i, &v, sizeof v);
        }
    }
}

/* Textures (docs/isolate.md "Textures"): a texture object parameter (lscat_texparams) or a
 * texture reference (execute's texture_object repair, isolate/compat/lscat_texref.h) reads
 * W x H elements (at least `elems`) of pitched memory filled like the other inputs, per
 * component: floats in [0,1), integers in [0, min(W,H)). Over it: `lin` as linear memory
 * (tex1Dfetch), `pitch` as pitched 2D (tex2D); `arr` is a 1D cudaArray of its first elements
 * (tex1D). Point filtering, clamped addresses, unnormalised coordinates. */

static void lscat_tex_fill(unsigned char *host, size_t n, const cudaChannelFormatDesc &d,
                           uint64_t seed, const lscat_run &r)
{
    const int bits[4] = { d.x, d.y, d.z, d.w };
    uint64_t s = seed;
    long long range = r.w < r.h ? r.w : r.h;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) {
            size_t b = bits[c] > 0 ? (size_t)bits[c] / 8 : 0;
            if (d.f == cudaChannelFormatKindFloat && b == 4) {
                float v = (float)((double)(lscat_rng(&s) & 0xffffff) / 16777216.0);
                memcpy(host, &v, 4);
            } else if (d.f == cudaChannelFormatKindFloat) {
                memset(host, 0, b); /* half: zeros */
            } else {
                unsigned long long v = lscat_rng(&s) % (uint64_t)(range > 0 ? range : 1);
                memcpy(host, &v, b < sizeof v ? b : sizeof v);
            }
            host += b;
        }
}

static cudaError_t lscat_tex_object(cudaTextureObject_t *o, const cudaResourceDesc &res,
                                    int normalized, lscat_run &r)
{
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = normalized ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaError_t e = cudaCreateTextureObject(o, &res, &td, nullptr);
    if (e == cudaSuccess)
        r.texs.push_back(*o);
    return e;
}

/* The objects `want` (LSCAT_TEX_* bits) names, over one filled allocation; those of `spare`
 * are made when they can be (a reference's pitch and array: its fetches are not known, and a
 * 1D configuration's width may exceed a pitched texture's), else left 0. */
cudaError_t lscat_tex_make(lscat_texobjs *o, const cudaChannelFormatDesc &d, int normalized,
                           int want, int spare, uint64_t seed, lscat_run &r)
{
    size_t eb = (size_t)(d.x + d.y + d.z + d.w) / 8, w = (size_t)(r.w > 0 ? r.w : 1);
    size_t h = (size_t)(r.h > 0 ? r.h : 1), need = (r.elems + w - 1) / w;
    size_t rows = h < need ? need : h;
    if (!eb)
        return cudaErrorInvalidChannelDescriptor; /* not a texture element type */
    size_t pitch = (w * eb + 511) / 512 * 512; /* within every device's pitch alignment */
    void *raw = nullptr;
    cudaError_t e = cudaMalloc(&raw, pitch * rows + 512);
    if (e != cudaSuccess)
        return e;
    r.ptrs.push_back(raw);
    unsigned char *mem = (unsigned char *)(((uintptr_t)raw + 511) & ~(uintptr_t)511);
    std::vector<unsigned char> host(w * rows * eb);
    lscat_tex_fill(host.data(), w * rows, d, seed, r);
    if ((e = cudaMemcpy2D(mem, pitch, host.data(), w * eb, w * eb, rows,
                          cudaMemcpyHostToDevice)) != cudaSuccess)
        return e;
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    if (want & LSCAT_TEX_LIN) {
        res.resType = cudaResourceTypeLinear;
        res.res.linear.devPtr = mem;
        res.res.linear.desc = d;
        res.res.linear.sizeInBytes = pitch * rows;
        if ((e = lscat_tex_object(&o->lin, res, normalized, r)) != cudaSuccess)
            return e;
    }
    if (want & LSCAT_TEX_PITCH) {
        memset(&res, 0, sizeof res);
        res.resType = cudaResourceTypePitch2D;
        res.res.pitch2D.devPtr = mem;
        res.res.pitch2D.desc = d;
        res.res.pitch2D.width = w;
        res.res.pitch2D.height = h;
        res.res.pitch2D.pitchInBytes = pitch;
        e = lscat_tex_object(&o->pitch, res, normalized, r);
        if (e != cudaSuccess && !(spare & LSCAT_TEX_PITCH))
            return e;
        if (e != cudaSuccess) /* a spare one: 0, and the error is not left for the launch */
            o->pitch = 0, (void)cudaGetLastError();
        e = cudaSuccess;
    }
    if (want & LSCAT_TEX_ARR) {
        size_t n = w * rows < (size_t)LSCAT_TEX_ARR_MAX ? w * rows : (size_t)LSCAT_TEX_ARR_MAX;
        cudaArray_t a = nullptr;
        if ((e = cudaMallocArray(&a, &d, n, 0)) == cudaSuccess) {
            r.arrays.push_back(a);
            e = cudaMemcpy2DToArray(a, 0, 0, host.data(), n * eb, n * eb, 1,
                                    cudaMemcpyHostToDevice);
        }
        memset(&res, 0, sizeof res);
        res.resType = cudaResourceTypeArray;
        res.res.array.array = a;
        if (e == cudaSuccess)
            e = lscat_tex_object(&o->arr, res, normalized, r);
        if (e != cudaSuccess && (spare & LSCAT_TEX_ARR)) {
            o->arr = 0;
            (void)cudaGetLastError();
            e = cudaSuccess;
        }
    }
    return e;
}

/* A texture object parameter's object, by the fetch the kernel makes through it. */
static cudaError_t lscat_tex_param(unsigned long long *out, const lscat_texparam &tp, int i,
                                   lscat_run &r)
{
    int want = tp.kind == 'p' ? LSCAT_TEX_PITCH : tp.kind == 'a' ? LSCAT_TEX_ARR : LSCAT_TEX_LIN;
    lscat_texobjs o{};
    uint64_t seed = 0x7e470000ULL + 7919ULL * (uint64_t)i;
    cudaError_t e = lscat_tex_make(&o, tp.desc, 0, want, 0, seed, r);
    *out = want == LSCAT_TEX_PITCH ? o.pitch : want == LSCAT_TEX_ARR ? o.arr : o.lin;
    return e;
}

static const lscat_texparam *lscat_texparam_of(int i)
{
    for (const lscat_texparam *t = lscat_texparams; t->param >= 0; t++)
        if (t->param == i)
            return t;
    return nullptr;
}


/* Pointers, arithmetic and enum parameters: an allocation or a value by role. */
/* The bytes of W*H elements of `size` bytes (under tiles the rounded sizes' elements; at most
 * the allocation). */
static size_t lscat_logical_bytes(const lscat_run &r, size_t size)
{
    size_t n = (size_t)(lscat_bind == LSCAT_BIND_TILES ? lscat_tiles_elems(r.w, r.h) : r.w * r.h);
    return (n < r.elems ? n : r.elems) * size;
}

/* Elements of a pointer parameter's buffer: `elems`, except that a pointee over 4 KiB (one object
 * with fixed arrays inside: `struct naiveStruct { float a[1 << 18], b[1 << 18]; } *res`) gets at
 * most 64 MiB of them, at least one: W x H + pad such objects were gigabytes, filled on the host
 * for seconds per size (issue #14, P9: sumArraysGPU). */
static size_t lscat_ptr_elems(const lscat_run &r, size_t size)
{
    const size_t big = 4096, cap = (size_t)64 << 20;
    if (size <= big || r.elems * size <= cap)
        return r.elems;
    return cap / size > 0 ? cap / size : 1;
}

/* Under --probe every pointer buffer is followed by a guard (lscat_guard). */
static int lscat_guarded = 0;

static cudaError_t lscat_alloc(void **d, size_t bytes, int param, lscat_run &r)
{
    cudaError_t e = cudaMalloc(d, bytes + (lscat_guarded ? LSCAT_GUARD_BYTES : 0));
    if (e != cudaSuccess || !lscat_guarded)
        return e;
    r.guards.push_back({ (unsigned char *)*d + bytes, param });
    return cudaMemset(r.guards.back().at, LSCAT_GUARD_BYTE, LSCAT_GUARD_BYTES);
}

/* After a clean launch: the first guard the kernel wrote (*param, and *off: its first changed
 * byte's distance past the buffer's end), filled again. 1 one was written, 0 none, -1 a CUDA
 * error. */
static int lscat_guard_hit(const lscat_run &r, int *param, size_t *off)
{
    std::vector<unsigned char> h(LSCAT_GUARD_BYTES);
    for (const lscat_guard &g : r.guards) {
        if (cudaMemcpy(h.data(), g.at, h.size(), cudaMemcpyDeviceToHost) != cudaSuccess)
            return -1;
        for (size_t k = 0; k < h.size(); k++)
            if (h[k] != LSCAT_GUARD_BYTE) {
                *param = g.param;
                *off = k;
                for (const lscat_guard &f : r.guards) /* the next configuration's check */
                    if (cudaMemset(f.at, LSCAT_GUARD_BYTE, LSCAT_GUARD_BYTES) != cudaSuccess)
                        return -1;
                return 1;
            }
    }
    return 0;
}

/* Struct arguments (isolate/members.c, docs/isolate.md "Struct arguments"): a pointer member
 * gets its own buffer of `elems` elements, filled as a pointer parameter's (one buffer shared
 * by every element of an array of such structs); an arithmetic member its role's value. */
static cudaError_t lscat_member_buffer(void **d, const lscat_member &m, int i, lscat_run &r)
{
    size_t eb = m.ebytes > 0 ? (size_t)m.ebytes : 1, bytes = r.elems * eb;
    std::vector<unsigned char> host(bytes);
    uint64_t seed = 0x5eed0000ULL + 7919ULL * (uint64_t)i + 104729ULL * (m.off + 1);
    int cmp = LSCAT_CMP_EXACT;
    if (!strcmp(m.role, "lock")) /* a mutex or lock word: 0 is unlocked, anything else spins */
        ;
    else if (m.ekind == 'f' && eb == 8)
        lscat_fill(host.data(), r.elems, 'f', 8, 0, seed, r), cmp = LSCAT_CMP_F64;
    else if (m.ekind == 'b' && eb == sizeof(bool))
        lscat_fill(host.data(), r.elems, 'b', 1, 0, seed, r);
    else if ((m.ekind == 's' || m.ekind == 'u') && eb == 1)
        lscat_fill(host.data(), r.elems, 'i', 1, 0, seed, r);
    else if ((m.ekind == 's' || m.ekind == 'u') && eb == 2)
        lscat_fill(host.data(), r.elems, 'i', 2, 0, seed, r);
    else if ((m.ekind == 's' || m.ekind == 'u') && eb == 4)
        lscat_fill(host.data(), r.elems, 'i', 4, 0, seed, r);
    else if ((m.ekind == 's' || m.ekind == 'u') && eb == 8)
        lscat_fill(host.data(), r.elems, 'i', 8, 0, seed, r);
    else /* float, float2, a struct of floats: floats over the bytes */
        lscat_fill(host.data(), bytes / sizeof(float), 'f', 4, 0, seed, r), cmp = LSCAT_CMP_F32;
    cudaError_t e = lscat_alloc(d, bytes, i, r);
    if (e != cudaSuccess)
        return e;
    r.ptrs.push_back(*d);
    if ((e = cudaMemcpy(*d, host.data(), bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
        return e;
    if (!m.cnst)
        r.bufs.push_back({ *d, nullptr, nullptr, bytes, cmp, i, lscat_logical_bytes(r, eb), {} });
    else
        r.inputs.push_back({ *d, nullptr, nullptr, bytes, LSCAT_CMP_EXACT, i, bytes, std::move(host) });
    return cudaSuccess;
}


static void lscat_member_value(unsigned char *at, const lscat_member &m, double v)
{
    lscat_argtype t{};
    t.size = (unsigned)m.bytes;
    if (m.kind == 'f')
        lscat_put_float(at, m.bytes == 8 ? 8 : 4, v);
    else if (m.kind == 'b' && m.bytes == sizeof(bool))
        t.kind = 'b', lscat_put_scalar(at, t, v != 0);
    else if (m.bytes == 1 || m.bytes == 2 || m.bytes == 4 || m.bytes == 8)
        t.kind = 'i', lscat_put_scalar(at, t, v);
}

/* Set parameter i's members in `count` records of `stride` bytes at `base` (deref 0: the
 * argument itself; 1: the elements of the array a pointer parameter points to, at device
 * address `dev`). A pointer to the record's own type (kind 'n', a list's `next`) points at the
 * following element of the same array, the last at itself, so a walk of any length stays in
 * the buffer. */
static cudaError_t lscat_set_members(unsigned char *base, size_t stride, size_t count, int i,
                                     int deref, lscat_run &r, void *dev)
{
    for (const lscat_member *m = lscat_members; m->param >= 0; m++) {
        if (m->param != i || m->deref != deref || m->off + (size_t)m->bytes > stride)
            continue;
        if (m->kind == 'n') {
            for (size_t k = 0; dev && k < count; k++) {
                void *next = (unsigned char *)dev + (k + 1 < count ? k + 1 : k) * stride;
                memcpy(base + k * stride + m->off, &next, sizeof next);
            }
            continue;
        }
        if (m->kind == 'p') {
            void *d = nullptr;
            cudaError_t e = lscat_member_buffer(&d, *m, i, r);
            if (e != cudaSuccess)
                return e;
            for (size_t k = 0; k < count; k++)
                memcpy(base + k * stride + m->off, &d, sizeof d);
            continue;
        }
        const char *leaf = strrchr(m->name, '.');
        double v = lscat_scalar(m->role, leaf ? leaf + 1 : m->name, r);
        for (size_t k = 0; k < count; k++)
            lscat_member_value(base + k * stride + m->off, *m, v);
    }
    return cudaSuccess;
}


/* A pointer parameter's buffer: an allocation of its elements (the fixed binding's own count,
 * else lscat_ptr_elems), filled, written to the argument's bytes. A pointer to pointers gets
 * one zeroed buffer of `elems` doubles that every entry points at. */
static cudaError_t lscat_make_pointer(unsigned char *raw, const lscat_argtype &t, int i,
                                      lscat_run &r)
{
    size_t es = t.esize;
    size_t fixed = lscat_fixed_elems(i, es); /* the fixed binding's own size */
    size_t ne = fixed ? fixed + (r.elems - (size_t)(r.w * r.h)) : lscat_ptr_elems(r, es);
    size_t bytes = ne * es;
    size_t logical = fixed ? fixed * es : lscat_logical_bytes(r, es);
    void *d = nullptr;
    cudaError_t e = lscat_alloc(&d, bytes, i, r);
    if (e != cudaSuccess)
        return e;
    r.ptrs.push_back(d);
    std::vector<unsigned char> host(bytes);
    if (t.ekind == 'p') {
        /* Pointer to pointers: every entry points at one zeroed buffer of `elems` doubles. */
        void *inner = nullptr;
        if ((e = lscat_alloc(&inner, r.elems * sizeof(double), i, r)) != cudaSuccess)
            return e;
        r.ptrs.push_back(inner);
        if ((e = cudaMemset(inner, 0, r.elems * sizeof(double))) != cudaSuccess)
            return e;
        r.bufs.push_back({ inner, nullptr, nullptr, r.elems * sizeof(double), LSCAT_CMP_F64, i,
                           lscat_logical_bytes(r, sizeof(double)), {} });
        for (size_t k = 0; k < r.elems; k++)
            memcpy(host.data() + k * sizeof(void *), &inner, sizeof inner);
    } else {
        lscat_fill(host.data(), ne, t.ekind, es, t.exsize, 0x5eed0000ULL + 7919ULL * (uint64_t)i, r);
        if (t.eclass)
            if ((e = lscat_set_members(host.data(), es, ne, i, 1, r, d)) != cudaSuccess)
                return e;
    }
    if ((e = cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
        return e;
    if (!t.econst)
        r.bufs.push_back({ d, nullptr, nullptr, bytes, t.ecmp, i,
                           logical < bytes ? logical : bytes, {} });
    else /* the output check tells out-of-bounds writes by it (lscat_copies_changed) */
        r.inputs.push_back({ d, nullptr, nullptr, bytes, LSCAT_CMP_EXACT, i, bytes,
                             std::move(host) });
    memcpy(raw, &d, sizeof d);
    return cudaSuccess;
}

/* Pointers, arithmetic and enum parameters: an allocation or a value by role; a function
 * pointer is null (no buffer of bytes is code: SobelShared tests NULL); an 8-byte integer
 * that the kernel fetches through (lscat_texparams) a texture object; a struct by value zero
 * bytes (no constructor runs) with its members set. */
static cudaError_t lscat_make(unsigned char *raw, const lscat_argtype &t, int i, lscat_run &r)
{
    memset(raw, 0, t.size);
    switch (t.kind) {
    case 'n':
        return cudaSuccess;
    case 'p':
        return lscat_make_pointer(raw, t, i, r);
    case 'f':
    case 'b':
        lscat_put_scalar(raw, t, lscat_scalar(lscat_roles[i], lscat_names[i], r));
        return cudaSuccess;
    case 'i':
    case 'u': {
        const lscat_texparam *tp = t.tex ? lscat_texparam_of(i) : nullptr;
        if (tp) { /* cudaTextureObject_t */
            unsigned long long obj = 0;
            cudaError_t e = lscat_tex_param(&obj, *tp, i, r);
            if (e != cudaSuccess)
                return e;
            memcpy(raw, &obj, sizeof obj);
        } else {
            lscat_put_scalar(raw, t, lscat_scalar(lscat_roles[i], lscat_names[i], r));
        }
        return cudaSuccess;
    }
    default: /* struct by value: zero bytes, no constructor, members */
        return lscat_set_members(raw, t.size, 1, i, 0, r, nullptr);
    }
}

/* A scalar whose role is `block` (block_size, TILE_WIDTH) takes the configuration's block x,
 * set before every configuration (and before the output check's reference runs). */
static void lscat_set_block(long long bx)
{
    void **argv = lscat_kernel.argv();
    for (int i = 0; i < lscat_kernel.nargs; i++) {
        const lscat_argtype &t = lscat_kernel.types[i];
        if ((t.kind == 'f' || t.kind == 'i' || t.kind == 'u' || t.kind == 'b') && lscat_roles[i] &&
            !strcmp(lscat_roles[i], "block"))
            lscat_put_scalar((unsigned char *)argv[i], t, (double)bx);
    }
}

static cudaError_t lscat_make_all(lscat_run &r)
{
    void **argv = lscat_kernel.argv();
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < lscat_kernel.nargs && e == cudaSuccess; i++)
        e = lscat_make((unsigned char *)argv[i], lscat_kernel.types[i], i, r);
    return e == cudaSuccess ? lscat_kernel.tex_refs(r) : e;
}

/* Every argument's bytes zero (a runner keeping the harness loaded runs it again). */
static void lscat_args_reset(void)
{
    void **argv = lscat_kernel.argv();
    for (int i = 0; i < lscat_kernel.nargs; i++)
        memset(argv[i], 0, lscat_kernel.types[i].size);
}

static void lscat_free_all(lscat_run &r)
{
    for (cudaTextureObject_t t : r.texs)
        cudaDestroyTextureObject(t);
    for (cudaArray_t a : r.arrays)
        cudaFreeArray(a);
    r.texs.clear();
    r.arrays.clear();
    for (void *p : r.ptrs)
        cudaFree(p);
    r.ptrs.clear();
    r.guards.clear();
    r.bufs.clear();
    r.inputs.clear();
}


struct lscat_launch_ctx {
    lscat_kfn_t fn;
    dim3 grid, block;
    size_t shmem;
    void **args; /* lscat_kernel.argv() */
};

static int lscat_launch(void *vctx, timing_stream_t s)
{
    lscat_launch_ctx *c = (lscat_launch_ctx *)vctx;
    cudaError_t e = cudaSuccess;
    if (lscat_cooperative) /* a grid-wide barrier: every block co-resident */
        e = cudaLaunchCooperativeKernel(c->fn, c->grid, c->block, c->args, c->shmem,
                                        (cudaStream_t)s);
    else
        e = cudaLaunchKernel(c->fn, c->grid, c->block, c->args, c->shmem, (cudaStream_t)s);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    return (int)e;
}

struct lscat_opts {
    const char *results = nullptr;
    int device = 0, probe = 0, occupancy = 0;
    int check = 1;                 /* --no-check: 0 */
    unsigned check_ref[3] = { 0, 0, 0 }; /* --check-ref BXxBYxBZ; 0 = lscat_ref_block */
    long long pad = 1024, show_w = 0, show_h = 0;
    timing_options t = TIMING_OPTIONS_INIT;
};

static int lscat_usage(const char *msg)
{
    fprintf(msg ? stderr : stdout, "%s%s%susage: harness [--results PATH] [--device N] "
            "[--warmup N] [--samples N] [--min-sample-ms X] [--target-rel-mad X] [--l2-flush] "
            "[--probe] [--occupancy] [--pad-elems N] [--bind area|side|tokens|tiles|fixed] "
            "[--no-check] "
            "[--check-ref BXxBYxBZ] [--show-args W H] "
            "< configurations (W H BX BY BZ)\n", msg ? "harness: " : "", msg ? msg : "",
            msg ? "\n" : "");
    if (!msg)
        fputs("--bind NAME: scalar values by role; area (default): size = W*H; side: size = "
              "min(W,H), a square matrix's side; tokens: as area, but scalars named like a "
              "transformer's dims get aligned values from W*H: B = 1, C = OC = 256, 512 or 768, "
              "NH = C/64, hs = HS = d = 64, T a multiple of 32, V = Vp = P = 4C, N = B*T (B*NH "
              "beside a T), the most work B*T*C whose B*T*4C, B*NH*T*T and C*C fit W*H (else "
              "C = 256, T = 32); every buffer holds the largest of W*H, B*T*4C, B*NH*T*T, C*C "
              "elements; tiles: the source's grid (params.json grid_expr) for the source's block "
              "only, side's values rounded up to the tiles that grid divides them by (each line's "
              "\"tiles\" says the sizes run). "
              "elements; fixed (kernels with hard-coded problem sizes, params.json \"fixed\"): "
              "each pointer gets the source's allocation (+ pad), the grid is the source's "
              "(constant or N x multiProcessorCount), scalars as area, and the output check "
              "compares whole buffers. "
              "width = W, height = H, stride = W, others 1.\n"
              "--show-args W H: print the arguments for W x H as JSON and exit (no GPU used).\n"
              "Output check: per size a reference block (--check-ref; default 256x1x1 for 1D "
              "kernels, 16x16x1 for 2D) runs twice on the size's inputs; every timed "
              "configuration then runs once more on the same inputs, outside the timed region, "
              "and its written buffers (their first W*H elements, not the pad) are compared with "
              "the reference's (exact for integers; "
              "floats within 1e-3 relative + 1e-5 absolute, doubles 1e-9 + 1e-12): \"check\" is "
              "match, mismatch, nondeterministic or not_checked. A reference that differs "
              "between its own two runs or writes nothing gives way to the next candidate shape "
              "(1D 256, 128, 512, 64, 1024, 32; 2D 16, 8, 32, 24 square). --no-check turns it "
              "off.\n"
              "Exit status: 0 all lines written, 2 bad command line or configuration, 3 no "
              "device, 4 sticky CUDA error.\n", stdout);
    return 2;
}

static int lscat_parse(lscat_opts &o, int argc, char **argv)
{
    lscat_bind = 0; /* a runner keeping the harness loaded (--keep-loaded) runs it again */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!strcmp(a, "--l2-flush")) { o.t.l2_flush = 1; continue; }
        if (!strcmp(a, "--probe")) { o.probe = 1; continue; }
        if (!strcmp(a, "--occupancy")) { o.occupancy = 1; continue; }
        if (!strcmp(a, "--no-check")) { o.check = 0; continue; }
        if (!strcmp(a, "--help")) { lscat_usage(nullptr); return 1; }
        if (!v)
            return lscat_usage("unknown option or missing value");
        char *end = nullptr;
        i++;
        if (!strcmp(a, "--bind")) {
            for (lscat_bind = 0; lscat_bindings[lscat_bind]; lscat_bind++)
                if (!strcmp(v, lscat_bindings[lscat_bind]))
                    break;
            if (!lscat_bindings[lscat_bind])
                return lscat_usage("unknown --bind (area, side, tokens, fixed)");
            if (lscat_bind == LSCAT_BIND_FIXED && !lscat_fixed_size[0])
                return lscat_usage("--bind fixed: isolate found no fixed problem size for this "
                                   "kernel (params.json has no \"fixed\")");
            continue;
        }
        if (!strcmp(a, "--check-ref")) {
            unsigned x = 0, y = 1, z = 1;
            int got = sscanf(v, "%ux%ux%u", &x, &y, &z);
            if (got < 1 || x < 1 || y < 1 || z < 1)
                return lscat_usage("--check-ref needs a block shape BX[xBY[xBZ]]");
            o.check_ref[0] = x, o.check_ref[1] = y, o.check_ref[2] = z;
            continue;
        }
        if (!strcmp(a, "--show-args") && i + 1 < argc) {
            o.show_w = strtoll(v, &end, 10);
            if (!*end)
                o.show_h = strtoll(argv[++i], &end, 10);
            if (*end || o.show_w < 1 || o.show_h < 1)
                return lscat_usage("--show-args needs two positive sizes W H");
            continue;
        }
        if (!strcmp(a, "--results")) o.results = v;
        else if (!strcmp(a, "--device")) o.device = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--warmup")) o.t.warmup = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--samples")) o.t.samples = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--min-sample-ms")) o.t.min_sample_ms = strtod(v, &end);
        else if (!strcmp(a, "--target-rel-mad")) o.t.target_rel_mad = strtod(v, &end);
        else if (!strcmp(a, "--pad-elems")) o.pad = strtoll(v, &end, 10);
        else return lscat_usage("unknown option");
        if (end && *end)
            return lscat_usage("bad number");
    }
    return 0;
}

static void lscat_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}


/* --show-args: each parameter's role and value for W x H under the binding, with no CUDA call
 * (so it runs without a GPU): pointers show their element count, structs their zero bytes. */
static void lscat_show(FILE *f, int i, const lscat_argtype &t, const lscat_run &r)
{
    fputs(i ? ",{\"role\":" : "{\"role\":", f);
    lscat_json_str(f, lscat_roles[i] ? lscat_roles[i] : "unknown");
    if (t.kind == 'p') {
        size_t fixed = lscat_fixed_elems(i, t.esize); /* the fixed binding: the source's count */
        fprintf(f, ",\"elems\":%zu}", fixed ? fixed + (r.elems - (size_t)(r.w * r.h))
                                            : lscat_ptr_elems(r, t.esize));
    } else if (t.kind == 'n') {
        fprintf(f, ",\"elems\":%zu}", r.elems);
    } else if (t.kind == 'f' || t.kind == 'i' || t.kind == 'u' || t.kind == 'b') {
        unsigned char v[32] = { 0 };
        lscat_argtype s = t;
        s.size = t.size < sizeof v ? t.size : (unsigned)sizeof v;
        lscat_put_scalar(v, s, lscat_scalar(lscat_roles[i], lscat_names[i], r));
        if (t.kind == 'f') {
            float x4;
            double x8;
            long double xl;
            double d = s.size == sizeof(float) ? (memcpy(&x4, v, sizeof x4), (double)x4)
                       : s.size == sizeof(double) ? (memcpy(&x8, v, sizeof x8), x8)
                                                  : (memcpy(&xl, v, sizeof xl), (double)xl);
            fprintf(f, ",\"value\":%.17g}", d);
        } else {
            fprintf(f, ",\"value\":%lld}", lscat_get_integer(v, s));
        }
    } else {
        fprintf(f, ",\"zero_bytes\":%u}", t.size);
    }
}

static int lscat_show_args(const lscat_opts &o)
{
    size_t elems = (size_t)(lscat_buffer_elems(o.show_w, o.show_h) + (o.pad > 0 ? o.pad : 0));
    lscat_run r = { o.show_w, o.show_h, elems, {}, {}, {} };
    fputs("{\"kernel\":", stdout);
    lscat_json_str(stdout, lscat_kernel.name);
    printf(",\"binding\":\"%s\",\"w\":%lld,\"h\":%lld,\"args\":[", lscat_bindings[lscat_bind],
           o.show_w, o.show_h);
    for (int i = 0; i < lscat_kernel.nargs; i++)
        lscat_show(stdout, i, lscat_kernel.types[i], r);
    fputs("]", stdout);
    lscat_tiles_show(stdout, r);
    puts("}");
    return 0;
}

static int lscat_sticky(cudaError_t e)
{
    return !(e == cudaErrorInvalidConfiguration || e == cudaErrorLaunchOutOfResources ||
             e == cudaErrorInvalidValue || e == cudaErrorMemoryAllocation ||
             e == cudaErrorInvalidDeviceFunction || e == cudaErrorNoKernelImageForDevice ||
             e == cudaErrorSharedObjectInitFailed || e == cudaErrorInvalidKernelImage);
}



// ---- lscat harness, the tiles binding (isolate/harness_tiles.cu.in): the same for every kernel
// A kernel whose source computes its grid from its own sizes (lscat_src_grid, params.json
// "grid_expr") runs under --bind tiles with that grid for the source's block and with its sizes
// rounded up to the tiles the grid divides them by (lscat_tile_align; docs/isolate.md "Aligned
// sizes"); other blocks are not run under it.

static int lscat_param_index(const char *name)
{
    for (int i = 0; name && lscat_names[i]; i++)
        if (!strcmp(lscat_names[i], name))
            return i;
    return -1;
}

/* A scalar's value under tiles: side's (width W, height H, stride W, size min(W, H); a
 * parameter the grid divides, whatever its role, min(W, H)) rounded up to its tile. */
static double lscat_tiles_scalar(const char *role, const char *name, long long w, long long h)
{
    int i = lscat_param_index(name);
    long long a = i >= 0 ? lscat_tile_align[i] : 0, m = w < h ? w : h, v;
    if (!strcmp(role, "width") || !strcmp(role, "stride"))
        v = w;
    else if (!strcmp(role, "height"))
        v = h;
    else if (!strcmp(role, "size") || a > 0)
        v = m;
    else
        return 1.0;
    return a > 0 ? (double)(v > 0 ? (v + a - 1) / a * a : a) : (double)v;
}

/* Elements per buffer under tiles: W*H, or the product of the two largest rounded sizes where
 * more (a GEMM's K x N operand at the rounded sizes; one rounded size: its square). */
static long long lscat_tiles_elems(long long w, long long h)
{
    long long a = 0, b = 0;
    for (int i = 0; lscat_names[i]; i++) {
        if (lscat_tile_align[i] <= 0)
            continue;
        long long v = (long long)lscat_tiles_scalar(lscat_roles[i], lscat_names[i], w, h);
        if (v > a)
            b = a, a = v;
        else if (v > b)
            b = v;
    }
    long long n = a * (b > 0 ? b : a);
    return n > w * h ? n : w * h;
}

/* `,"tiles":{"M":256,...}`: the sizes a tiles line ran (its w and h are the configuration's). */
static void lscat_tiles_note(FILE *f, long long w, long long h)
{
    if (lscat_bind != LSCAT_BIND_TILES)
        return;
    fputs(",\"tiles\":{", f);
    for (int i = 0, n = 0; lscat_names[i]; i++)
        if (lscat_tile_align[i] > 0)
            fprintf(f, "%s\"%s\":%lld", n++ ? "," : "", lscat_names[i],
                    (long long)lscat_tiles_scalar(lscat_roles[i], lscat_names[i], w, h));
    fputc('}', f);
}

/* The small language of lscat_src_grid: integers, names of the kernel's parameters, + - * / %,
 * parentheses, cdiv(a,b), min(a,b), max(a,b). */
struct lscat_ex {
    const char *p;
    long long w, h, bx;
    int bad;
};

static long long lscat_ex_sum(lscat_ex &x);

static long long lscat_ex_name(lscat_ex &x, const char *s, size_t n)
{
    char name[64];
    if (n >= sizeof name)
        return x.bad = 1, 0;
    memcpy(name, s, n);
    name[n] = '\0';
    int i = lscat_param_index(name);
    if (i < 0)
        return x.bad = 1, 0;
    if (!strcmp(lscat_roles[i], "block"))
        return x.bx;
    return (long long)lscat_tiles_scalar(lscat_roles[i], name, x.w, x.h);
}

static long long lscat_ex_call(lscat_ex &x, const char *s, size_t n)
{
    x.p++; /* ( */
    long long a = lscat_ex_sum(x);
    while (*x.p == ' ')
        x.p++;
    if (*x.p++ != ',')
        return x.bad = 1, 0;
    long long b = lscat_ex_sum(x);
    while (*x.p == ' ')
        x.p++;
    if (*x.p++ != ')')
        return x.bad = 1, 0;
    if (n == 4 && !strncmp(s, "cdiv", 4))
        return b > 0 ? (a + b - 1) / b : (x.bad = 1, 0);
    if (n == 3 && !strncmp(s, "min", 3))
        return a < b ? a : b;
    if (n == 3 && !strncmp(s, "max", 3))
        return a > b ? a : b;
    return x.bad = 1, 0;
}

static long long lscat_ex_atom(lscat_ex &x)
{
    while (*x.p == ' ')
        x.p++;
    if (*x.p == '(') {
        x.p++;
        long long v = lscat_ex_sum(x);
        while (*x.p == ' ')
            x.p++;
        if (*x.p++ != ')')
            x.bad = 1;
        return v;
    }
    if (*x.p >= '0' && *x.p <= '9') {
        char *end;
        long long v = strtoll(x.p, &end, 10);
        x.p = end;
        return v;
    }
    const char *s = x.p;
    while ((*x.p >= 'a' && *x.p <= 'z') || (*x.p >= 'A' && *x.p <= 'Z') || *x.p == '_' ||
           (x.p > s && *x.p >= '0' && *x.p <= '9'))
        x.p++;
    if (x.p == s)
        return x.bad = 1, 0;
    return *x.p == '(' ? lscat_ex_call(x, s, (size_t)(x.p - s))
                       : lscat_ex_name(x, s, (size_t)(x.p - s));
}

static long long lscat_ex_prod(lscat_ex &x)
{
    long long v = lscat_ex_atom(x);
    for (;;) {
        while (*x.p == ' ')
            x.p++;
        char op = *x.p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        x.p++;
        long long r = lscat_ex_atom(x);
        if (op != '*' && r == 0)
            return x.bad = 1, 0;
        v = op == '*' ? v * r : op == '/' ? v / r : v % r;
    }
}

static long long lscat_ex_sum(lscat_ex &x)
{
    long long v = lscat_ex_prod(x);
    for (;;) {
        while (*x.p == ' ')
            x.p++;
        char op = *x.p;
        if (op != '+' && op != '-')
            return v;
        x.p++;
        long long r = lscat_ex_prod(x);
        v = op == '+' ? v + r : v - r;
    }
}

/* Whether block b runs under tiles: the source's own block, with a grid expression. */
static int lscat_tiles_block(dim3 b)
{
    return lscat_src_grid[0] && b.x == lscat_src_block[0] && b.y == lscat_src_block[1] &&
           b.z == lscat_src_block[2];
}

/* The source's grid for W x H under tiles (1 and *g; clamped to the device's maximum, *clamped
 * says so); 0 when not the tiles binding, not the source's block, or an expression fails. */
static int lscat_tiles_grid(dim3 *g, const cudaDeviceProp &prop, long long w, long long h, dim3 b,
                            int *clamped)
{
    long long v[3];
    if (lscat_bind != LSCAT_BIND_TILES || !lscat_tiles_block(b))
        return 0;
    for (int i = 0; i < 3; i++) {
        lscat_ex x = { lscat_src_grid[i], w, h, (long long)b.x, 0 };
        v[i] = lscat_ex_sum(x);
        while (*x.p == ' ')
            x.p++;
        if (x.bad || *x.p || v[i] < 1)
            return 0;
        if (v[i] > prop.maxGridSize[i])
            v[i] = prop.maxGridSize[i], *clamped = 1;
    }
    *g = dim3((unsigned)v[0], (unsigned)v[1], (unsigned)v[2]);
    return 1;
}

/* --show-args under tiles: `,"grid":[x,y,z]`, the source's block's grid (no device: not
 * clamped), or `,"grid":null` where an expression fails. */
static void lscat_tiles_show(FILE *f, const lscat_run &r)
{
    cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    prop.maxGridSize[0] = prop.maxGridSize[1] = prop.maxGridSize[2] = 0x7fffffff;
    dim3 g, b(lscat_src_block[0], lscat_src_block[1], lscat_src_block[2]);
    int clamped = 0;
    if (lscat_bind != LSCAT_BIND_TILES)
        return;
    if (lscat_tiles_grid(&g, prop, r.w, r.h, b, &clamped))
        fprintf(f, ",\"grid\":[%u,%u,%u]", g.x, g.y, g.z);
    else
        fputs(",\"grid\":null", f);
}

// ---- lscat harness, output check (isolate/harness_check.cu.in): the same for every kernel ----
/* ---- the output check (docs/isolate.md "Output check") ----
 * Per matrix size the reference block runs twice on the size's initial inputs; each timed
 * configuration then runs once more on the same inputs, outside the timed region, and every
 * written buffer is compared with the reference's on the GPU: exact for integers and other
 * types, floats within LSCAT_F32_RTOL * max(|a|, |b|) + LSCAT_F32_ATOL (doubles: _F64_), which
 * accepts a reassociated sum but not a missing row or a missing block of work. A reference
 * that differs between its own two runs, or writes nothing, gives way to the next candidate
 * shape (a kernel with a hard-coded 8x8 tile races under 16x16 but not under 8x8); host copies
 * of the check's inputs and reference tell a kernel writing outside its buffers from a
 * nondeterministic one. */
#define LSCAT_F32_RTOL 1e-3f
#define LSCAT_F32_ATOL 1e-5f
#define LSCAT_F64_RTOL 1e-9
#define LSCAT_F64_ATOL 1e-12

struct lscat_cmp_count {
    unsigned long long differ, beyond, first; /* elements not bit-identical; beyond tolerance */
    /* with the initial contents p (a config against the reference): elements only one of the
     * two changed, elements both changed, and how many of the `beyond` were only-one */
    unsigned long long only, both, beyond_only, wrote; /* wrote: elements a changed */
};

__device__ inline bool lscat_same(unsigned char x, unsigned char y) { return x == y; }
__device__ inline bool lscat_same(float x, float y) { return __float_as_uint(x) == __float_as_uint(y); }
__device__ inline bool lscat_same(double x, double y)
{
    return __double_as_longlong(x) == __double_as_longlong(y);
}
__device__ inline bool lscat_close(unsigned char, unsigned char) { return false; }
template <typename F> __device__ inline bool lscat_close_f(F x, F y, F rtol, F atol)
{
    if (x != x || y != y)
        return x != x && y != y; /* NaN matches NaN only */
    if (x == y)
        return true;             /* +0 and -0; the same infinity */
    F d = x > y ? x - y : y - x; /* an infinity against a number: inf, never close */
    F m = (x < 0 ? -x : x) > (y < 0 ? -y : y) ? (x < 0 ? -x : x) : (y < 0 ? -y : y);
    return d <= rtol * m + atol;
}
__device__ inline bool lscat_close(float x, float y)
{
    return lscat_close_f<float>(x, y, LSCAT_F32_RTOL, LSCAT_F32_ATOL);
}
__device__ inline bool lscat_close(double x, double y)
{
    return lscat_close_f<double>(x, y, LSCAT_F64_RTOL, LSCAT_F64_ATOL);
}

/* p (may be null): the initial contents, to tell which elements each of a and b wrote
 * (changed; an element written with its initial value counts as not written). */
template <typename F>
__global__ void lscat_cmp_kernel(const F *a, const F *b, const F *p, size_t n, int exact,
                                 lscat_cmp_count *out)
{
    unsigned long long differ = 0, beyond = 0, first = ~0ULL, only = 0, both = 0, bonly = 0,
                       wrote = 0;
    size_t step = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        F x = a[i], y = b[i];
        bool wa = p && !lscat_same(x, p[i]), wb = p && !lscat_same(y, p[i]);
        only += wa != wb;
        both += wa && wb;
        wrote += wa;
        if (lscat_same(x, y))
            continue;
        differ++;
        if (exact || !lscat_close(x, y)) {
            beyond++;
            bonly += wa != wb;
            first = i < first ? i : first;
        }
    }
    if (differ)
        atomicAdd(&out->differ, differ);
    if (only)
        atomicAdd(&out->only, only);
    if (both)
        atomicAdd(&out->both, both);
    if (wrote)
        atomicAdd(&out->wrote, wrote);
    if (beyond) {
        atomicAdd(&out->beyond, beyond);
        atomicAdd(&out->beyond_only, bonly);
        atomicMin(&out->first, first);
    }
}

struct lscat_check {
    int state = 0;          /* at this size: 0 not prepared, 1 ready, 2 unavailable (why) */
    int nondet = 0;         /* the reference's two runs: 0 identical, 1 within tolerance, 2 not */
    char why[400] = "";
    char note[160] = "";    /* why the reference is not the first candidate shape */
    long long ref_ns = -1;  /* the reference's cost, reported on the line that ran it */
    dim3 block;
    lscat_cmp_count *dev = nullptr;
};

static long long lscat_now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Compare a with b (bytes long, elements of kind cmp; exact: bits only; p: the initial
 * contents or null) into *res. */
static cudaError_t lscat_compare(lscat_cmp_count *res, lscat_check &c, const void *a,
                                 const void *b, const void *p, size_t bytes, int cmp, int exact)
{
    cudaError_t e = cudaSuccess;
    if (!c.dev && (e = cudaMalloc(&c.dev, sizeof(lscat_cmp_count))) != cudaSuccess)
        return e;
    lscat_cmp_count init = { 0, 0, ~0ULL, 0, 0, 0, 0 };
    if ((e = cudaMemcpy(c.dev, &init, sizeof init, cudaMemcpyHostToDevice)) != cudaSuccess)
        return e;
    size_t n = cmp == LSCAT_CMP_F32 ? bytes / 4 : cmp == LSCAT_CMP_F64 ? bytes / 8 : bytes;
    unsigned blocks = (unsigned)((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024);
    blocks = blocks ? blocks : 1;
    if (cmp == LSCAT_CMP_F32)
        lscat_cmp_kernel<float><<<blocks, 256>>>((const float *)a, (const float *)b,
                                                 (const float *)p, n, exact, c.dev);
    else if (cmp == LSCAT_CMP_F64)
        lscat_cmp_kernel<double><<<blocks, 256>>>((const double *)a, (const double *)b,
                                                  (const double *)p, n, exact, c.dev);
    else
        lscat_cmp_kernel<unsigned char><<<blocks, 256>>>((const unsigned char *)a,
                                                         (const unsigned char *)b,
                                                         (const unsigned char *)p, n, 1, c.dev);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    return cudaMemcpy(res, c.dev, sizeof *res, cudaMemcpyDeviceToHost);
}

/* One launch on the size's initial inputs (every written buffer restored first), synchronised. */
static cudaError_t lscat_run_once(lscat_launch_ctx &ctx, lscat_run &r)
{
    cudaError_t e = cudaSuccess;
    for (const lscat_buf &b : r.bufs)
        if ((e = cudaMemcpy(b.d, b.pristine, b.bytes, cudaMemcpyDeviceToDevice)) != cudaSuccess)
            return e;
    int err = lscat_launch(&ctx, nullptr);
    if (err)
        return (cudaError_t)err;
    return cudaDeviceSynchronize();
}

/* The name of parameter i (lscat_names may be shorter: "?"). */
static const char *lscat_param_name(int i)
{
    for (int k = 0; k <= i; k++)
        if (!lscat_names[k])
            return "?";
    return lscat_names[i];
}

/* "buffer 'y' (parameter 3): 57600 of 57600 elements differ beyond tolerance, first at 240"
 * (bytes: the compared size, b.cmp_bytes) */
static void lscat_describe(char *out, size_t size, const lscat_buf &b, size_t bytes,
                           const lscat_cmp_count &c, const char *what)
{
    size_t n = b.cmp == LSCAT_CMP_F32 ? bytes / 4 : b.cmp == LSCAT_CMP_F64 ? bytes / 8 : bytes;
    int w = snprintf(out, size, "buffer '%s' (parameter %d): %llu of %zu %s %s",
                     lscat_param_name(b.param), b.param + 1,
                     b.cmp == LSCAT_CMP_EXACT ? c.differ : c.beyond, n,
                     b.cmp == LSCAT_CMP_EXACT ? "bytes" : "elements", what);
    if (c.first != ~0ULL && w > 0 && (size_t)w < size)
        snprintf(out + w, size - (size_t)w, ", first at %llu", c.first);
}

/* The reference candidates, best first (returns how many, at most 8): --check-ref alone when
 * given; else lscat_ref_block, then the usual shapes of the same dimensionality (256, 128,
 * 512, 64, 1024, 32 wide; 16, 8, 32, 24 square), each instantiated and within the device's
 * limit. A block-template kernel without lscat_ref_block's instantiation starts elsewhere. */
static int lscat_ref_candidates(dim3 out[8], const unsigned want[3], const cudaDeviceProp &prop)
{
    if (want[0]) {
        out[0] = dim3(want[0], want[1], want[2]);
        return 1;
    }
    static const unsigned alt1d[] = { 256, 128, 512, 64, 1024, 32 }, alt2d[] = { 16, 8, 32, 24 };
    dim3 first(lscat_ref_block[0], lscat_ref_block[1], lscat_ref_block[2]);
    int two_d = first.y > 1, n = 0;
    const unsigned *alt = two_d ? alt2d : alt1d;
    for (int i = -1; i < (two_d ? 4 : 6) && n < 8; i++) {
        dim3 b = i < 0 ? first : two_d ? dim3(alt[i], alt[i], 1) : dim3(alt[i], 1, 1);
        long long threads = (long long)b.x * b.y * b.z;
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= out[k].x == b.x && out[k].y == b.y && out[k].z == b.z;
        if (!dup && lscat_pick((int)b.x) && threads <= prop.maxThreadsPerBlock)
            out[n++] = b;
    }
    if (!n) /* nothing can run: the first, so the check says which shape failed */
        out[n++] = first;
    return n;
}

/* Dynamic shared memory for block b: threads x 16 bytes up to 48 KiB for a kernel with an
 * `extern __shared__` array, under tokens at least what its C asks for (lscat_token_shmem);
 * with the source's own block, the source's bytes where they are
 * more (lscat_src_smem, docs/isolate.md "Harness rules"). Above 48 KiB the kernel is opted in
 * first (cudaFuncAttributeMaxDynamicSharedMemorySize), as its source does. */
static size_t lscat_shmem(lscat_kfn_t fn, dim3 b)
{
    long long threads = (long long)b.x * b.y * b.z;
    size_t n = lscat_dynshared ? (size_t)(threads * 16 < 48 * 1024 ? threads * 16 : 48 * 1024) : 0;
    size_t t = lscat_dynshared ? lscat_token_shmem(threads) : 0; /* tokens: sized by C */
    n = t > n ? t : n;
    if (lscat_src_smem >= 0 && b.x == lscat_src_block[0] && b.y == lscat_src_block[1] &&
        b.z == lscat_src_block[2] && (size_t)lscat_src_smem > n)
        n = (size_t)lscat_src_smem;
    if (fn && n > 48 * 1024 && cudaFuncSetAttribute((const void *)fn,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    (int)n) != cudaSuccess)
        cudaGetLastError(); /* the launch says it: invalid argument */
    return n;
}

/* The grid for a block shape (docs/isolate.md "Grid"; under the fixed binding the source's):
 * a kernel indexing y (lscat_grid2d)
 * gets (ceil(W/BX), ceil(H/BY)) for every shape, (BX, 1) rows included, so it covers W x H;
 * a 1D kernel gets (ceil(W*H/BX), 1) for 1D blocks and, under a 2D block, the same 2D grid
 * (the output check then says whether that shape did the kernel's work). Under tiles the
 * source's block gets the source's grid (lscat_tiles_grid). */
static dim3 lscat_grid(const cudaDeviceProp &prop, long long w, long long h, dim3 b, int *clamped)
{
    *clamped = 0;
    if (lscat_bind == LSCAT_BIND_FIXED) /* the source's grid: constant, or N x the SM count */
        return lscat_fixed_grid[3] ? dim3(lscat_fixed_grid[3] * (unsigned)prop.multiProcessorCount)
                                   : dim3(lscat_fixed_grid[0], lscat_fixed_grid[1],
                                          lscat_fixed_grid[2]);
    long long bx = b.x > 0 ? b.x : 1, by = b.y > 0 ? b.y : 1;
    int two_d = lscat_grid2d || b.y > 1;
    dim3 src;
    *clamped = 0;
    if (lscat_tiles_grid(&src, prop, w, h, b, clamped))
        return src;
    long long gx = two_d ? (w + bx - 1) / bx : (w * h + bx - 1) / bx;
    long long gy = two_d ? (h + by - 1) / by : 1;
    *clamped = 0;
    if (gx > prop.maxGridSize[0]) gx = prop.maxGridSize[0], *clamped = 1;
    if (gy > prop.maxGridSize[1]) gy = prop.maxGridSize[1], *clamped = 1;
    return dim3((unsigned)(gx > 0 ? gx : 0), (unsigned)(gy > 0 ? gy : 0), 1);
}

/* A cooperative kernel's grid cut to the blocks that can be co-resident with this block and
 * dynamic shared memory (occupancy per SM x SMs), as cudaLaunchCooperativeKernel requires: y
 * first, then x. Returns 1 when it was cut. No-op for other kernels, and when the occupancy
 * is unknown or 0 (the launch then says why: cooperative launch too large, invalid argument). */
static int lscat_coop_cap(dim3 *g, const cudaDeviceProp &prop, lscat_kfn_t fn, dim3 b, size_t smem)
{
    int per_sm = 0;
    if (!lscat_cooperative || !fn)
        return 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)fn,
                                                      (int)(b.x * b.y * b.z), smem) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    long long max = (long long)per_sm * prop.multiProcessorCount;
    if (max < 1 || (long long)g->x * g->y * g->z <= max)
        return 0;
    g->z = 1;
    if ((long long)g->x > max)
        g->x = (unsigned)max;
    g->y = (unsigned)(max / g->x < g->y ? max / g->x : g->y);
    return 1;
}

/* Device memory against its host copy (bytes long at dev and at host): 0 the same, 1 not (the
 * host copy is written back), -1 a CUDA error. */
static int lscat_changed(void *dev, const unsigned char *host, size_t bytes,
                         std::vector<unsigned char> &tmp)
{
    tmp.resize(bytes);
    if (cudaMemcpy(tmp.data(), dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    if (memcmp(tmp.data(), host, bytes) == 0)
        return 0;
    return cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? 1 : -1;
}

/* Memory the kernel must not change, against its host copies: the check's copies (pristine,
 * ref) of every written buffer and the read-only inputs. 0 intact, 1 some changed (*which: the
 * first such buffer; all are restored), -1 a CUDA error. */
static int lscat_copies_changed(lscat_run &r, const lscat_buf **which)
{
    std::vector<unsigned char> tmp;
    *which = nullptr;
    for (int input = 0; input < 2; input++)
        for (const lscat_buf &b : input ? r.inputs : r.bufs) {
            const unsigned char *h = b.host.data();
            int p = lscat_changed(input ? b.d : b.pristine, h, b.bytes, tmp);
            int q = input || p < 0 ? 0 : lscat_changed(b.ref, h + b.bytes, b.bytes, tmp);
            if (p < 0 || q < 0)
                return -1;
            if ((p || q) && !*which)
                *which = &b;
        }
    return *which ? 1 : 0;
}

/* The device and host copies of every written buffer's initial contents (once per size). */
static cudaError_t lscat_check_copies(lscat_check &c, lscat_run &r)
{
    cudaError_t e = cudaSuccess;
    for (lscat_buf &b : r.bufs) {
        if ((e = cudaMalloc(&b.pristine, b.bytes)) == cudaSuccess)
            r.ptrs.push_back(b.pristine);
        if (e == cudaSuccess && (e = cudaMalloc(&b.ref, b.bytes)) == cudaSuccess)
            r.ptrs.push_back(b.ref);
        if (e == cudaSuccess)
            e = cudaMemcpy(b.pristine, b.d, b.bytes, cudaMemcpyDeviceToDevice);
        b.host.resize(2 * b.bytes);
        if (e == cudaSuccess)
            e = cudaMemcpy(b.host.data(), b.d, b.bytes, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            snprintf(c.why, sizeof c.why, "cannot keep the check's copies of the buffers at "
                     "%lldx%lld: %s", r.w, r.h, cudaGetErrorString(e));
            return e;
        }
    }
    return cudaSuccess;
}

/* One reference candidate c.block: run it twice on the initial inputs. Sets c.state (1 ready,
 * 2 with c.why) and c.nondet; *oob: the kernel wrote over the check's own copies. Returns a
 * failed run's CUDA error (c.why says which), else cudaSuccess. */
static cudaError_t lscat_ref_try(lscat_check &c, lscat_run &r, const cudaDeviceProp &prop,
                                 int *oob)
{
    cudaError_t e = cudaSuccess;
    long long threads = (long long)c.block.x * c.block.y * c.block.z;
    int clamped = 0, written = 0;
    lscat_kfn_t fn = lscat_pick((int)c.block.x);
    lscat_launch_ctx ctx = { fn, lscat_grid(prop, r.w, r.h, c.block, &clamped), c.block,
                             lscat_shmem(fn, c.block), lscat_kernel.argv() };
    lscat_coop_cap(&ctx.grid, prop, fn, c.block, ctx.shmem);
    c.state = 2, c.nondet = 0, *oob = 0;
    if (!ctx.fn || threads > prop.maxThreadsPerBlock) {
        snprintf(c.why, sizeof c.why, "the reference block %ux%ux%u cannot run (no "
                 "instantiation, or over maxThreadsPerBlock)", c.block.x, c.block.y, c.block.z);
        return cudaSuccess;
    }
    lscat_set_block(c.block.x);
    if ((e = lscat_run_once(ctx, r)) != cudaSuccess) {
        snprintf(c.why, sizeof c.why, "the reference block %ux%ux%u failed at %lldx%lld: %s",
                 c.block.x, c.block.y, c.block.z, r.w, r.h, cudaGetErrorString(e));
        return e;
    }
    for (lscat_buf &b : r.bufs) {
        lscat_cmp_count n;
        if ((e = cudaMemcpy(b.ref, b.d, b.bytes, cudaMemcpyDeviceToDevice)) != cudaSuccess ||
            (e = cudaMemcpy(b.host.data() + b.bytes, b.d, b.bytes, cudaMemcpyDeviceToHost)) !=
                cudaSuccess ||
            (e = lscat_compare(&n, c, b.ref, b.pristine, nullptr, b.cmp_bytes,
                               b.cmp, 1)) != cudaSuccess)
            goto fail_copy;
        written += n.differ > 0;
    }
    if (!written) {
        snprintf(c.why, sizeof c.why, "the reference block %ux%ux%u wrote none of the %zu "
                 "buffers the kernel may write at %lldx%lld: nothing to compare", c.block.x,
                 c.block.y, c.block.z, r.bufs.size(), r.w, r.h);
        return cudaSuccess;
    }
    if ((e = lscat_run_once(ctx, r)) != cudaSuccess) {
        snprintf(c.why, sizeof c.why, "the reference block's second run failed at %lldx%lld: "
                 "%s", r.w, r.h, cudaGetErrorString(e));
        return e;
    }
    for (lscat_buf &b : r.bufs) {
        lscat_cmp_count n;
        if ((e = lscat_compare(&n, c, b.d, b.ref, nullptr, b.cmp_bytes, b.cmp, 0)) !=
            cudaSuccess)
            goto fail_copy;
        if (n.differ && c.nondet < (n.beyond ? 2 : 1)) {
            c.nondet = n.beyond ? 2 : 1;
            lscat_describe(c.why, sizeof c.why, b, b.cmp_bytes, n.beyond ? n :
                           lscat_cmp_count{ n.differ,
                           n.differ, n.first, 0, 0, 0, 0 }, n.beyond ? "differ beyond tolerance "
                           "between the reference block's two runs" : "differ between the "
                           "reference block's two runs (within tolerance)");
        }
    }
    c.state = 1;
    if (c.nondet) { /* inputs or reference overwritten from outside: not nondeterminism */
        const lscat_buf *hit = nullptr;
        int changed = lscat_copies_changed(r, &hit);
        if (changed < 0) {
            e = cudaGetLastError();
            goto fail_copy;
        }
        if (changed) {
            *oob = 1, c.state = 2;
            snprintf(c.why, sizeof c.why, "the kernel writes outside its buffers at %lldx%lld "
                     "under the reference block %ux%ux%u (the initial contents of buffer '%s', "
                     "kept by the check, changed): nothing to compare", r.w, r.h, c.block.x,
                     c.block.y, c.block.z, lscat_param_name(hit->param));
        }
    }
    return cudaSuccess;
fail_copy:
    c.state = 2;
    snprintf(c.why, sizeof c.why, "the output check's comparison failed: %s",
             cudaGetErrorString(e));
    return e;
}

/* At a new size: keep the initial contents of every written buffer, then find a reference:
 * the first candidate shape that writes something and agrees with itself over two runs (when
 * none does, the first candidate's verdict stands). Sets c.state (2 with c.why when the check
 * is unavailable at this size), c.nondet and c.note. Returns the CUDA error of a failed run
 * only when it is sticky (c.why says what failed; the harness must stop), else cudaSuccess. */
static cudaError_t lscat_check_prepare(lscat_check &c, lscat_run &r, const cudaDeviceProp &prop,
                                       const lscat_opts &o)
{
    long long t0 = lscat_now_ns();
    cudaError_t e = cudaSuccess;
    dim3 cand[8];
    int n = lscat_ref_candidates(cand, o.check_ref, prop), oob = 0, first_state = 2,
        first_nondet = 0, first_oob = 0;
    char first_why[sizeof c.why] = "";
    c.state = 2, c.nondet = 0, c.why[0] = c.note[0] = '\0';
    if (r.bufs.empty()) {
        snprintf(c.why, sizeof c.why, "no output buffer: the kernel has no non-const pointer "
                 "parameter");
        goto done;
    }
    if ((e = lscat_check_copies(c, r)) != cudaSuccess)
        goto fail;
    for (int i = 0; i < n; i++) { /* out of bounds under one shape need not be under all */
        c.block = cand[i];
        if ((e = lscat_ref_try(c, r, prop, &oob)) != cudaSuccess) {
            cudaGetLastError();
            if (lscat_sticky(e) || cudaDeviceSynchronize() != cudaSuccess)
                goto fail;
        }
        if (c.state == 1 && c.nondet < 2) {
            if (i > 0)
                snprintf(c.note, sizeof c.note, "; the first candidate %ux%ux%u %s", cand[0].x,
                         cand[0].y, cand[0].z, first_oob ? "wrote outside its buffers" :
                         first_state == 1 ? "differed between its own two runs" :
                         "wrote nothing or failed");
            goto done;
        }
        if (i == 0) {
            first_state = c.state, first_nondet = c.nondet, first_oob = oob;
            memcpy(first_why, c.why, sizeof c.why);
        }
    }
    /* no candidate is usable: the first one's verdict (its reference is unused) */
    c.block = cand[0], c.state = first_state, c.nondet = first_nondet;
    memcpy(c.why, first_why, sizeof c.why);
    goto done;
fail:
    cudaGetLastError();
    if (lscat_sticky(e) || cudaDeviceSynchronize() != cudaSuccess) {
        c.state = 2;
        c.ref_ns = lscat_now_ns() - t0;
        return e;
    }
    c.state = 2;
done:
    c.ref_ns = lscat_now_ns() - t0;
    return cudaSuccess;
}

/* A mismatch's why: "buffer 'y' (parameter 2): 57600 of 58624 elements differ ...", or, when
 * every difference is an element only one of the two wrote (the ones both wrote agree), what
 * the configuration covered instead: a grid-dependent per-block output or a grid that misses
 * part of the data (docs/isolate.md "Output check"). Integers count bytes. */
static void lscat_mismatch_why(char *why, size_t size, const lscat_check &c, const lscat_buf &b,
                               size_t bytes, const lscat_cmp_count &n)
{
    const char *unit = b.cmp == LSCAT_CMP_EXACT ? "bytes" : "elements";
    if (n.only && !n.wrote) {
        snprintf(why, size, "buffer '%s' (parameter %d): writes none of the %llu %s the "
                 "reference block %ux%ux%u wrote%s", lscat_param_name(b.param), b.param + 1,
                 n.only, unit, c.block.x, c.block.y, c.block.z, c.note);
        return;
    }
    if (n.only && n.beyond_only == n.beyond) {
        snprintf(why, size, "buffer '%s' (parameter %d): writes other %s than the reference "
                 "block %ux%ux%u (%llu written by only one of them, first at %llu; the %llu "
                 "both wrote agree): its work depends on the block shape or grid%s",
                 lscat_param_name(b.param), b.param + 1, unit, c.block.x, c.block.y, c.block.z,
                 n.only, n.first, n.both, c.note);
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "differ from the reference block %ux%ux%u's%s", c.block.x,
             c.block.y, c.block.z, b.cmp == LSCAT_CMP_EXACT ? "" : " beyond tolerance");
    lscat_describe(why, size, b, bytes, n, what);
    size_t len = strlen(why);
    snprintf(why + len, size - len, "%s", c.note);
}

/* After a configuration's timing: run it once more on the size's initial inputs and compare
 * every written buffer with the reference's. *status: match, mismatch, nondeterministic or
 * not_checked (why says why). Returns the CUDA error of a failed run (the caller decides
 * whether it is sticky), else cudaSuccess. */
static cudaError_t lscat_check_config(const char **status, char *why, size_t why_size,
                                      lscat_check &c, lscat_run &r, lscat_launch_ctx &ctx)
{
    *status = "not_checked";
    if (c.state != 1) {
        snprintf(why, why_size, "%s", c.why[0] ? c.why : "the output check was not prepared");
        return cudaSuccess;
    }
    if (c.nondet == 2) {
        *status = "nondeterministic";
        snprintf(why, why_size, "not checkable: %s", c.why);
        return cudaSuccess;
    }
    cudaError_t e = lscat_run_once(ctx, r);
    if (e != cudaSuccess) {
        snprintf(why, why_size, "the check's run of this configuration failed: %s",
                 cudaGetErrorString(e));
        return e;
    }
    unsigned long long within = 0;
    for (const lscat_buf &b : r.bufs) {
        lscat_cmp_count n;
        if ((e = lscat_compare(&n, c, b.d, b.ref, b.pristine, b.cmp_bytes, b.cmp, 0)) !=
            cudaSuccess) {
            snprintf(why, why_size, "the output check's comparison failed: %s",
                     cudaGetErrorString(e));
            return e;
        }
        if (n.beyond) {
            const lscat_buf *hit = nullptr;
            *status = "mismatch";
            lscat_mismatch_why(why, why_size, c, b, b.cmp_bytes, n);
            if (lscat_copies_changed(r, &hit) > 0) { /* restored: later rows compare right */
                size_t len = strlen(why);
                snprintf(why + len, why_size - len, "; it also wrote outside its buffers (over "
                         "the initial contents of '%s', restored)", lscat_param_name(hit->param));
            }
            return cudaGetLastError();
        }
        within += n.differ;
    }
    *status = c.nondet ? "nondeterministic" : "match";
    if (c.nondet)
        snprintf(why, why_size, "within tolerance of the reference block %ux%ux%u; %s%s",
                 c.block.x, c.block.y, c.block.z, c.why, c.note);
    else if (within)
        snprintf(why, why_size, "within tolerance of the reference block %ux%ux%u (%llu "
                 "elements differ in their last bits)%s", c.block.x, c.block.y, c.block.z,
                 within, c.note);
    else
        snprintf(why, why_size, "identical to the reference block %ux%ux%u's output%s",
                 c.block.x, c.block.y, c.block.z, c.note);
    return cudaSuccess;
}

// ---- lscat harness, main loop (isolate/harness_main.cu.in): the same for every kernel ----
static void lscat_line_start(FILE *f, long long w, long long h, dim3 b, dim3 g)
{
    fprintf(f, "{\"w\":%lld,\"h\":%lld,\"block\":[%u,%u,%u],\"grid\":[%u,%u,%u]", w, h, b.x, b.y,
            b.z, g.x, g.y, g.z);
}

/* A fault's error carries lscat_arg_note (an argument the harness cannot make: a class with
 * virtual functions), so the probe's detail says why. */
static void lscat_fail_line(FILE *f, const char *status, const char *msg)
{
    fprintf(f, ",\"status\":\"%s\",\"error\":", status);
    char with_note[1024];
    if (lscat_arg_note && !strcmp(status, "cuda_error")) {
        snprintf(with_note, sizeof with_note, "%s; %s", msg, lscat_arg_note);
        msg = with_note;
    }
    lscat_json_str(f, msg);
    fputs("}\n", f);
    fflush(f);
}

/* The reference's cost, on the line of the configuration that made it run. */
static void lscat_ref_cost(FILE *f, lscat_check &c)
{
    if (c.ref_ns >= 0)
        fprintf(f, ",\"check_ref_ns\":%lld", c.ref_ns);
    c.ref_ns = -1;
}

/* The output check of a timed configuration, as fields of its line. Returns 1 when its run hit
 * a sticky error (the harness must stop after the line). */
static int lscat_check_line(FILE *f, lscat_check &c, lscat_run &r, lscat_launch_ctx &ctx,
                            const lscat_opts &o)
{
    const char *status = "not_checked";
    char why[520] = "turned off (--no-check)";
    long long t0 = lscat_now_ns();
    int sticky = 0;
    if (o.check) {
        cudaError_t e = lscat_check_config(&status, why, sizeof why, c, r, ctx);
        if (e != cudaSuccess) {
            cudaGetLastError();
            sticky = lscat_sticky(e) || cudaDeviceSynchronize() != cudaSuccess;
        }
    }
    fprintf(f, ",\"check\":\"%s\",\"check_why\":", status);
    lscat_json_str(f, why);
    fprintf(f, ",\"check_ns\":%lld", o.check ? lscat_now_ns() - t0 : 0LL);
    lscat_ref_cost(f, c);
    return sticky;
}

/* A probe's one launch, timed by a cudaEvent pair around it (the kernel's own time, without
 * the configuration's buffer fill, copies and syncs: docs/execute.md "Probe budget"); *ns stays
 * -1 when the events could not time it. Returns the launch's or the synchronisation's error. */
static int lscat_probe_launch(long long *ns, lscat_launch_ctx *ctx)
{
    cudaEvent_t ev[2] = { nullptr, nullptr };
    int timed = cudaEventCreate(&ev[0]) == cudaSuccess && cudaEventCreate(&ev[1]) == cudaSuccess &&
                cudaEventRecord(ev[0], 0) == cudaSuccess;
    int err = lscat_launch(ctx, nullptr);
    timed = timed && !err && cudaEventRecord(ev[1], 0) == cudaSuccess;
    if (!err)
        err = (int)cudaDeviceSynchronize();
    float ms = 0;
    if (!err && timed && cudaEventElapsedTime(&ms, ev[0], ev[1]) == cudaSuccess)
        *ns = (long long)((double)ms * 1e6);
    for (cudaEvent_t e : ev)
        if (e)
            cudaEventDestroy(e);
    return err;
}

/* The end of a probe's ok line: the kernel's own time and, on the first configuration of a
 * size, what making its buffers took (fields older lscat ignores). */
static void lscat_probe_times(FILE *f, long long kernel_ns, long long setup_ns)
{
    if (kernel_ns >= 0)
        fprintf(f, ",\"kernel_ns\":%lld", kernel_ns);
    if (setup_ns >= 0)
        fprintf(f, ",\"setup_ns\":%lld", setup_ns);
    fputs("}\n", f);
}

static int lscat_main(int argc, char **argv)
{
    lscat_opts o;
    int rc = lscat_parse(o, argc, argv);
    if (rc)
        return rc == 1 ? 0 : rc; /* 1: --help */
    if (o.show_w)
        return lscat_show_args(o);
    FILE *out = o.results ? fopen(o.results, "w") : stdout;
    if (!out) {
        fprintf(stderr, "harness: cannot open '%s'\n", o.results);
        return 2;
    }
    cudaDeviceProp prop;
    cudaError_t e = cudaSetDevice(o.device);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, o.device);
    if (e != cudaSuccess) {
        fprintf(stderr, "harness: device %d: %s\n", o.device, cudaGetErrorString(e));
        if (out != stdout)
            fclose(out); /* in lscat-runner's process nothing is closed for us */
        return 3;
    }
    /* The header through the timing core, so every harness writes the same line (device name,
     * UUID, compute capability, driver and CUDA versions). */
    timing_device_info dev;
    char line[2048];
    if (timing_device_info_get(&dev, o.device) != 0 ||
        timing_format_header(line, (int)sizeof line, lscat_kernel.name, &dev) < 0) {
        fprintf(stderr, "harness: device %d: cannot read its description\n", o.device);
        if (out != stdout)
            fclose(out);
        return 3;
    }
    size_t hl = strlen(line); /* + the binding, so the output says what was measured */
    if (hl && line[hl - 1] == '}')
        line[hl - 1] = '\0';
    fprintf(out, "%s,\"binding\":\"%s\"}\n", line, lscat_bindings[lscat_bind]);
    fflush(out);
    if (o.occupancy) {
        int min_grid = 0, block = 0;
        lscat_kfn_t fn = lscat_pick(lscat_kernel.occupancy_bx);
        if (fn && cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, fn, 0) == cudaSuccess)
            fprintf(out, "{\"occupancy_block\":%d,\"occupancy_grid\":%d}\n", block, min_grid);
        cudaGetLastError();
        fflush(out);
    }
    lscat_run run = { -1, -1, 0, {}, {}, {}, {} };
    lscat_guarded = o.probe;
    int wrote_past = 0; /* a guard was written: "#guard-stop" ends the configurations */
    lscat_check chk;
    lscat_args_reset();
    char cfg[512];
    int exit_code = 0;
    while (fgets(cfg, sizeof cfg, stdin)) {
        char *p = cfg;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' && o.probe && wrote_past && !strncmp(p, "#guard-stop", 11))
            break; /* the probe's large configurations: a binding that overran at the small
                      ones would only fault there (docs/execute.md "Guard after the buffers") */
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        long long w, h, bx, by, bz;
        if (sscanf(p, "%lld %lld %lld %lld %lld", &w, &h, &bx, &by, &bz) != 5) {
            fprintf(stderr, "harness: bad configuration line: %s", cfg);
            exit_code = 2;
            break;
        }
        dim3 block((unsigned)(bx > 0 ? bx : 0), (unsigned)(by > 0 ? by : 0), (unsigned)(bz > 0 ? bz : 0));
        int clamped = 0;
        dim3 grid = lscat_grid(prop, w, h, block, &clamped);
        lscat_kfn_t fn = lscat_pick((int)bx);
        long long threads = bx * by * bz;
        int coop_cut = threads > 0 && threads <= prop.maxThreadsPerBlock &&
                       lscat_coop_cap(&grid, prop, fn, block, lscat_shmem(fn, block));
        lscat_line_start(out, w, h, block, grid);
        if (clamped || coop_cut)
            fputs(",\"grid_clamped\":true", out);
        if (coop_cut) /* cut to the co-resident blocks a cooperative launch allows */
            fputs(",\"grid_coresident\":true", out);
        lscat_tiles_note(out, w, h);
        if (w < 1 || h < 1 || bx < 1 || by < 1 || bz < 1 || threads > prop.maxThreadsPerBlock) {
            lscat_fail_line(out, "invalid_config", "matrix size and block dimensions must be positive, "
                                                   "block at most maxThreadsPerBlock threads");
            continue;
        }
        if (!fn) {
            lscat_fail_line(out, "invalid_config", "no template instantiation for this block x "
                                                   "(see params.json template_block_values)");
            continue;
        }
        if (lscat_bind == LSCAT_BIND_TILES && !lscat_tiles_block(block)) {
            lscat_fail_line(out, "invalid_config", lscat_src_grid[0]
                            ? "not run under binding tiles: only the source's block runs the "
                              "source's grid (params.json launch)"
                            : "not run under binding tiles: no grid expression in params.json");
            continue;
        }
        long long setup_ns = -1; /* the buffers' making, when this configuration made them */
        if (w != run.w || h != run.h) {
            setup_ns = lscat_now_ns();
            lscat_free_all(run);
            run.w = w;
            run.h = h;
            run.elems = (size_t)(lscat_buffer_elems(w, h) + (o.pad > 0 ? o.pad : 0));
            e = lscat_make_all(run);
            if (e != cudaSuccess) {
                run.w = run.h = -1;
                lscat_free_all(run);
                cudaGetLastError();
                lscat_fail_line(out, "cuda_error", cudaGetErrorString(e));
                continue;
            }
            chk.state = 0;
            setup_ns = lscat_now_ns() - setup_ns;
        }
        if (!o.probe && o.check && chk.state == 0 &&
            lscat_check_prepare(chk, run, prop, o) != cudaSuccess) {
            char msg[520];
            snprintf(msg, sizeof msg, "output check: %s", chk.why);
            lscat_ref_cost(out, chk);
            lscat_fail_line(out, "cuda_error", msg);
            exit_code = 4; /* the reference's sticky error: the context is gone */
            break;
        }
        lscat_set_block(bx);
        lscat_launch_ctx ctx = { fn, grid, block, lscat_shmem(fn, block), lscat_kernel.argv() };
        timing_stats st;
        memset(&st, 0, sizeof st);
        int err;
        long long kernel_ns = -1;
        if (o.probe) {
            err = lscat_probe_launch(&kernel_ns, &ctx);
        } else {
            err = timing_measure_launch(&st, &o.t, lscat_launch, &ctx, nullptr);
        }
        if (err) {
            cudaError_t ce = (cudaError_t)err;
            cudaGetLastError();
            int sticky = lscat_sticky(ce) || cudaDeviceSynchronize() != cudaSuccess;
            const char *status = (ce == cudaErrorInvalidConfiguration ||
                                  ce == cudaErrorLaunchOutOfResources) ? "invalid_config" : "cuda_error";
            lscat_ref_cost(out, chk);
            lscat_fail_line(out, status, cudaGetErrorString(ce));
            timing_stats_release(&st);
            if (sticky) {
                exit_code = 4;
                break;
            }
            continue;
        }
        if (o.probe) {
            int param = -1;
            size_t off = 0;
            int hit = lscat_guard_hit(run, &param, &off);
            if (hit < 0) { /* reading the guards back failed: the context is gone */
                cudaError_t ce = cudaGetLastError();
                lscat_fail_line(out, "cuda_error", cudaGetErrorString(ce));
                exit_code = 4;
                break;
            }
            if (hit) {
                wrote_past = 1;
                fprintf(out, ",\"wrote_past\":{\"param\":%d,\"offset\":%zu,\"name\":", param, off);
                lscat_json_str(out, lscat_param_name(param));
                fputc('}', out);
            }
            fputs(",\"status\":\"ok\"", out);
            lscat_probe_times(out, kernel_ns, setup_ns);
        } else {
            /* statistics and the GPU's clocks/temperature, formatted by the timing core */
            if (timing_format_stats(line, (int)sizeof line, &st) < 0)
                line[0] = '\0';
            fprintf(out, ",\"status\":\"ok\"%s", line);
            int sticky = lscat_check_line(out, chk, run, ctx, o);
            fputs("}\n", out);
            if (sticky) {
                fflush(out);
                timing_stats_release(&st);
                exit_code = 4;
                break;
            }
        }
        fflush(out);
        timing_stats_release(&st);
    }
    if (exit_code != 4) {
        lscat_free_all(run);
        cudaFree(chk.dev);
    }
    if (out != stdout)
        fclose(out);
    return exit_code;
}

/* Two entry points over the same object (execute links it as `harness` and as `harness.so`):
 * main for a process, lscat_harness_main for lscat-runner, which loads harness.so into one
 * long-lived process per GPU (docs/tune.md "Runner"). The body returns, never exits; in the
 * runner the timing core's per-process state is released before returning. */
int main(int argc, char **argv)
{
    return lscat_main(argc, argv);
}

extern "C" __attribute__((visibility("default"))) int lscat_harness_main(int argc, char **argv)
{
    int rc = lscat_main(argc, argv);
    if (rc != 4) /* after a sticky error the context is gone: the runner exits */
        timing_release_process_state();
    return rc;
}
