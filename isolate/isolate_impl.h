/* The isolate driver's internal state, shared by isolate.c (finding files, running the parse
 * workers) and kstore.c (storing each file's kernels: folders, rows, which unit's kernel wins).
 * Not a public interface: isolate/isolate.h is. */
#ifndef LSCAT_ISOLATE_IMPL_H
#define LSCAT_ISOLATE_IMPL_H

#include "common/record.h"
#include "isolate/isolate.h"
#include "isolate/sysinc.h"

#include <pthread.h>
#include <stdint.h>

#define ISOLATE_VERSION "13" /* 3: closures bring function template specialisations; 4: a
                              * named matrix's dimension (wA, hB, nA) keeps its role; 5: whole
                              * conditional blocks, toolkit headers first, OpenMP/MPI/compat
                              * fallbacks; 6: the kernel's indexing (grids, planned shapes),
                              * block-size roles, the output check; 7: a kernel needing what
                              * a missing header declares is left out, recorded; 8: enumeration
                              * template values, C++ files holding kernels parsed alone,
                              * kernels in skipped preprocessor branches or dropped by
                              * errors recorded; 9: struct arguments' pointer members get
                              * buffers (isolate/members.c); 10: the source's own launch (block,
                              * dynamic shared memory, grid, __launch_bounds__) in params.json;
                              * texture object parameters and texture references get bound
                              * texture objects (harness, params.json "textures"); reference
                              * parameters made in device memory, list links and lock words in
                              * structs, the tokens binding's aligned dims; (build11) a type
                              * parameter used as a class takes the tree's class declaring what
                              * is used (isolate/tuse.c), launches' integer type arguments
                              * replace float, names in __launch_bounds__ join the closure;
                              * 11 (coop12): grid-wide barriers marked "cooperative" and
                              * launched cooperatively on a co-resident grid; a closure that
                              * lacks a declaration is marked "incomplete" and gives way to
                              * another unit's complete copy; (grid12) the source's grid as an
                              * expression over the kernel's parameters (launch grid_expr) and
                              * the tiles binding's aligned sizes in the harness; (fixed12) the
                              * source's hard-coded problem size (constant cudaMalloc sizes of
                              * the launch's pointers, an SM-count grid) in params.json "fixed"
                              * and the harness's fixed binding; 12: a fixed size's buffers
                              * may be allocated by the launching function's callers (two up);
                              * of two units' copies of one definition the longer closure,
                              * then the smaller id, is kept (no more order-dependent ids);
                              * 13: a kernel's constant block asserts (`assert(blockDim.x ==
                              * WARP_SIZE)`) in params.json "block_eq" */

struct task {
    int64_t source_id;
    const char *root; /* borrowed from the tree */
    char *rel;        /* path relative to root */
    char sha[65];
    struct tree *tree;
};

struct tree {
    int64_t source_id;
    char *root;
    char **incdirs;
    size_t nincdirs, incdirs_cap;
};

struct run {
    const struct isolate_options *o;
    struct store *s;
    struct isolate_counts *c;
    struct task *tasks;
    size_t ntasks, tasks_cap, next;
    pthread_mutex_t lock;
    pthread_cond_t stored; /* a task's results were stored (a header's parse may start) */
    unsigned char *finished; /* per task */
    struct progress *bar;
    struct kdecl { int64_t source_id; char *name, *message; } *kdecls;
    size_t nkdecls, kdecls_cap;
    int fatal;
    char fatal_msg[512];
    struct sysinc after; /* -idirafter folders for every parse (sysinc.h) */
};

/* kstore.c. A kernel record of task t's parse: its folder (written once, generated files
 * refreshed) and its rows, in the caller's transaction. */
int kstore_kernel(struct run *r, const struct task *t, const struct record *k);
/* A failures row of the isolate stage. */
void kstore_failure(struct run *r, const char *subject, const char *cls, const char *msg);

#endif
