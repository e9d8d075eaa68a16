/* Putting a finished export in place: an export is written into a temporary folder beside its
 * destination and swapped in with one rename, so a reader (or a kill) never sees old and new
 * files mixed: the old export stays whole until the new one is complete. */
#ifndef LSCAT_PLACE_H
#define LSCAT_PLACE_H

/* The temporary folder for an export to `out`: "<parent>/.<name>.export.tmp.<pid>", created
 * empty, with its parent. First cleans up after killed exports to the same `out` (their
 * temporary folders, once their pid is dead: see place_finish for what it keeps). *tmp_out
 * belongs to the caller. Returns 0 or LSCAT_ERR (an `out` that is a file, or "/"). */
int place_begin(char **tmp_out, const char *out);

/* Put the complete export in `tmp` at `out`: a rename when `out` does not exist, else an atomic
 * exchange (renameat2), after which the old folder's entries that are not export files (e.g.
 * a report/ folder) are moved into the new one and the rest removed. Export files: *.parquet,
 * *.csv, *.csv.gz, README.md, columns.md, SHA256SUMS and writers' temporaries. Where the file
 * system cannot exchange, the old folder is renamed aside first (a kill between the two renames
 * leaves it aside; the next export puts it back before it starts). Returns 0 or LSCAT_ERR. */
int place_finish(const char *tmp, const char *out);

/* Remove an export's temporary folder after a failure. */
void place_abort(const char *tmp);

#endif
