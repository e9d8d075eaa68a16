/* Test support for execute: a work folder and store holding fixture kernels from
 * tests/execute/fixtures/kernels/<name>/ (kernel.cu, optional harness.cu), laid out as
 * CONTRACTS.md says, all pointing at the fixture repository tests/execute/fixtures/repo. */
#ifndef LSCAT_TESTS_EXECUTE_FIXTURE_H
#define LSCAT_TESTS_EXECUTE_FIXTURE_H

#include "store/store.h"

struct fixture_env {
    char *work;        /* absolute, mode 0755 (reachable by the sandbox's unprivileged uid) */
    char *root;        /* the lscat source tree */
    struct store *s;
    int64_t run_id;    /* a stage_runs row for the library calls */
};

/* The lscat source tree ($LSCAT_ROOT, else "."), absolute. Caller frees. */
char *fixture_source_root(void);
/* Create a fresh work folder and store. Returns 0 or a negative code. */
int fixture_env_init(struct fixture_env *env);
/* Add kernel `name` (status 'isolated'); *id_out (65 bytes) receives its id. */
int fixture_add_kernel(struct fixture_env *env, const char *name, char id_out[65]);
/* The same with a chosen id (e.g. several copies of one fixture under a common id prefix, for
 * --kernel). */
int fixture_add_kernel_as(struct fixture_env *env, const char *name, const char *id);
/* Add the golden isolated kernel `name` (tests/isolate/fixtures/harness-golden/<name>: its
 * folder and parameter model, as isolate would have), its id the SHA-256 of `seed`. Returns 0 or
 * a negative code. */
int fixture_add_golden(struct fixture_env *env, const char *name, const char *seed,
                       int param_count, char id_out[65]);
/* Close the store, remove the folder. */
void fixture_env_release(struct fixture_env *env);
/* Whether nvcc can be found (the same search as execute). */
int fixture_have_nvcc(void);
/* Whether a CUDA device is there (execute's own GPU listing): GPU tests skip without one. */
int fixture_have_gpu(void);
/* Run `lscat tune ARGS` on the fixture's store and work folder (lscat from $LSCAT_BIN, else
 * build/bin), its output in <work>/tune.log. Returns system()'s status. */
int fixture_run_tune(const struct fixture_env *env, const char *args);
/* One value of `sql` (one `?`: the kernel id) from the env's store, checked: text (caller
 * frees; NULL for no row) or an integer (-1 for no row). */
char *fixture_query_text(const struct fixture_env *env, const char *sql, const char *id);
int64_t fixture_query_int(const struct fixture_env *env, const char *sql, const char *id);

#endif
