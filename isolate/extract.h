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
};

/* Parse `o->file` and append records to `out`:
 *   "tu"     status (ok|errors|failed), errors, first_error, parse_s
 *   "kernel" name, qname, call, path, line, tparams, is2d, dynshared, source, params, roles,
 *            param_names
 *   "note"   class, message (refused includes, missing headers, kernels without a body, ...)
 * Returns 0 (a parse with errors is still 0: the "tu" record says so) or LSCAT_ERR when
 * libclang could not parse the file at all. */
int extract_file(struct buf *out, const struct extract_options *o);

#endif
