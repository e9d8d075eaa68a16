/* Releases: the export stage's folder (<work>/nightly/export: the Parquet and CSV dumps, the
 * report, the kernel list and a COMPLETE marker written last) and its publication as a dated
 * release under the releases folder: written into a temporary folder, renamed into place,
 * `latest` switched by renaming a symlink over it, old releases pruned (--keep), and the index
 * pages rewritten. docs/nightly.md describes the layout. */
#ifndef LSCAT_NIGHTLY_RELEASE_H
#define LSCAT_NIGHTLY_RELEASE_H

#include "store/store.h"

/* <work>/nightly/export. Caller frees. */
char *nightly_export_dir(const char *work_dir);
/* Before the export: remove the COMPLETE marker (a release never takes a half-done export) and
 * the previous report; create the folder. Returns 0 or LSCAT_ERR. */
int nightly_export_begin(const char *export_dir);
/* After the dumps and the report: write kernel-ids.txt (every kernel "<id> <name>", sorted, from
 * the store), then COMPLETE, holding `counts_json` (the Parquet export's counts: rows per table).
 * Returns 0 or LSCAT_ERR. */
int nightly_export_finish(struct store *s, const char *export_dir, const char *counts_json);
/* Is there a complete export there? */
int nightly_export_complete(const char *export_dir);

struct nightly_release_options {
    const char *releases_dir; /* created when missing */
    const char *export_dir;   /* a complete export */
    int keep;                 /* releases kept after this one is published; 0 = all */
};

/* Publish the export as releases/<YYYY-MM-DD>[.N] (the first free name of today, UTC), switch
 * `latest` to it, prune to `keep`, rewrite index.html and index.json. *name_out (caller frees)
 * is the new release's folder name. Returns 0 or LSCAT_ERR; on error nothing under a release's
 * own name changed and `latest` still points where it did. */
int nightly_release_publish(char **name_out, struct store *s,
                            const struct nightly_release_options *o);

/* Is `name` a release folder name (YYYY-MM-DD or YYYY-MM-DD.N, N >= 2)? Its order key in *key
 * (yyyymmdd * 1000 + N, N = 1 for the plain date) when `key` is not NULL. */
int nightly_release_name(const char *name, long long *key);

#endif
