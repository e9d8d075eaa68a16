/* File helpers of the release writer: a folder's files with sizes and SHA-256, copies and
 * hard links of files and trees, and the list of release folders. */
#ifndef LSCAT_NIGHTLY_FILES_H
#define LSCAT_NIGHTLY_FILES_H

#include <stddef.h>
#include <stdint.h>

struct nightly_file {
    char *path;        /* relative to the folder scanned, '/'-separated */
    int64_t bytes;
    char sha256[65];
};

struct nightly_files {
    struct nightly_file *v;
    size_t n, cap;
};
#define NIGHTLY_FILES_INIT { .v = NULL, .n = 0, .cap = 0 }

/* Every regular file under `dir` (recursively, sorted by path; SHA256SUMS and temporaries
 * "*.tmp.<pid>" left out), hashed. Returns 0 or LSCAT_ERR naming the file. */
int nightly_files_scan(struct nightly_files *out, const char *dir);
void nightly_files_release(struct nightly_files *f);
/* Hash one more file, `rel` under `dir`, into `f` (kept sorted by path). */
int nightly_files_add(struct nightly_files *f, const char *dir, const char *rel);

/* SHA-256 (hex) and size of one file. */
int nightly_file_hash(char out[65], int64_t *bytes_out, const char *path);

/* Copy `from` to `to` (created 0644; the folder must exist). With `link`, a hard link is tried
 * first (same file system). Returns 0 or LSCAT_ERR. */
int nightly_copy_file(const char *from, const char *to, int link);
/* The same for a folder tree: folders created, files copied or linked; temporaries skipped. */
int nightly_copy_tree(const char *from, const char *to, int link);

/* The release folders of `dir` (names nightly_release_name() accepts, holding a release.json),
 * oldest first. */
struct nightly_release_list {
    char **names;
    size_t n;
};
int nightly_release_list(struct nightly_release_list *out, const char *dir);
void nightly_release_list_release(struct nightly_release_list *l);

#endif
