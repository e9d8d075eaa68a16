/* The test support that GPU tests use to add a golden isolated kernel (fixture_add_golden),
 * checked here without a GPU: its files are laid out as isolate lays them out and its row is
 * in the store. */
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include "common/error.h"
#include "common/fs.h"

#include <stdlib.h>
#include <string.h>

static void test_fixture__a_golden_kernel_is_added_with_its_files_and_row(void)
{
    struct fixture_env env;
    char id[65], *dir = NULL, *name = NULL;
    CHECK_OK(fixture_env_init(&env));
    CHECK_OK(fixture_add_golden(&env, "saxpy", "golden:saxpy", 4, id));
    CHECK_INT((int)strlen(id), ==, 64);
    CHECK_OK(store_query_text(&dir, env.s, "SELECT dir FROM kernels WHERE id = ? AND "
                              "param_count = 4", "t", id));
    CHECK(dir != NULL);
    const char *files[] = { "kernel.cu", "harness.cu", "params.json" };
    for (int i = 0; dir && i < 3; i++) {
        char *d = fs_join(env.work, dir), *f = fs_join(d, files[i]);
        CHECK(fs_exists(f));
        free(d);
        free(f);
    }
    int64_t n = -1;
    CHECK_OK(store_query_int(&n, env.s, "SELECT count(*) FROM kernel_occurrences WHERE "
                             "kernel_id = ?", "t", id));
    CHECK_INT((int)n, ==, 1);
    CHECK_OK(store_query_text(&name, env.s, "SELECT k.name FROM kernels k JOIN "
                              "kernel_occurrences o ON o.kernel_id = k.id WHERE k.id = ?", "t",
                              id));
    CHECK_STR(name, "saxpy");
    CHECK_INT(fixture_add_golden(&env, "no_such_kernel", "golden:x", 4, id), <, 0);
    free(dir);
    free(name);
    fixture_env_release(&env);
}

int main(void)
{
    TEST_RUN(test_fixture__a_golden_kernel_is_added_with_its_files_and_row);
    return test_done();
}
