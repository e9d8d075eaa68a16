/* Tests of common/shard.c: --shard I/N parsing, Slurm array variables, and splits that cover
 * every item exactly once. */
#include "common/error.h"
#include "common/shard.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>

static void test_shard__parses_i_of_n_and_refuses_bad_values(void)
{
    struct shard s = SHARD_INIT;
    CHECK_OK(shard_parse(&s, "--shard", "2/5"));
    CHECK_INT(s.index, ==, 2);
    CHECK_INT(s.count, ==, 5);
    const char *bad[] = { "5/5", "-1/4", "1/0", "1", "a/4", "1/4x", "", NULL };
    for (int i = 0; bad[i]; i++) {
        CHECK_INT(shard_parse(&s, "--shard", bad[i]), ==, LSCAT_EINVALID);
        CHECK_CONTAINS(lscat_error_last(), "bad --shard");
    }
}

static void test_shard__takes_the_slurm_array_task_relative_to_its_minimum(void)
{
    struct shard s = SHARD_INIT;
    setenv("SLURM_ARRAY_TASK_ID", "7", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "4", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
    CHECK_OK(shard_from_env(&s));
    CHECK_INT(s.index, ==, 3);
    CHECK_INT(s.count, ==, 4);
    struct shard given = { .index = 1, .count = 2 }; /* --shard wins */
    CHECK_OK(shard_from_env(&given));
    CHECK_INT(given.index, ==, 1);
    setenv("SLURM_ARRAY_TASK_ID", "9", 1); /* outside min..min+count-1 */
    struct shard t = SHARD_INIT;
    CHECK_INT(shard_from_env(&t), ==, LSCAT_EINVALID);
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_MIN");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    struct shard u = SHARD_INIT;
    CHECK_OK(shard_from_env(&u));
    CHECK_INT(u.count, ==, 0);
}

static void test_shard__keys_and_positions_go_to_exactly_one_shard(void)
{
    int per_shard[3] = { 0 };
    for (int k = 0; k < 300; k++) {
        char key[32];
        snprintf(key, sizeof(key), "%08x", k * 2654435761u);
        int hits = 0, pos = 0;
        for (int i = 0; i < 3; i++) {
            struct shard s = { .index = i, .count = 3 };
            if (shard_has_key(&s, key)) {
                hits++;
                per_shard[i]++;
            }
            pos += shard_has(&s, k);
        }
        CHECK_INT(hits, ==, 1);
        CHECK_INT(pos, ==, 1);
    }
    for (int i = 0; i < 3; i++) /* roughly balanced: a hash, not a constant */
        CHECK_INT(per_shard[i], >, 60);
    struct shard none = SHARD_INIT;
    CHECK(shard_has_key(&none, "x") && shard_has(&none, 12));
}

int main(void)
{
    TEST_RUN(test_shard__parses_i_of_n_and_refuses_bad_values);
    TEST_RUN(test_shard__takes_the_slurm_array_task_relative_to_its_minimum);
    TEST_RUN(test_shard__keys_and_positions_go_to_exactly_one_shard);
    return test_done();
}
