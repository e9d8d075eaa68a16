/* The resolve service of lscat-isolate (`lscat isolate resolve --serve`, internal, used by
 * execute's repair loop): the repository's definition of a name with its closure, and the file
 * an #include meant, answered with libclang and the extractor's closure machinery (closure.c).
 *
 * Protocol (docs/isolate.md): one request per line on stdin, one framed record (record.h) per
 * request on stdout, flushed:
 *     ping                              -> R pong   {version}
 *     decl ROOT IDENT [KERNEL_BYTES]    -> R decl   {text, origin, pieces, parses}
 *       (then KERNEL_BYTES bytes: the kernel's current source; pieces it holds are left out)
 *     header ROOT NAME                  -> R header {path}
 *     not found                         -> R notfound {message}
 *     a bad request                     -> R error  {message}   (the service goes on)
 * ROOT is an absolute folder without blanks; the service indexes each ROOT once (its files and
 * folders) and keeps the last two parsed files. */
#ifndef LSCAT_ISOLATE_RESOLVE_H
#define LSCAT_ISOLATE_RESOLVE_H

#include "common/buf.h"

#include <stdio.h>

#define RESOLVE_PROTOCOL "1"

struct resolve_service;

struct resolve_service *resolve_service_new(const char *cuda_home);
void resolve_service_free(struct resolve_service *s);

/* Append the reply record for `decl` / `header` to `out`. Return 0 (found), LSCAT_ENOTFOUND
 * or LSCAT_EINVALID (the record says why in both cases). */
int resolve_decl(struct buf *out, struct resolve_service *s, const char *root, const char *ident,
                 const char *have);
int resolve_header(struct buf *out, struct resolve_service *s, const char *root, const char *name);

/* Serve requests from `in` until EOF. Returns 0 at EOF, a negative code when the stream broke
 * (a decl's kernel bytes cut short) or `out` could not be written. */
int resolve_serve(FILE *in, FILE *out, const char *cuda_home);

#endif
