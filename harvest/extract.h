/* Safe extraction of untrusted repository archives (zip, tar, anything libarchive reads) and
 * checkouts: only C/C++/CUDA sources and headers and build files are kept, each stored once
 * by content hash under <work>/blobs/<sha[0:2]>/<sha> (read-only) and hard-linked into a tree
 * folder. Absolute paths, '..', backslashes, links and device files are refused and reported;
 * caps bound the entry count, each file, the total and the compression ratio (zip bombs).
 * Nothing is ever written outside the blob store and the given tree folder. */
#ifndef LSCAT_HARVEST_EXTRACT_H
#define LSCAT_HARVEST_EXTRACT_H

#include <stddef.h>
#include <stdint.h>

struct extract_limits {
    int64_t max_entries;     /* entries looked at (default 200,000) */
    int64_t max_file_bytes;  /* one kept file (default 16 MiB) */
    int64_t max_total_bytes; /* all kept files (default 512 MiB) */
    double max_ratio;        /* bytes inflated / archive bytes (default 100) */
};
#define EXTRACT_LIMITS_INIT { 200000, 16 << 20, 512 << 20, 100 }

/* Paths every tree can hold, wherever the work folder is: a longer name part is refused as
 * "name_too_long", a longer or deeper path as "too_deep". */
#define EXTRACT_MAX_NAME_BYTES 255
#define EXTRACT_MAX_PATH_BYTES 1024
#define EXTRACT_MAX_DEPTH 64 /* folders */

struct extract_file {
    char *path;        /* relative to the repository root */
    char sha256[65];
    int64_t size_bytes;
    const char *kind;  /* "cuda", "c", "cpp", "header", "build" (static) */
};

struct extract_refusal {
    char *path;
    const char *reason; /* static: "absolute_path", "dot_dot", "backslash", "symlink",
                           "hardlink", "device", "too_large", "unreadable", "entry_cap",
                           "total_cap", "ratio_cap", "name_too_long", "too_deep",
                           "unrepresentable" (the file system refused the name: a file
                           where a folder must go, bytes it cannot hold), "duplicate" (a
                           later copy of a kept path; the first copy is kept) */
};

struct extract_result {
    struct extract_file *files;
    size_t nfiles, files_cap;
    struct extract_refusal *refused;
    size_t nrefused, refused_cap;
    int64_t entries, bytes_kept, bytes_inflated, blobs_new;
    int aborted;       /* a cap stopped the extraction early (see the refusals) */
    const char *license_spdx; /* from a top-level LICENSE/COPYING file, NULL if none (static) */
};

void extract_result_init(struct extract_result *r);
void extract_result_release(struct extract_result *r);

/* The kind of file `path` is kept as, or NULL when it is not kept: .cu .cuh .cut → cuda;
 * .c → c; .cc .cpp .cxx .c++ → cpp; .h .hh .hpp .hxx .h++ .inl .inc .ipp .tpp .tcc → header;
 * Makefile, makefile, GNUmakefile, *.mk, CMakeLists.txt, *.cmake → build. */
const char *extract_kind(const char *path);

/* The SPDX id of a license text, recognised by its well-known phrases (MIT, Apache-2.0,
 * BSD-2/3-Clause, GPL-2.0/3.0, LGPL-2.1/3.0, AGPL-3.0, MPL-2.0, Unlicense, BSL-1.0), or
 * "NOASSERTION" for anything else. */
const char *extract_license_spdx(const char *text, size_t len);

/* Is `rel` (a path in the repository) a top-level license file (LICENSE, COPYING, ...)? */
int extract_is_license_file(const char *rel);

/* Extract `archive_path`. strip_top: drop the first path component (GitHub's
 * "<name>-<sha>/" folder). Kept files are stored under work_dir/blobs and linked under
 * tree_dir (created). Returns 0 (refusals are in `out`: anything wrong with single entries,
 * their names included, is refused there and the extraction goes on), LSCAT_EINVALID when
 * the archive cannot be read to its end (empty, cut short, damaged, not an archive: the tree
 * is then partial, throw it away), or LSCAT_ERR when writing locally failed (disk full,
 * permissions): the caller should stop rather than blame the repository. */
int extract_archive(struct extract_result *out, const char *archive_path, int strip_top,
                    const char *work_dir, const char *tree_dir, const struct extract_limits *lim);

/* The same for a checked-out folder (the git route); `.git` is skipped. */
int extract_dir(struct extract_result *out, const char *src_dir, const char *work_dir,
                const char *tree_dir, const struct extract_limits *lim);

/* Check one archive path and normalise it (collapse "//" and "./"); returns the refusal
 * reason or NULL when the path is acceptable. out gets the normalised path. */
const char *extract_check_path(char *out, size_t out_size, const char *path, int strip_top);

#endif
