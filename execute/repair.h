/* The repair strategies of the build loop. Each reads the located diagnostics of a failed
 * attempt and edits the working copy of kernel.cu (never the isolated original): add a missing
 * standard/CUDA header, rewrite removed warp intrinsics and runtime calls, drop host-only code
 * that leaked into the closure, drop a redefinition of something CUDA now provides, mark a host
 * function called from device code __host__ __device__, give an undeducible template kernel
 * default arguments, give the CUDA samples' helper headers from lscat's compat set (else a
 * shim), and pull a missing declaration,
 * macro or header from the kernel's repository through a resolver. docs/execute.md lists them. */
#ifndef LSCAT_EXECUTE_REPAIR_H
#define LSCAT_EXECUTE_REPAIR_H

#include "common/buf.h"
#include "execute/classify.h"

/* Where repairs find what the kernel's repository defines: execute/isoresolve.c asks
 * lscat-isolate's libclang service (with the declaration's own closure), execute/reposearch.c
 * searches the text. Each answer names the resolver that gave it in *via ("isolate", "text"),
 * a static string, recorded in the fix. */
struct repair_resolver {
    /* Append to `out` the source text of a declaration or macro named `ident` (a #define, a
     * typedef/using, a struct/class/union/enum, a constant, a __device__ function) found under
     * `repo_root`, and what it needs that `have` (the kernel's current source, may be NULL)
     * lacks; `origin` gets "path:line". 0 when found, LSCAT_ENOTFOUND when not. */
    int (*find_decl)(void *ctx, const char *repo_root, const char *ident, const char *have,
                     struct buf *out, struct buf *origin, const char **via);
    /* The absolute path of a file under `repo_root` that `#include "<name>"` meant (caller
     * frees), or LSCAT_ENOTFOUND. */
    int (*find_header)(void *ctx, const char *repo_root, const char *name, char **path_out,
                       const char **via);
    void *ctx;
};

struct repair_input {
    const struct diag_list *diags;
    const char *kernel_file;   /* the file name nvcc reports for the kernel ("kernel.cu") */
    const char *repo_root;     /* the kernel's repository tree, NULL when unknown */
    const struct repair_resolver *resolver; /* NULL: no repository strategies */
    const char *include_dir;   /* pulled headers are copied here (created when needed) */
    const char *compat_dir;    /* lscat's stand-ins for the CUDA samples' helper headers
                                * (isolate/compat/helper_*.h), copied to include_dir when the
                                * repository lacks one; NULL: none */
};

/* Apply every strategy the diagnostics call for to `src` (the kernel source). Each fix applied
 * is appended to `fixes` as a JSON string ("add_header:<cstdio>"), comma-separated, so the
 * caller can wrap them in [ ]. Returns the number of fixes applied (0: no strategy applies, or
 * none changed anything). */
int repair_apply(struct buf *src, struct buf *fixes, const struct repair_input *in);

/* Exposed for tests: the standard/CUDA header that declares `ident`, or NULL. */
const char *repair_header_for(const char *ident);

/* Bumped whenever a strategy changes: part of the build cache key. */
#define REPAIR_VERSION 7

#endif
