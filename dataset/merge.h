/* `lscat dataset merge`: fold shard stores (separate nodes, nights or Slurm array tasks) into
 * one store without duplicates. Rows are matched on their natural keys — repos.full_name,
 * gpus.uuid, kernels.id, sources.root, files (repo, path), builds (kernel, arch), probes and
 * tune_kernels (kernel, GPU), measurements (their current key and measured_at), failures
 * (stage, subject, class, created_at), stage_runs (stage, started_at, host, pid) — and integer
 * ids are remapped, so merging the same shard twice adds nothing. */
#ifndef LSCAT_MERGE_H
#define LSCAT_MERGE_H

#include "store/store.h"

#include <stdint.h>

#define MERGE_MAX_TABLES 20

struct merge_result {
    int ntables;
    const char *tables[MERGE_MAX_TABLES]; /* static names */
    int64_t added[MERGE_MAX_TABLES];      /* rows added to the destination, per table */
};

/* Merge the store at `shard_path` into `dst` in one transaction. The shard must be an lscat
 * store of the same schema version (older ones: open them once with this lscat to migrate).
 * Adds to out's counts (call with a zeroed result first). */
int merge_shard(struct merge_result *out, struct store *dst, const char *shard_path);

#endif
