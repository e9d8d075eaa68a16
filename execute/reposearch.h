/* A textual search of a repository tree that serves the repair resolver (execute/repair.h):
 * finds a header by its #include name and a declaration or macro by its name. It stands in for
 * isolate's closure machinery until that is exposed as a library; the interface is the same. */
#ifndef LSCAT_EXECUTE_REPOSEARCH_H
#define LSCAT_EXECUTE_REPOSEARCH_H

#include "execute/repair.h"

/* The resolver backed by reposearch_find_decl / reposearch_find_header (ctx unused). */
extern const struct repair_resolver reposearch_resolver;

/* *via is set to "text". `have` is not consulted (the caller checks the text it gets). */
int reposearch_find_decl(void *ctx, const char *repo_root, const char *ident, const char *have,
                         struct buf *out, struct buf *origin, const char **via);
int reposearch_find_header(void *ctx, const char *repo_root, const char *name, char **path_out,
                           const char **via);

/* The file-scope declaration of the texture reference `ident` ("texture<float, 1> ident;") under
 * repo_root: its text in `out`, "path:line" in `origin`. 0, or LSCAT_ENOTFOUND. */
int reposearch_find_texref(const char *repo_root, const char *ident, struct buf *out,
                           struct buf *origin);
/* Offset of the `texture` word that starts the declaration s[start, end), or -1 when it is not a
 * texture reference's declaration. */
long reposearch_texture_head(const char *s, size_t start, size_t end);

#endif
