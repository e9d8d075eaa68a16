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

#endif
