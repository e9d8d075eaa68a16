#include "dataset/merge.h"
#include "common/error.h"
int merge_shard(struct merge_result *out, struct store *dst, const char *shard_path)
{
    (void)out; (void)dst;
    return lscat_error_set("merge of '%s': not implemented yet", shard_path);
}
