/* The libclang side of `lscat isolate`: parse one CUDA file of a source tree and, for every
 * __global__ kernel defined inside the tree, compute its closure (device functions, types,
 * globals, constants, macros, system includes) and emit it as framed records (record.h).
 * Runs inside a child process (the worker), so a crash or a pathological file costs only
 * that file. */
#ifndef LSCAT_ISOLATE_EXTRACT_H
#define LSCAT_ISOLATE_EXTRACT_H

#include "common/buf.h"

struct extract_options {
    const char *root;               /* the source tree (absolute, resolved) */
    const char *file;               /* the file to parse (absolute, inside root) */
    const char *cuda_home;          /* e.g. /usr/local/cuda */
    const char *const *include_dirs; /* -I folders, absolute (the tree's header folders) */
    int n_include_dirs;
    const char *const *after_dirs;   /* -idirafter folders: OpenMP, MPI, lscat's compat headers */
    int n_after_dirs;
};
#define EXTRACT_OPTIONS_INIT { .root = NULL, .file = NULL, .cuda_home = NULL, \
                               .include_dirs = NULL, .n_include_dirs = 0, .after_dirs = NULL, \
                               .n_after_dirs = 0 }

/* Parse `o->file` and append records to `out`:
 *   "tu"     status (ok|errors|failed), errors, first_error, parse_s
 *   "kernel" name, qname, call, path, line, tparams, is2d, dynshared, source, params, roles,
 *            param_names
 *   "note"   class, message (refused includes, missing headers, kernels without a body, ...)
 * Returns 0 (a parse with errors is still 0: the "tu" record says so) or LSCAT_ERR when
 * libclang could not parse the file at all. */
int extract_file(struct buf *out, const struct extract_options *o);

/* A parsed file kept for declaration lookups (`lscat isolate resolve`): the same parse and the
 * same closure machinery as extract_file, started from a named declaration or macro instead of
 * a kernel. */
struct extract_tu;

/* Parse `o->file` (include_dirs are only read during the call). *out is the caller's
 * (extract_tu_free). Returns 0, or LSCAT_ERR when libclang could not parse it at all. */
int extract_tu_parse(struct extract_tu **out, const struct extract_options *o);
void extract_tu_free(struct extract_tu *t);

/* The repository's definition of `ident` (a macro of the tree, else every namespace-scope
 * definition of that name in the tree's files that this unit sees: type, typedef/using,
 * enum holding such an enumerator, function, variable; `ns::name` qualified) with its closure,
 * emitted as extract_file emits a kernel's (system includes, macros, declarations in
 * translation-unit order). Each piece (an #include line, a macro, a declaration) whose text
 * `have` (the kernel's current source; NULL = none) already contains is left out. Appends the
 * source to `out`, "path:line" (relative to the tree) of the definition to `origin`, the
 * number of pieces emitted to *pieces. Returns 0, or LSCAT_ENOTFOUND when the unit defines
 * no such name in the tree. */
int extract_tu_decl(struct buf *out, struct buf *origin, int *pieces, struct extract_tu *t,
                    const char *ident, const char *have);

#endif
