/* Shards of a stage's work for batch queues: `--shard I/N` on the command line, or, when it is
 * not given, a Slurm job array's SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (the task's
 * offset from SLURM_ARRAY_TASK_MIN is its shard). Every stage splits its items the same way:
 * item k (0-based, in a deterministic order) belongs to shard k mod N (or a named item by the
 * hash of its name), so N shards cover all items exactly once, and shard stores merge (`lscat dataset merge`) without duplicates. */
#ifndef LSCAT_SHARD_H
#define LSCAT_SHARD_H

struct shard {
    int index;  /* 0 .. count-1 */
    int count;  /* 0 = not sharded (everything) */
};
#define SHARD_INIT { .index = 0, .count = 0 }

/* Parse "I/N" (0 <= I < N <= 65536). LSCAT_EINVALID with a message naming `opt_name`. */
int shard_parse(struct shard *out, const char *opt_name, const char *arg);
/* Fill from the Slurm array variables when `out` is not sharded yet and they are set. Returns
 * 0 (also when they are absent) or LSCAT_EINVALID when they are malformed. */
int shard_from_env(struct shard *out);
/* Does item k (0-based) belong to this shard? */
int shard_has(const struct shard *s, long long k);
/* Does the item named `key` (a kernel id) belong to this shard? By a hash of the key (FNV-1a,
 * 64-bit), so the split does not depend on which other items exist at the time: stages whose
 * item set grows between runs (execute, tune) shard by key, a fixed list (a sweep's records)
 * by position. */
int shard_has_key(const struct shard *s, const char *key);
/* "2/8", or "" when not sharded: for logs and stage_runs counts. */
void shard_describe(char out[32], const struct shard *s);

#endif
