// ---- lscat harness core's interface (isolate/harness_core.h) ----
// Every harness is two parts: its harness.cu (the kernel, the tables isolate generated for it,
// and isolate/harness_kernel.cu.in: what is templated on the kernel's argument types), and the
// harness core (isolate/harness_core.cu: options, bindings, arguments and buffers, the output
// check, the main loop), compiled once per lscat and architecture list and linked into every
// harness, as the timing core is (docs/isolate.md "Harness core"). This header is what the two
// parts share; it stays light, as every kernel's build reads it.
#ifndef LSCAT_HARNESS_CORE_H
#define LSCAT_HARNESS_CORE_H
#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>

enum { LSCAT_CMP_EXACT = 0, LSCAT_CMP_F32 = 1, LSCAT_CMP_F64 = 2 };

/* What the core needs of one parameter's type (lscat_type_of in harness_kernel.cu.in). */
struct lscat_argtype {
    unsigned size; /* the argument's bytes */
    char kind;     /* 'p' a pointer to data, 'n' a function pointer, 'f' floating, 'i' a signed
                      and 'u' an unsigned integer or enum, 'b' bool, 's' anything else (a
                      struct by value) */
    char tex;      /* 1: an 8-byte integer, which may be a cudaTextureObject_t (lscat_texparams) */
    /* a pointer's element (void: double) */
    char ekind;    /* 'p' a pointer, 'b' bool, 'i' an integer, 'f' floating, 'v' an integer
                      vector type (int2, uint4: its x of exsize bytes), 'o' anything else */
    char ecmp;     /* LSCAT_CMP_*: how the output check compares its elements */
    char econst;   /* 1: a pointer to const (an input) */
    char eclass;   /* 1: a class, whose members are set (lscat_members) */
    unsigned esize, exsize;
};

/* Texture objects over one filled allocation (lscat_tex_make). */
struct lscat_texobjs { cudaTextureObject_t lin, pitch, arr; };
enum { LSCAT_TEX_LIN = 1, LSCAT_TEX_PITCH = 2, LSCAT_TEX_ARR = 4, LSCAT_TEX_ARR_MAX = 65536 };

/* The kernel, as the core sees it: defined by harness_kernel.cu.in from the generated part of
 * harness.cu. The two table types are defined there (isolate/harness.c writes them) and, the
 * same, in the core. */
struct lscat_run;
struct lscat_member;
struct lscat_texparam;
struct lscat_kernel_desc {
    const char *name;                /* the kernel's name, with its template arguments */
    const char *const *roles, *const *names; /* per parameter, nullptr-terminated */
    int dynshared;                   /* 1: an extern __shared__ array */
    const unsigned *src_block;       /* the source's launch: block (0 0 0: none known) */
    long long src_smem;              /* and its dynamic shared memory (-1: unknown) */
    const char *const *src_grid;     /* the source's grid expressions (binding tiles) */
    const long long *tile_align;     /* per parameter, its tile (0: none) */
    const long long *fixed_size;     /* binding fixed: the source's W H (0 0: none) */
    const unsigned *fixed_grid;      /* x y z, or x = [3] x multiProcessorCount */
    const long long *fixed_bytes;    /* per parameter, -1 at the end */
    int grid2d;                      /* 1: it indexes y */
    const unsigned *ref_block;       /* the output check's reference block */
    int cooperative;                 /* 1: launched cooperatively */
    int occupancy_bx;                /* the block x whose instantiation --occupancy asks about */
    const lscat_member *members;     /* struct members to set, param -1 at the end */
    const char *arg_note;            /* why an argument cannot be made (or nullptr) */
    const lscat_texparam *texparams; /* texture object parameters, param -1 at the end */
    int nargs;
    const lscat_argtype *types;      /* per parameter */
    void **(*argv)(void);            /* the arguments' bytes, per parameter, nullptr at the end */
    const void *(*pick)(int bx);     /* the instantiation for block x, or nullptr */
    cudaError_t (*tex_refs)(lscat_run &r); /* the texture references' objects */
};
extern const lscat_kernel_desc lscat_kernel;

/* For the texture references (the texture_object repair's registry, lscat_texref.h). */
cudaError_t lscat_tex_make(lscat_texobjs *o, const cudaChannelFormatDesc &d, int normalized,
                           int want, int spare, uint64_t seed, lscat_run &r);
#endif
