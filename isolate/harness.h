/* Harness generation: the `main` that launches one isolated kernel (CONTRACTS.md, "Harness
 * command line"). The generated file is a short kernel-specific prefix (which instantiation,
 * parameter roles and names, indexing, dynamic shared memory) followed by a fixed body
 * (harness_body.cu.in, harness_check.cu.in, harness_main.cu.in) that allocates by element type
 * through C++ type traits, launches with cudaLaunchKernel, times through tune/timing.h and
 * checks every configuration's output against a reference block's (docs/isolate.md). */
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
                            "grid X Y Z", "bounds N" lines; NULL or "" when none is known */
};

/* The source's launch, parsed from harness_kernel.launch; zero (smem -1) where unknown. */
struct harness_launch {
    int block[3], grid[3]; /* block[0] 0: no constant block; grid[0] 0: no constant grid */
    long long smem;        /* dynamic shared memory bytes with that block; -1 unknown */
    int bounds;            /* __launch_bounds__ maximum threads; 0 none */
};
void harness_launch_parse(struct harness_launch *out, const char *text);
/* `,"launch":{"block":[32,8,1],"smem":2048,"grid":[4,4,1]},"launch_bounds":64` for params.json,
 * the known parts only ("" when none). */
void harness_launch_json(struct buf *out, const struct harness_launch *l);

/* The block sizes a block/tile template parameter is instantiated with: 2D kernels follow
 * block x over {8,16,24,32}, 1D kernels over {32,64,128,256,512,1024}. Returns the count. */
int harness_block_values(const int **out, int is2d);

/* "<float, 1, BX>" (block parameters shown as BX); "" when not a template. */
void harness_template_args(struct buf *out, const struct harness_kernel *k, const char *block);

/* 1 when the harness gives every block shape a 2D grid covering W x H: the kernel's indexing
 * is 2d or 3d (without an indexing, when is2d). */
int harness_grid2d(const struct harness_kernel *k);

/* The whole harness.cu text. */
void harness_generate(struct buf *out, const struct harness_kernel *k);

#endif
