/* Harness generation: the `main` that launches one isolated kernel (CONTRACTS.md, "Harness
 * command line"). The generated file is a short kernel-specific prefix (which instantiation,
 * parameter roles and names, indexing, dynamic shared memory) followed by a fixed body
 * (harness_kernel.cu.in) that describes the kernel's argument types through C++ type traits;
 * the harness core (harness_core.cu, compiled once and linked in) allocates by those types,
 * launches with cudaLaunchKernel, times through tune/timing.h and checks every configuration's
 * output against a reference block's (docs/isolate.md "Harness core"). */
#ifndef LSCAT_ISOLATE_HARNESS_H
#define LSCAT_ISOLATE_HARNESS_H

#include "common/buf.h"

struct harness_kernel {
    const char *name;    /* qualified, for messages: "ns::k" */
    const char *call;    /* how kernel.cu names it: "ns::k" (anonymous namespaces dropped) */
    const char *tparams; /* template parameters, one per line: "type T float", "value N 1",
                            "block BS BX"; "" for a plain kernel */
    int is_template;
    int is2d;            /* uses threadIdx.y / blockIdx.y / blockDim.y */
    int dynshared;       /* has an `extern __shared__` array */
    const char *roles;   /* parameter roles, comma-separated, in order */
    const char *names;   /* parameter names, comma-separated, in order (messages); may be NULL */
    const char *indexing; /* isolate/indexing.h's name: "1d", "2d", ...; NULL = from is2d */
    const char *members; /* struct members to set, kparams.h's members_collect lines; may be NULL */
    const char *arg_note; /* why an argument stays out of reach (virtual class); NULL or "" */
    const char *launch;  /* the source's own launch (isolate/launch.c): "block X Y Z", "smem N",
                            "grid X Y Z", "grid_expr X;Y;Z", "bounds N" lines; NULL or "" when
                            none is known */
    const char *source;  /* kernel.cu's text (texture object parameters); may be NULL */
    int cooperative;     /* a grid-wide barrier (indexing.h grid_sync): cooperative launch */
};

/* The source's launch, parsed from harness_kernel.launch; zero (smem -1) where unknown. */
#define HARNESS_EXPR_MAX 160
#define HARNESS_MAX_FIXED 64
struct harness_launch {
    int block[3], grid[3]; /* block[0] 0: no constant block; grid[0] 0: no constant grid */
    long long smem;        /* dynamic shared memory bytes with that block; -1 unknown */
    int bounds;            /* __launch_bounds__ maximum threads; 0 none */
    int block_eq[3];       /* the block the kernel asserts, per dimension; 0 where none */
    char grid_expr[3][HARNESS_EXPR_MAX]; /* the grid over the kernel's parameters ("grid_expr"
                                            line); [0][0] '\0' none */
    int grid_sm;           /* grid x = grid_sm x multiProcessorCount; 0 none */
    /* The source's hard-coded problem size (isolate/fixed.c): fixed_w 0 = none. */
    long long fixed_w, fixed_h;
    long long fixed_bytes[HARNESS_MAX_FIXED]; /* per parameter; 0 = not a fixed buffer */
    long long fixed_elem[HARNESS_MAX_FIXED];  /* its element bytes */
    long long fixed_over;  /* the buffers' bytes in all where over the harness's cap; else 0 */
};
void harness_launch_parse(struct harness_launch *out, const char *text);
/* `,"launch":{"block":[32,8,1],"smem":2048,"grid":[4,4,1]},"launch_bounds":64` for params.json,
 * the known parts only ("" when none); a grid expression as `"grid_expr":["16","cdiv(M,256)",
 * "1"]` inside "launch"; a fixed size adds `,"fixed":{"size":[W,H],"bytes":N,
 * "buffers":{"A":N,...},"grid":["sm*2",1,1],"why":"..."}` (names: comma-separated parameter
 * names, may be NULL). */
void harness_launch_json(struct buf *out, const struct harness_launch *l, const char *names);

/* The tile a grid expression divides parameter `name` by: the least common multiple of the
 * constant divisors d of `cdiv(name,d)` and `name/d` in the three expressions (docs/isolate.md
 * "Aligned sizes"); 0 when it divides it by none. */
long long harness_grid_align(const struct harness_launch *l, const char *name);

/* Each parameter's alignment under the `tiles` binding (out[i], n parameters of k, roles and
 * names as k's lists): its own from the grid expression; a size, width, height or stride the
 * expression does not divide (GEMM's K) gets the least common multiple of the others (at most
 * 8192: else their largest); 0 for the rest, and for all when the launch has no expression. */
void harness_tile_aligns(long long *out, int n, const struct harness_kernel *k,
                         const struct harness_launch *l);
/* The harness prefix's lscat_src_grid (nullptr when none) and lscat_tile_align[]. */
void harness_tiles_prefix(struct buf *out, const struct harness_kernel *k,
                          const struct harness_launch *l);

/* The block sizes a block/tile template parameter is instantiated with: 2D kernels follow
 * block x over {8,16,24,32}, 1D kernels over {32,64,128,256,512,1024}. Returns the count. */
int harness_block_values(const int **out, int is2d);

/* "<float, 1, BX>" (block parameters shown as BX); "" when not a template. */
void harness_template_args(struct buf *out, const struct harness_kernel *k, const char *block);

/* 1 when the harness gives every block shape a 2D grid covering W x H: the kernel's indexing
 * is 2d or 3d (without an indexing, when is2d). */
int harness_grid2d(const struct harness_kernel *k);

/* The parameters the kernel fetches through as texture objects (`tex1Dfetch<T>(p, i)`,
 * `tex2D<T>(p, x, y)`, `tex1D<T>(p, x)` with p a parameter), one line each:
 * "<index>\t<fetch>\t<resource>\t<name>\t<element type>\n"; resource is linear, pitch2d or
 * array1d (what the harness binds). Returns the count. */
int harness_textures(struct buf *out, const struct harness_kernel *k);

/* The whole harness.cu text. */
void harness_generate(struct buf *out, const struct harness_kernel *k);

#endif
