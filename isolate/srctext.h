/* Source-text helpers of the isolate worker that need no libclang: the pre-parse scan that
 * refuses #includes leaving the tree, whole conditional blocks around a copied extent, and the rewrite of bytes nvcc rejects (invalid UTF-8). */
#ifndef LSCAT_ISOLATE_SRCTEXT_H
#define LSCAT_ISOLATE_SRCTEXT_H

#include "common/buf.h"

#include <stddef.h>

struct srctext_refusals {
    char **paths;    /* resolved files outside the tree that some #include names */
    size_t n, cap;
    char **seen;     /* tree files already scanned */
    size_t nseen, seen_cap;
};

/* Is `real` (a resolved path) under a system, CUDA or LLVM folder that kernels may include, or
 * one of lscat's own compat helper headers (isolate/compat/helper_*.h)? */
int srctext_allowed_system(const char *cuda_home, const char *real);

/* Scan `path` (a file of the tree `root`) and the tree headers it includes (at most 2,000
 * files) for #include directives naming an absolute path or a quoted path resolving outside
 * the tree and outside the system folders; their resolved paths go to rf->paths. */
void srctext_scan_includes(struct srctext_refusals *rf, const char *root, const char *cuda_home,
                           const char *path);
void srctext_refusals_release(struct srctext_refusals *rf);

/* Copy src to out, rewriting invalid UTF-8 bytes: inside string and character literals as
 * octal escapes (same value), elsewhere as '?'. Returns how many bytes were rewritten. */
size_t srctext_fix_utf8(struct buf *out, const char *src, size_t n);

/* Widen [*start, *end) of text (n bytes) so that it holds whole conditional blocks: an
 * #endif/#else/#elif without its #if inside moves *start back to the line of that #if, an #if
 * without its #endif moves *end past that #endif (a declaration whose `__host__ __device__`
 * sits in an #ifdef keeps the #ifdef). Returns 1 when a bound moved. */
int srctext_balance_conditionals(const char *text, size_t n, unsigned *start, unsigned *end);

/* The kernel definitions that start inside [start, end) of text (n bytes): a `__global__`
 * outside comments followed, before any `;` at parenthesis depth 0, by a `{`. For each, cb gets
 * the 1-based line of its name (as a kernel's location) and the name (the identifier before
 * the parameter list, at most 127 bytes). Used on the ranges the preprocessor skipped. */
void srctext_kernels_in(const char *text, size_t n, size_t start, size_t end,
                        void (*cb)(void *arg, unsigned line, const char *name), void *arg);

#endif
