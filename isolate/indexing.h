/* A kernel's indexing: which of threadIdx/blockIdx/blockDim/gridDim's x, y, z its code (the
 * isolated source: the kernel, the device functions and macros it reaches) uses, and whether a
 * loop steps by the grid's size (grid-stride). tune plans block shapes from it and the harness
 * chooses the grid from it (docs/isolate.md, "Indexing"). Pure text analysis: no libclang. */
#ifndef LSCAT_ISOLATE_INDEXING_H
#define LSCAT_ISOLATE_INDEXING_H

#include <stddef.h>

enum indexing_kind {
    INDEXING_NONE = 0,    /* no thread or block index at all (one thread does everything) */
    INDEXING_1D,          /* x only */
    INDEXING_GRID_STRIDE, /* x only, and a loop steps by blockDim.x * gridDim.x */
    INDEXING_2D,          /* y (and x) */
    INDEXING_3D,          /* z */
};

/* Bits of `uses`: builtin * 3 + component (x 0, y 1, z 2); builtins threadIdx 0, blockIdx 1,
 * blockDim 2, gridDim 3. */
#define INDEXING_USE(builtin, comp) (1u << ((builtin) * 3 + (comp)))

struct indexing {
    enum indexing_kind kind;
    int dims;        /* highest component of threadIdx/blockIdx used: 0 none, 1 x, 2 y, 3 z */
    int grid_stride; /* a `+=` (or `i = i + ...`) steps by an expression of gridDim */
    int grid_sync;   /* a grid-wide barrier: a cooperative_groups grid_group's sync() */
    unsigned uses;   /* INDEXING_USE bits */
};

/* Analyse the source text src[0..len) (comments, strings and character literals ignored).
 * grid_sync: `this_grid().sync()`, `g.sync()` or `[cg::]sync(g)` on a name g declared as a
 * `grid_group` (a local, a parameter, a member) or assigned from `this_grid()`: such a kernel
 * needs a cooperative launch with every block co-resident (docs/isolate.md "Cooperative
 * launches"). */
void indexing_analyze(struct indexing *out, const char *src, size_t len);

/* "none", "1d", "grid_stride", "2d", "3d": the names params.json and kernels.indexing use. */
const char *indexing_name(enum indexing_kind k);
/* The kind of a name above; -1 for anything else (NULL included). */
int indexing_parse(const char *name);

/* "threadIdx.xy blockIdx.xy blockDim.x": the builtins used, for params.json. */
void indexing_uses_text(char *out, size_t size, unsigned uses);

#endif
