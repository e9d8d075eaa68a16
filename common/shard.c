/* Shards for batch queues: `--shard I/N`, or the Slurm array variables, and the one rule by
 * which every stage splits its items (item k goes to shard k mod N). */
#include "common/shard.h"

#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int parse_num(long *out, const char *s, char **end)
{
    errno = 0;
    *out = strtol(s, end, 10);
    return errno || *end == s ? -1 : 0;
}

int shard_parse(struct shard *out, const char *opt_name, const char *arg)
{
    long i = -1, n = 0;
    char *end = NULL;
    if (parse_num(&i, arg, &end) < 0 || *end != '/' || parse_num(&n, end + 1, &end) < 0 ||
        *end || n < 1 || n > 65536 || i < 0 || i >= n)
        return lscat_error_setc(LSCAT_EINVALID, "bad %s '%s' (use I/N with 0 <= I < N, e.g. "
                                "0/4)", opt_name, arg);
    out->index = (int)i;
    out->count = (int)n;
    return 0;
}

int shard_from_env(struct shard *out)
{
    const char *id = getenv("SLURM_ARRAY_TASK_ID"), *count = getenv("SLURM_ARRAY_TASK_COUNT");
    const char *min = getenv("SLURM_ARRAY_TASK_MIN");
    if (out->count > 0 || !id || !count || !*id || !*count)
        return 0;
    long i, n, m = 0;
    char *end;
    if (parse_num(&i, id, &end) < 0 || *end || parse_num(&n, count, &end) < 0 || *end ||
        (min && *min && (parse_num(&m, min, &end) < 0 || *end)) || n < 1 || i - m < 0 ||
        i - m >= n)
        return lscat_error_setc(LSCAT_EINVALID, "cannot take the shard from SLURM_ARRAY_TASK_ID"
                                "=%s, SLURM_ARRAY_TASK_COUNT=%s, SLURM_ARRAY_TASK_MIN=%s (use "
                                "a contiguous array, e.g. --array=0-3, or give --shard I/N)",
                                id, count, min ? min : "");
    out->index = (int)(i - m);
    out->count = (int)n;
    return 0;
}

int shard_has(const struct shard *s, long long k)
{
    return s->count <= 1 || k % s->count == s->index;
}

int shard_has_key(const struct shard *s, const char *key)
{
    unsigned long long h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return s->count <= 1 || h % (unsigned long long)s->count == (unsigned long long)s->index;
}

void shard_describe(char out[32], const struct shard *s)
{
    if (s->count > 0)
        snprintf(out, 32, "%d/%d", s->index, s->count);
    else
        out[0] = '\0';
}
