/* A chunk's store for lscat-mpi: a small SQLite store holding only what one chunk of execute or
 * tune work reads (its kernels, their builds, probes, tune state and current measurements, the
 * GPUs and stage runs), cut from a copy of the whole store, and, after the stage ran on it,
 * trimmed to what the stage wrote, so that copying and merging scale with the chunk, not with
 * the store. No MPI here: lscat-mpi's workers call it, tests call it directly. */
#ifndef LSCAT_TUNE_CHUNKSTORE_H
#define LSCAT_TUNE_CHUNKSTORE_H

#include <stdint.h>

enum chunkstore_stage { CHUNKSTORE_EXECUTE = 0, CHUNKSTORE_TUNE = 1 };

/* What a chunk store held when it was cut: its rows at or below these ids are copies. */
struct chunkstore_mark {
    int64_t measurements;
};

/* An empty store of this lscat's schema at `path` (created; removed first when present): the
 * template every chunk store starts from. */
int chunkstore_template(const char *path);

/* Cut the chunk store `path` from `template_path` (an empty store, copied) and `base_path` (the
 * whole store): the kernels named in `ids` (separated by newlines) with their rows for `stage`.
 * *mark says which measurement rows are copies. */
int chunkstore_cut(struct chunkstore_mark *mark, const char *path, const char *template_path,
                   const char *base_path, enum chunkstore_stage stage, const char *ids);

/* Before shipping: drop the copied measurement rows (the merge supersedes from the new ones), so
 * that only what the stage added or changed goes back. */
int chunkstore_trim(const char *path, const struct chunkstore_mark *mark);

#endif
