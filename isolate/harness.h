/* Harness generation: the `main` that launches one isolated kernel (CONTRACTS.md, "Harness
 * command line"). The generated file is a short kernel-specific prefix (which instantiation,
 * parameter roles, dynamic shared memory) followed by a fixed body (harness_body.cu.in) that
 * allocates by element type through C++ type traits, launches with cudaLaunchKernel and times
 * through tune/timing.h. */
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
};

/* The block sizes a block/tile template parameter is instantiated with: 2D kernels follow
 * block x over {8,16,24,32}, 1D kernels over {32,64,128,256,512,1024}. Returns the count. */
int harness_block_values(const int **out, int is2d);

/* "<float, 1, BX>" (block parameters shown as BX); "" when not a template. */
void harness_template_args(struct buf *out, const struct harness_kernel *k, const char *block);

/* The whole harness.cu text. */
void harness_generate(struct buf *out, const struct harness_kernel *k);

#endif
