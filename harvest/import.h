/* `harvest import FILE`: repository lists from elsewhere (a BigQuery CSV export, or one
 * owner/name or GitHub URL per line) become candidates with evidence "imported". */
#ifndef LSCAT_HARVEST_IMPORT_H
#define LSCAT_HARVEST_IMPORT_H

#include <stddef.h>
#include <stdint.h>

struct store;

struct import_counts {
    int64_t lines, repos, duplicates, new_repos, bad_lines, header_lines;
};

/* Find a repository reference in one line: the first comma-separated field (quotes allowed)
 * that is "owner/name", "https://github.com/owner/name[...]",
 * "https://api.github.com/repos/owner/name" or "git@github.com:owner/name.git". Writes
 * "owner/name" into out. Returns 1 when found, 0 otherwise. */
int import_parse_line(char *out, size_t out_size, const char *line);

/* Import the file ("-" = stdin) in one transaction. Returns 0 or a negative code. */
int import_file(struct import_counts *out, struct store *s, const char *path);

#endif
