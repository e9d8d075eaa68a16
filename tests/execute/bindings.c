/* The probe's search over role bindings (execute/probe.c probe_run) against real child
 * processes in the real sandbox: tune's stand-in harness plays a kernel whose configurations
 * fail under some --bind (no GPU here), a stand-in compute-sanitizer reports out-of-bounds
 * accesses for chosen bindings. Checks which binding is kept and what each try recorded. */
#include "common/blockeq.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/probe.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SIZE_PARAMS "{\"params\":[{\"name\":\"A\",\"role\":\"buffer\"},{\"name\":\"n\",\"role\":\"size\"}]}"
#define SIZE_PARAMS_2D "{\"is2d\":true,\"params\":[{\"name\":\"A\",\"role\":\"buffer\"},{\"name\":\"n\",\"role\":\"size\"}]}"
#define NO_SIZE_PARAMS_2D "{\"is2d\":true,\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}]}"
#define NO_SIZE_PARAMS "{\"params\":[{\"name\":\"A\",\"role\":\"buffer\"},{\"name\":\"w\",\"role\":\"width\"}]}"
#define TOKENS_PARAMS                                                                      \
    "{\"params\":[{\"name\":\"out\",\"kind\":\"pointer\",\"role\":\"buffer\"},"                  \
    "{\"name\":\"B\",\"kind\":\"scalar\",\"role\":\"scale\"},{\"name\":\"T\",\"kind\":\"scalar\","   \
    "\"role\":\"scale\"},{\"name\":\"C\",\"kind\":\"scalar\",\"role\":\"scale\"}]}"
/* sgemm's names: one dim by name (N) and a buffer named C: not a transformer's */
#define GEMM_PARAMS                                                                        \
    "{\"params\":[{\"name\":\"N\",\"kind\":\"scalar\",\"role\":\"size\"},{\"name\":\"C\","         \
    "\"kind\":\"pointer\",\"role\":\"buffer\"}]}"

/* A kernel with hard-coded sizes (isolate's params.json "fixed": no integer parameter, the
 * source's buffers and grid), launched by its source with 256 threads */
#define FIXED_PARAMS                                                                       \
    "{\"is2d\":false,\"indexing\":\"grid_stride\",\"launch\":{\"block\":[256,1,1],"              \
    "\"smem\":65536,\"grid_sm\":2},"                                                         \
    "\"fixed\":{\"size\":[4096,4096],\"bytes\":201326592,\"buffers\":{\"A\":33554432},"        \
    "\"grid\":[\"sm*2\",1,1]},\"params\":[{\"name\":\"A\",\"kind\":\"pointer\","             \
    "\"role\":\"buffer\"},{\"name\":\"alpha\",\"kind\":\"scalar\",\"role\":\"scale\"}]}"

/* The same record on a 1D kernel: its work follows the grid, so W x H goes first */
#define FIXED_PARAMS_1D                                                                    \
    "{\"is2d\":false,\"indexing\":\"1d\",\"launch\":{\"block\":[128,1,1],\"grid\":[8,1,1]},"    \
    "\"fixed\":{\"size\":[32,32],\"bytes\":4096,\"buffers\":{\"A\":4096},\"grid\":[8,1,1]},"     \
    "\"params\":[{\"name\":\"A\",\"kind\":\"pointer\",\"role\":\"buffer\"}]}"

static int counter;
static int no_retry; /* set by tests about something else than the block retry */
static int fault_budget = PROBE_FAULT_BUDGET; /* --probe-faults */
static int guard = 1;                         /* --no-probe-guard: 0 */

/* A folder (reachable by the sandbox's unprivileged uid) holding a copy of the stand-in harness
 * that behaves as `behavior` says; *out_harness is its path. Returns the folder. */
static char *harness_with(char **out_harness, const char *behavior)
{
    const char *tb = getenv("LSCAT_TEST_BIN");
    char *dir = xasprintf("%s/h%d", test_tmpdir(), counter++);
    chmod(test_tmpdir(), 0755);
    CHECK_OK(fs_mkdirs(dir, 0755));
    *out_harness = fs_join(dir, "harness");
    char *cmd = xasprintf("cp %s/tune/support/fake_harness %s", tb && *tb ? tb : "build/tests",
                          *out_harness);
    CHECK(system(cmd) == 0);
    free(cmd);
    char *b = xasprintf("%s.behavior", *out_harness);
    test_write_file(b, behavior, strlen(behavior));
    chmod(b, 0644);
    free(b);
    return dir;
}

/* A stand-in compute-sanitizer: runs the harness, then reports a clean run when it was bound to
 * one of `clean` (space-separated), else an out-of-bounds read. */
static char *sanitizer_with(const char *dir, const char *clean)
{
    char *p = fs_join(dir, "compute-sanitizer");
    char *text = xasprintf(
        "#!/bin/sh\nb=area; prev=\nfor a in \"$@\"; do [ \"$prev\" = --bind ] && b=$a; "
        "prev=$a; done\nwhile [ \"$1\" != 86 ]; do shift; done; shift\n\"$@\" >/dev/null 2>&1\n"
        "case \" %s \" in *\" $b \"*) echo '========= ERROR SUMMARY: 0 errors' ;;\n"
        "*) echo '========= Invalid __global__ read of size 4 bytes'; "
        "echo '========= ERROR SUMMARY: 1 error'; exit 86 ;; esac\n", clean);
    test_write_file(p, text, strlen(text));
    chmod(p, 0755);
    free(text);
    return p;
}

static void probe(struct probe_result *out, const char *behavior, const char *params,
                  int large, const char *clean)
{
    char *h = NULL, *dir = harness_with(&h, behavior);
    char *scratch = fs_join(dir, "scratch");
    char *san = clean ? sanitizer_with(dir, clean) : NULL;
    struct probe_options o = PROBE_OPTIONS_INIT;
    o.harness = h;
    o.scratch = scratch;
    o.work_dir = dir;
    o.timeout_s = 10; /* a hang never ends; every other stand-in run exits at once */
    o.params = params;
    o.large = large;
    o.sanitizer = san;
    o.retry_blocks = !no_retry;
    o.fault_budget = fault_budget;
    o.guard = guard;
    CHECK_OK(probe_run(out, &o));
    printf("# %s -> %s %s | %s\n", params ? params + 10 : "-", out->binding,
           probe_outcome_name(out->outcome), out->bindings);
    free(h);
    free(dir);
    free(scratch);
    free(san);
}

static int tries(const struct probe_result *p)
{
    int n = 0;
    for (const char *s = p->bindings; s && (s = strstr(s, "{\"binding\":")); s++)
        n++;
    return n;
}

static void test_bindings__the_default_is_kept_when_it_runs_clean(void)
{
    struct probe_result p;
    probe(&p, "", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
}

static void test_bindings__an_overrun_at_the_large_size_moves_to_side(void)
{
    struct probe_result p;
    probe(&p, "sticky 2024 2024 * * area\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_INT(tries(&p), ==, 2);
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"illegal_address\","
                               "\"detail\":\"an illegal memory access was encountered (at "
                               "2024x2024, block 16x16x1)\"");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"side\",\"outcome\":\"ok\",\"detail\":null");
    probe_result_release(&p);
}

static void test_bindings__without_the_large_size_the_overrun_stays_hidden(void)
{
    struct probe_result p;
    probe(&p, "sticky 2024 2024 * * area\n", SIZE_PARAMS, 0, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    probe_result_release(&p);
}

static void test_bindings__a_kernel_without_size_parameters_tries_only_the_default(void)
{
    struct probe_result p;
    /* nothing to choose: the large size is not run (tune gives up what fails there) */
    probe(&p, "sticky 2024 2024 * * area\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK(!p.small_only);
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    no_retry = 1; /* every block faults at 64x64: the block retry would add its tries */
    probe(&p, "sticky 64 64 * * area\n", NO_SIZE_PARAMS, 2024, NULL);
    no_retry = 0;
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_INT(tries(&p), ==, 1);
    CHECK(!probe_binding_matters(1, NO_SIZE_PARAMS));
    CHECK(probe_binding_matters(1, SIZE_PARAMS));
    CHECK(probe_binding_matters(1, NULL));
    CHECK(probe_binding_matters(0, NO_SIZE_PARAMS));
    probe_result_release(&p);
}

static void test_bindings__when_every_binding_fails_the_default_reason_is_kept(void)
{
    struct probe_result p;
    probe(&p, "sticky 64 64 * * area\ncrash 1024 1 * * side\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_CONTAINS(p.detail, "at 64x64, block 16x16x1");
    CHECK_STR(p.binding, "area");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"side\",\"outcome\":\"crash\"");
    probe_result_release(&p);
}

static void test_bindings__failing_large_everywhere_keeps_the_first_clean_at_small_sizes(void)
{
    struct probe_result p;
    /* area overruns at the large size, side breaks a small one: runnable as before bindings,
     * with the default, and the detail says what failed; then a hang at the large size */
    probe(&p, "sticky 2024 2024 * * area\nsticky 1024 1 * * side\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK(p.small_only);
    CHECK_CONTAINS(p.detail, "small sizes only; at 2024x2024: illegal_address: an illegal "
                             "memory access was encountered (at 2024x2024, block 16x16x1)");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"illegal_address\"");
    probe_result_release(&p);
    probe(&p, "hang 2024 2024 * *\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK(p.small_only);
    CHECK_CONTAINS(p.detail, "at 2024x2024: timeout");
    CHECK_INT(tries(&p), ==, 2);
    probe_result_release(&p);
}

static void test_bindings__a_sanitizer_report_moves_to_the_next_binding(void)
{
    struct probe_result p;
    probe(&p, "", SIZE_PARAMS, 2024, "side");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_STR(p.sanitizer, "clean");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"ok\",\"detail\":null,"
                               "\"sanitizer\":\"out_of_bounds\"");
    probe_result_release(&p);
}

static void test_bindings__flagged_everywhere_keeps_the_first_that_ran_with_its_report(void)
{
    struct probe_result p;
    probe(&p, "", SIZE_PARAMS, 2024, "none");
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_STR(p.sanitizer, "out_of_bounds");
    CHECK_INT(tries(&p), ==, 2);
    probe_result_release(&p);
}

/* A 2D kernel with a fixed 16x16 shared tile overruns it with the 256-thread 1D block (the
 * stand-in fails stickily for every 1D block): the 2D-only plan finds it runnable. */
static void test_bindings__a_2d_kernel_is_probed_with_2d_blocks_only(void)
{
    struct probe_result p;
    probe(&p, "sticky * * * 1\n", SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK(!p.small_only);
    CHECK(p.detail == NULL);
    CHECK_INT(tries(&p), ==, 1);
    CHECK_CONTAINS(p.bindings, "\"configs\":[\"64x64 16x16x1\",\"2024x2024 16x16x1\"]}");
    CHECK(strstr(p.bindings, "256x1x1") == NULL);
    probe_result_release(&p);
    /* without a size parameter: the small 2D configuration only */
    probe(&p, "sticky * * * 1\n", NO_SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_CONTAINS(p.bindings, "\"configs\":[\"64x64 16x16x1\"]}");
    probe_result_release(&p);
    CHECK(probe_is2d(SIZE_PARAMS_2D));
    CHECK(!probe_is2d(SIZE_PARAMS));
    CHECK(!probe_is2d(NULL));
}

static void test_bindings__a_1d_kernel_keeps_both_block_shapes(void)
{
    struct probe_result p;
    probe(&p, "sticky * * * 1\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_CONTAINS(p.detail, "at 1024x1, block 256x1x1");
    CHECK_CONTAINS(p.bindings, "\"configs\":[\"1024x1 256x1x1\",\"64x64 16x16x1\","
                               "\"2024x2024 16x16x1\",\"2024x2024 256x1x1\"]}");
    probe_result_release(&p);
}

static void test_bindings__a_2d_kernel_failing_with_2d_blocks_still_fails(void)
{
    struct probe_result p;
    probe(&p, "sticky 64 64 * *\n", SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_CONTAINS(p.detail, "at 64x64, block 16x16x1");
    CHECK(p.block == NULL);
    CHECK_INT(tries(&p), ==, 8); /* 2 bindings x (16x16 and the 3 retry shapes) */
    probe_result_release(&p);
    /* clean at its one small configuration, failing at the large one in both bindings */
    probe(&p, "sticky 2024 2024 * *\n", SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK(p.small_only);
    CHECK(p.block == NULL);
    CHECK_CONTAINS(p.detail, "small sizes only; at 2024x2024: illegal_address");
    probe_result_release(&p);
}

/* Block retry: a 1D kernel whose shared array holds 128 threads (`s[BDIM + 2 * R]`) faults
 * with the probe's 256x1 and 16x16 blocks under every binding and runs clean with 128x1,
 * which tune's sweep has too. */
static void test_bindings__a_1d_kernel_with_a_smaller_fixed_tile_runs_with_a_retried_block(void)
{
    struct probe_result p;
    probe(&p, "sticky * * 256 1\nsticky * * 16 16\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_STR(p.block, "128x1x1");
    CHECK(!p.small_only);
    CHECK_INT(tries(&p), ==, 3);
    CHECK_CONTAINS(p.detail, "block 128x1x1; with the probe's own blocks: illegal_address: an "
                             "illegal memory access was encountered (at 1024x1, block 256x1x1)");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"area\",\"outcome\":\"ok\",\"detail\":null,"
                               "\"sanitizer\":null,\"sanitizer_detail\":null,\"block\":"
                               "\"128x1x1\",\"configs\":[\"1024x1 128x1x1\",\"64x64 128x1x1\","
                               "\"2024x2024 128x1x1\"]");
    probe_result_release(&p);
    /* a tile of 32: 128 and 64 fault too, 32 runs */
    probe(&p, "sticky * * 256 1\nsticky * * 16 16\nsticky * * 128 1\nsticky * * 64 1\n",
          NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "32x1x1");
    CHECK_INT(tries(&p), ==, 4);
    CHECK_CONTAINS(p.bindings, "\"configs\":[\"1024x1 32x1x1\",\"64x64 32x1x1\"]}");
    probe_result_release(&p);
}

/* Block retry, 2D: an 8x8 tile runs with 8x8; an `assert(blockDim.x == 32)` with 32x8. */
static void test_bindings__a_2d_kernel_with_another_tile_runs_with_a_retried_block(void)
{
    struct probe_result p;
    probe(&p, "sticky 64 64 16 16\n", SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "8x8x1");
    CHECK_CONTAINS(p.bindings, "\"block\":\"8x8x1\",\"configs\":[\"64x64 8x8x1\","
                               "\"2024x2024 8x8x1\"]");
    probe_result_release(&p);
    probe(&p, "sticky * * 16 16\nsticky * * 8 8\n", NO_SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "32x8x1");
    CHECK_INT(tries(&p), ==, 3);
    probe_result_release(&p);
    /* clean at 64x64 with 8x8 only, faulting at the large size: small sizes only, that block */
    probe(&p, "sticky * * 16 16\nsticky 2024 2024 * *\n", SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK(p.small_only);
    CHECK_STR(p.block, "8x8x1");
    CHECK_CONTAINS(p.detail, "block 8x8x1: small sizes only; at 2024x2024: illegal_address");
    probe_result_release(&p);
}

/* The source's own launch (isolate's "launch" in kernels.params) is the first retry shape: a
 * kernel written for 24x4 blocks runs with them at the first retry, before 8x8, 32x8 and 32x32
 * (which fault here too), and the verdict says it is the source's. */
#define SRC_LAUNCH_2D "{\"is2d\":true,\"launch\":{\"block\":[24,4,1],\"smem\":73728}," \
                      "\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}]}"
static void test_bindings__the_source_block_is_the_first_retry_shape(void)
{
    struct probe_result p;
    probe(&p, "sticky * * 16 16\nsticky * * 8 8\nsticky * * 32 8\nsticky * * 32 32\n",
          SRC_LAUNCH_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "24x4x1");
    CHECK_INT(tries(&p), ==, 2); /* the own 16x16, then the source's */
    CHECK_CONTAINS(p.detail, "block 24x4x1 (the source's launch); with the probe's own blocks: "
                             "illegal_address");
    CHECK_CONTAINS(p.bindings, "\"block\":\"24x4x1\",\"configs\":[\"64x64 24x4x1\"]");
    probe_result_release(&p);
    /* the source's block faulting too: the fixed shapes follow, without a second 24x4 */
    probe(&p, "sticky * * 16 16\nsticky * * 8 8\nsticky * * 24 4\n", SRC_LAUNCH_2D, 2024, NULL);
    CHECK_STR(p.block, "32x8x1");
    CHECK_INT(tries(&p), ==, 4);
    CHECK(strstr(p.detail, "the source's launch") == NULL);
    probe_result_release(&p);
}

/* `__launch_bounds__(64)`: the probe's own 256-thread blocks and the retry's 128 and 1024 are
 * refused by the launch (`invalid argument`), so they are not run: the first run is 64x1. */
#define BOUNDS_64 "{\"launch_bounds\":64,\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}," \
                  "{\"name\":\"w\",\"role\":\"width\"}]}"
static void test_bindings__shapes_over_the_launch_bounds_are_not_tried(void)
{
    struct probe_result p;
    probe(&p, "sticky * * 256 1\nsticky * * 16 16\nsticky * * 128 1\nsticky * * 1024 1\n",
          BOUNDS_64, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(tries(&p), ==, 1);
    CHECK_CONTAINS(p.detail, "block 64x1x1; with the probe's own blocks: not run, over its "
                             "__launch_bounds__");
    CHECK(strstr(p.bindings, "256x1x1") == NULL && strstr(p.bindings, "128x1x1") == NULL);
    probe_result_release(&p);
    /* every shape within the bounds faulting: the verdict is the last fault, no 128 or 1024 run */
    probe(&p, "sticky * * 64 1\nsticky * * 32 1\n", BOUNDS_64, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_INT(tries(&p), ==, 2);
    CHECK(strstr(p.bindings, "128x1x1") == NULL && strstr(p.bindings, "1024x1x1") == NULL);
    probe_result_release(&p);
}

/* `assert(blockDim.x == WARP_SIZE); assert(ROWS == blockDim.y)` (llm.c's kernels; isolate's
 * "block_eq"): every other block fires a device-side assert, so neither the probe's own blocks
 * nor the retry shapes against it are run: the first run is the one shape that fits. */
#define ASSERT_32x8 "{\"is2d\":true,\"block_eq\":[32,8,0],\"params\":[{\"name\":\"A\"," \
                    "\"role\":\"buffer\"}]}"
#define ASSERT_X64 "{\"block_eq\":[64,0,0],\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}," \
                   "{\"name\":\"w\",\"role\":\"width\"}]}"
#define ASSERT_X48 "{\"block_eq\":[48,0,0],\"params\":[{\"name\":\"A\",\"role\":\"buffer\"}," \
                   "{\"name\":\"w\",\"role\":\"width\"}]}"
#define ASSERT_ANY "sticky * * 256 1\nsticky * * 16 16\nsticky * * 8 8\nsticky * * 32 32\n" \
                   "sticky * * 128 1\nsticky * * 32 1\nsticky * * 1024 1\n"
static void test_bindings__shapes_against_a_block_assert_are_not_tried(void)
{
    struct probe_result p;
    probe(&p, ASSERT_ANY, ASSERT_32x8, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "32x8x1");
    CHECK_INT(tries(&p), ==, 1);
    CHECK_CONTAINS(p.detail, "block 32x8x1; with the probe's own blocks: not run, against its "
                             "block assert");
    CHECK(strstr(p.bindings, "16x16x1") == NULL && strstr(p.bindings, "8x8x1") == NULL);
    probe_result_release(&p);
    /* 1D, x = 64: of 128, 64, 32, 1024 only 64 */
    probe(&p, ASSERT_ANY, ASSERT_X64, 2024, NULL);
    CHECK_STR(p.block, "64x1x1");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    /* x = 48, no listed shape: one made from the assert */
    probe(&p, ASSERT_ANY, ASSERT_X48, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "48x1x1");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    /* a shape that fits and faults anyway: the verdict is its fault, nothing else is run */
    probe(&p, "sticky * * 32 8\n", ASSERT_32x8, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    /* --no-block-retry: the probe's own blocks, as for any kernel */
    no_retry = 1;
    probe(&p, "", ASSERT_32x8, 2024, NULL);
    no_retry = 0;
    CHECK(p.block == NULL);
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    int eq[3];
    CHECK_INT(block_eq_parse(eq, ASSERT_32x8), ==, 1);
    CHECK(eq[0] == 32 && eq[1] == 8 && eq[2] == 0);
    CHECK_INT(block_eq_parse(eq, SIZE_PARAMS), ==, 0);
    CHECK(block_eq_fits(eq, 16, 16, 1));
}

/* kernels.params read back: the source's block and launch bounds, absent parts zero. */
static void test_bindings__the_source_launch_is_read_from_params(void)
{
    int b[3], bounds;
    CHECK_INT(probe_source_launch(b, &bounds, SRC_LAUNCH_2D), ==, 1);
    CHECK(b[0] == 24 && b[1] == 4 && b[2] == 1 && bounds == 0);
    CHECK_INT(probe_source_launch(b, &bounds, BOUNDS_64), ==, 0);
    CHECK(b[0] == 0 && bounds == 64);
    CHECK_INT(probe_source_launch(b, &bounds, NULL), ==, 0);
}

/* No retry where another block cannot help or cannot be seen: a crash, a run that reported no
 * configuration, and with the retry switched off (--no-block-retry). */
static void test_bindings__the_block_retry_follows_faults_only(void)
{
    struct probe_result p;
    probe(&p, "crash 1024 1 * *\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "crash");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    probe(&p, "refuse\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "cuda_error");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    no_retry = 1;
    probe(&p, "sticky * * 256 1\nsticky * * 16 16\n", SIZE_PARAMS, 2024, NULL);
    no_retry = 0;
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK(p.block == NULL);
    CHECK_INT(tries(&p), ==, 2);
    CHECK(strstr(p.bindings, "\"block\"") == NULL);
    probe_result_release(&p);
}

/* A 1D kernel that ran at 1024x1 with 256-wide blocks and hangs at 64x64 with 16x16 (a loop
 * stepping by blockDim.x / warpSize: 0 at 16 wide) runs with the 1D retry shapes; one hanging
 * at its first configuration is not retried (a hang no shape changes). */
static void test_bindings__a_1d_kernel_hanging_only_with_16x16_runs_with_a_1d_retry_block(void)
{
    struct probe_result p;
    probe(&p, "hang 64 64 16 16\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "128x1x1");
    CHECK_INT(tries(&p), ==, 2);
    CHECK_CONTAINS(p.detail, "block 128x1x1; with the probe's own blocks: timeout");
    probe_result_release(&p);
    probe(&p, "hang * * * *\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "timeout");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
}

/* tokens: a kernel with a transformer's dims (B, T, C scalars, read as scales) faulting under
 * area (C = 1: misaligned float4 loads) runs under tokens (B = 1, T = H, C = W). */
static void test_bindings__a_transformer_kernel_failing_under_area_runs_under_tokens(void)
{
    struct probe_result p;
    probe(&p, "sticky * * * * area\n", TOKENS_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "tokens");
    CHECK_INT(tries(&p), ==, 2); /* area, then tokens: side changes none of its values */
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"tokens\",\"outcome\":\"ok\"");
    probe_result_release(&p);
    CHECK(probe_binding_matters(2, TOKENS_PARAMS));
    CHECK(!probe_binding_matters(1, TOKENS_PARAMS));
    CHECK(!probe_binding_matters(2, GEMM_PARAMS));
    CHECK(!probe_binding_matters(2, SIZE_PARAMS));
    CHECK(probe_binding_matters(2, NULL));
}

/* tiles (docs/execute.md "The source's grid"): a tiled GEMM whose source computes its grid
 * from M and N (params "grid_expr") and faults under area and side runs under tiles, tried
 * only with the source's block: a 2D kernel written for 256x1 blocks gets it in the block
 * retry (its own 16x16 shapes do not run tiles), a 1D one at once with its own 256x1. */
#define TILED_2D "{\"is2d\":true,\"launch\":{\"block\":[256,1,1],\"smem\":0,\"grid_expr\":" \
                 "[\"cdiv(N,64)\",\"cdiv(M,64)\",\"1\"]},\"params\":[{\"name\":\"M\",\"role\":" \
                 "\"size\"},{\"name\":\"N\",\"role\":\"size\"},{\"name\":\"C\",\"role\":\"buffer\"}]}"
#define TILED_1D "{\"launch\":{\"block\":[256,1,1],\"smem\":65536,\"grid_expr\":[\"16\"," \
                 "\"cdiv(M,256)\",\"cdiv(N,2048)\"]},\"params\":[{\"name\":\"M\",\"role\":" \
                 "\"size\"},{\"name\":\"N\",\"role\":\"size\"},{\"name\":\"C\",\"role\":\"buffer\"}]}"
#define TILED_WIDTH "{\"launch\":{\"block\":[256,1,1],\"smem\":0,\"grid_expr\":" \
                    "[\"cdiv(w,256)\",\"1\",\"1\"]},\"params\":[{\"name\":\"w\",\"role\":" \
                    "\"width\"},{\"name\":\"C\",\"role\":\"buffer\"}]}"
static void test_bindings__a_tiled_kernel_faulting_under_area_and_side_runs_under_tiles(void)
{
    struct probe_result p;
    probe(&p, "sticky * * * * area\nsticky * * * * side\n", TILED_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "tiles");
    CHECK_STR(p.block, "256x1x1");
    /* area, side at 16x16; with the source's 256x1, tiles first (docs/execute.md "Block retry") */
    CHECK_INT(tries(&p), ==, 3);
    CHECK_CONTAINS(p.detail, "block 256x1x1 (the source's launch); with the probe's own blocks");
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"tiles\",\"outcome\":\"ok\"");
    CHECK(strstr(p.bindings, "\"tiles\",\"outcome\":\"illegal") == NULL);
    CHECK(strstr(p.bindings, "\"block\":\"256x1x1\"") == strstr(p.bindings, "\"block\""));
    probe_result_release(&p);
    /* tiles faulting with the source's block too: area and side with it follow, as before */
    probe(&p, "sticky * * 16 16 area\nsticky * * * * side\nsticky * * * * tiles\n", TILED_2D,
          2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_STR(p.block, "256x1x1");
    CHECK_INT(tries(&p), ==, 4); /* area, side at 16x16; tiles, then area at 256x1 */
    probe_result_release(&p);
    probe(&p, "sticky * * * * area\nsticky * * * * side\n", TILED_1D, 2024, NULL);
    CHECK_STR(p.binding, "tiles");
    CHECK(p.block == NULL); /* the probe's own 256x1 is the source's block */
    CHECK_INT(tries(&p), ==, 3);
    CHECK_CONTAINS(p.bindings, "\"2024x2024 256x1x1\""); /* side asks for the large size */
    probe_result_release(&p);
    /* a kernel that runs under area never gets to tiles */
    probe(&p, "", TILED_2D, 2024, NULL);
    CHECK_STR(p.binding, "area");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
    /* tiles alone does not ask for the large size (only widths: side changes nothing) */
    probe(&p, "sticky * * * * area\n", TILED_WIDTH, 2024, NULL);
    CHECK_STR(p.binding, "tiles");
    CHECK(strstr(p.bindings, "2024x2024") == NULL);
    probe_result_release(&p);
    CHECK(probe_binding_matters(3, TILED_2D));
    CHECK(!probe_binding_matters(3, SIZE_PARAMS));
    CHECK(!probe_binding_matters(3, SRC_LAUNCH_2D));
}

/* A tiled 2D kernel whose tries with the probe's own blocks ran clean at the small sizes only
 * (area and side fault at 2024x2024; its source's block, 256x1, is not one of the own 16x16
 * shapes, so tiles was never tried): tiles with the source's block, once, kept where it runs at
 * the large size too. */
static void test_bindings__a_small_only_tiled_kernel_gets_tiles_with_the_sources_block(void)
{
    struct probe_result p;
    probe(&p, "sticky 2024 2024 * * area\nsticky 2024 2024 * * side\n", TILED_2D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "tiles");
    CHECK_STR(p.block, "256x1x1");
    CHECK(!p.small_only);
    CHECK_INT(tries(&p), ==, 3); /* area, side at 16x16 (small sizes only); tiles at 256x1 */
    CHECK_CONTAINS(p.detail, "block 256x1x1 (the source's launch); with the probe's own blocks: "
                             "illegal_address: an illegal memory access was encountered (at "
                             "2024x2024, block 16x16x1)");
    CHECK_CONTAINS(p.bindings, "\"2024x2024 256x1x1\"");
    probe_result_release(&p);
    /* tiles small only too: the first small-only try stays */
    probe(&p, "sticky 2024 2024 * *\n", TILED_2D, 2024, NULL);
    CHECK_STR(p.binding, "area");
    CHECK(p.small_only);
    CHECK(p.block == NULL);
    CHECK_INT(tries(&p), ==, 3);
    probe_result_release(&p);
    /* --no-block-retry: the probe's own blocks only */
    no_retry = 1;
    probe(&p, "sticky 2024 2024 * *\n", TILED_2D, 2024, NULL);
    no_retry = 0;
    CHECK_STR(p.binding, "area");
    CHECK(p.small_only);
    CHECK_INT(tries(&p), ==, 2);
    probe_result_release(&p);
    /* no grid over its sizes in the source: nothing more */
    probe(&p, "sticky 2024 2024 * *\n", SIZE_PARAMS_2D, 2024, NULL);
    CHECK_STR(p.binding, "area");
    CHECK(p.small_only);
    CHECK_INT(tries(&p), ==, 2);
    probe_result_release(&p);
}

/* A 1D kernel with a size parameter (area and side) that runs only with 1024x1 blocks, the
 * block retry's 4th shape: 8 faulting runs before the clean one. */
#define ONLY_1024 "sticky * * 256 1\nsticky * * 16 16\nsticky * * 128 1\nsticky * * 64 1\n" \
                  "sticky * * 32 1\n"

/* The fault budget: after 3 faulting runs nothing more is tried; the verdict is what those
 * runs gave (the default's illegal_address), and the detail and the count say why. */
static void test_bindings__the_fault_budget_stops_the_search_after_n_faulting_runs(void)
{
    struct probe_result p;
    fault_budget = 3;
    probe(&p, ONLY_1024, SIZE_PARAMS, 2024, NULL);
    fault_budget = PROBE_FAULT_BUDGET;
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_STR(p.binding, "area");
    CHECK(p.block == NULL);
    CHECK_INT(tries(&p), ==, 3); /* area, side, area with 128x1 */
    CHECK_INT(p.fault_budget, ==, 1);
    CHECK_CONTAINS(p.detail, "an illegal memory access was encountered (at 1024x1, block "
                             "256x1x1); fault budget: stopped after 3 faulting runs");
    CHECK(strstr(p.bindings, "64x1x1") == NULL);
    probe_result_release(&p);
}

/* A kernel whose harness cannot make an argument (params.json's "note": a class with virtual
 * functions, a graph's conditional handle) and whose first run faulted at the small sizes is not
 * tried again: no binding, no block shape can make that argument. */
#define NOTE_PARAMS "{\"params\":[{\"name\":\"A\",\"role\":\"buffer\"},{\"name\":\"n\"," \
                    "\"role\":\"size\"}],\"note\":\"parameter 'c': class C has virtual functions\"}"
static void test_bindings__a_fault_with_an_argument_the_harness_cannot_make_is_not_retried(void)
{
    struct probe_result p;
    probe(&p, ONLY_1024, NOTE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_STR(p.binding, "area");
    CHECK(p.block == NULL);
    CHECK_INT(tries(&p), ==, 1); /* without the note: 9 (the test above) */
    CHECK_INT(p.fault_budget, ==, 0);
    CHECK_CONTAINS(p.detail, "(at 1024x1, block 256x1x1); no other binding or block tried: the "
                             "harness cannot make an argument");
    probe_result_release(&p);
    /* a fault at the large size only is not one: side runs, and is kept */
    probe(&p, "sticky 2024 2024 * * area\n", NOTE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_INT(tries(&p), ==, 2);
    CHECK(p.detail == NULL || strstr(p.detail, "no other binding") == NULL);
    probe_result_release(&p);
    /* one that runs clean is kept as any kernel */
    probe(&p, "", NOTE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_INT(tries(&p), ==, 1);
    probe_result_release(&p);
}

/* The harness's guard (docs/execute.md "Guard after the buffers"), run as processes: a binding
 * that wrote past a buffer at the small sizes is not run at 2024x2024 and ranks below one that
 * runs clean; when none does, the skipped ones run again whole, and the one kept says so. The stand-in stops at
 * "#guard-stop" as the real harness does: a verdict of the small sizes only says no large line
 * came. */
static void test_bindings__a_binding_that_wrote_past_a_buffer_is_kept_only_when_none_runs_clean(void)
{
    struct probe_result p;
    probe(&p, "past 64 64 * * area\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_INT(tries(&p), ==, 2);
    CHECK(p.detail == NULL);
    CHECK_INT(p.guard_stops, ==, 1);
    probe_result_release(&p);
    /* under every binding: both are run again with their large configurations, in order; the
     * first that runs them clean is kept, and says it wrote past a buffer */
    probe(&p, "past 64 64 * *\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_INT(p.small_only, ==, 0);
    CHECK_INT(p.guard_stops, ==, 2);
    CHECK_INT(p.guard_reruns, ==, 1);
    CHECK_INT(tries(&p), ==, 3);
    CHECK_STR(p.detail, "it wrote past parameter 1 (A)'s buffer at 64x64, block 16x16x1: 4096 "
                        "bytes after its W x H + pad elements (the harness's guard there "
                        "changed)");
    probe_result_release(&p);
    /* and where every rerun faults at the large size: the first, at the small sizes only */
    probe(&p, "past 64 64 * *\nsticky 2024 2024 * *\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_INT(p.small_only, ==, 1);
    CHECK_INT(p.guard_reruns, ==, 2);
    CHECK_INT(tries(&p), ==, 4);
    CHECK_STR(p.detail, "small sizes only; not run at 2024x2024: it wrote past parameter 1 (A)'s "
                        "buffer at 64x64, block 16x16x1: 4096 bytes after its W x H + pad "
                        "elements (the harness's guard there changed)");
    probe_result_release(&p);
    /* without large configurations (no size parameter) nothing is skipped: kept, and said */
    probe(&p, "past 1024 1 * *\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_INT(p.small_only, ==, 0);
    CHECK_INT(p.guard_stops, ==, 0);
    CHECK_STR(p.detail, "it wrote past parameter 1 (A)'s buffer at 1024x1, block 256x1x1: 4096 "
                        "bytes after its W x H + pad elements (the harness's guard there "
                        "changed)");
    probe_result_release(&p);
    /* --no-probe-guard: area runs its large configurations and is kept, as before the guard */
    guard = 0;
    probe(&p, "past 64 64 * * area\n", SIZE_PARAMS, 2024, NULL);
    guard = 1;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_INT(tries(&p), ==, 1);
    CHECK(p.detail == NULL); /* its large lines came: nothing was skipped */
    CHECK_INT(p.guard_stops, ==, 0);
    probe_result_release(&p);
}

/* --probe-faults 0: no limit, as before the budget: the rescue at the 4th retry shape is found
 * after 8 faulting runs; the default budget (9) finds it too. */
static void test_bindings__without_a_fault_budget_a_rescue_at_the_fourth_shape_is_still_found(void)
{
    struct probe_result p;
    for (int i = 0; i < 2; i++) {
        fault_budget = i ? PROBE_FAULT_BUDGET : 0;
        probe(&p, ONLY_1024, SIZE_PARAMS, 2024, NULL);
        CHECK_STR(probe_outcome_name(p.outcome), "ok");
        CHECK_STR(p.block, "1024x1x1");
        CHECK_INT(tries(&p), ==, 9);
        CHECK_INT(p.fault_budget, ==, 0);
        CHECK(strstr(p.detail, "fault budget") == NULL);
        probe_result_release(&p);
    }
    fault_budget = PROBE_FAULT_BUDGET;
}

/* A kernel that runs clean after fewer faults than the budget is unchanged; a budget spent by
 * the last run there was to make stops nothing (no mark); a fault at the large size only
 * (clean at the small ones) is not counted. */
static void test_bindings__fewer_faults_than_the_budget_change_nothing(void)
{
    struct probe_result p;
    fault_budget = 2;
    probe(&p, "sticky * * 256 1\nsticky * * 16 16\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.block, "128x1x1");
    CHECK_INT(p.fault_budget, ==, 0);
    CHECK(strstr(p.detail, "fault budget") == NULL);
    probe_result_release(&p);
    /* area only, faulting with every shape: 5 runs, the 5th spends a budget of 5 */
    fault_budget = 5;
    probe(&p, "sticky * * * *\n", NO_SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    CHECK_INT(tries(&p), ==, 5);
    CHECK_INT(p.fault_budget, ==, 0);
    CHECK(strstr(p.detail, "fault budget") == NULL);
    probe_result_release(&p);
    /* faulting at 2024x2024 only under area: not a fault the budget counts, side runs */
    fault_budget = 1;
    probe(&p, "sticky 2024 2024 * * area\n", SIZE_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "side");
    CHECK_INT(p.fault_budget, ==, 0);
    probe_result_release(&p);
    fault_budget = PROBE_FAULT_BUDGET;
}

static void test_bindings__a_fixed_size_kernel_runs_its_own_size_first(void)
{
    struct probe_result p;
    probe(&p, "sticky * * * * area\n", FIXED_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "fixed");
    CHECK_INT(tries(&p), ==, 1); /* fixed first: no faulting W x H run before it */
    CHECK_CONTAINS(p.bindings, "\"configs\":[\"4096x4096 256x1x1\"]}");
    CHECK_CONTAINS(p.detail, "fixed size 4096x4096 (the source's buffers, 192 MiB), block "
                             "256x1x1 (the source's launch)");
    probe_result_release(&p);
}

static void test_bindings__a_fixed_size_failing_at_its_size_falls_back_to_area(void)
{
    struct probe_result p;
    probe(&p, "sticky 4096 4096 * * fixed\n", FIXED_PARAMS, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "area");
    CHECK_INT(tries(&p), ==, 2);
    CHECK_CONTAINS(p.bindings, "{\"binding\":\"fixed\",\"outcome\":\"illegal_address\"");
    probe_result_release(&p);
}

static void test_bindings__a_fixed_size_runs_clean_under_the_sanitizer_or_is_not_kept_first(void)
{
    struct probe_result p;
    probe(&p, "", FIXED_PARAMS, 2024, "area");
    CHECK_STR(p.binding, "area"); /* memcheck flags fixed (the stand-in): the clean area wins */
    CHECK_INT(tries(&p), ==, 2);
    probe_result_release(&p);
}

static void test_bindings__a_1d_fixed_size_kernel_running_at_w_times_h_keeps_area(void)
{
    struct probe_result p;
    probe(&p, "", FIXED_PARAMS_1D, 2024, NULL);
    CHECK_STR(p.binding, "area");
    CHECK_INT(tries(&p), ==, 1); /* clean at W x H first: its sweep is kept */
    probe_result_release(&p);
}

static void test_bindings__a_1d_fixed_size_kernel_faulting_at_w_times_h_runs_its_own_size(void)
{
    struct probe_result p;
    no_retry = 1;
    probe(&p, "sticky * * * * area\n", FIXED_PARAMS_1D, 2024, NULL);
    no_retry = 0;
    CHECK_STR(probe_outcome_name(p.outcome), "ok");
    CHECK_STR(p.binding, "fixed");
    CHECK_INT(tries(&p), ==, 2);
    CHECK_CONTAINS(p.bindings, "\"configs\":[\"32x32 128x1x1\"]}");
    probe_result_release(&p);
}

static void test_bindings__a_fixed_size_is_tried_once_with_the_block_retry(void)
{
    struct probe_result p;
    probe(&p, "sticky * * * * area\nsticky * * * * fixed\n", FIXED_PARAMS_1D, 2024, NULL);
    CHECK_STR(probe_outcome_name(p.outcome), "illegal_address");
    int fixed = 0;
    for (const char *q = p.bindings; (q = strstr(q, "\"binding\":\"fixed\"")); q++)
        fixed++;
    CHECK_INT(fixed, ==, 1);
    probe_result_release(&p);
}

static void test_bindings__a_kernel_without_a_fixed_record_never_tries_it(void)
{
    CHECK(!probe_binding_matters(PROBE_BIND_FIXED, SIZE_PARAMS));
    CHECK(!probe_binding_matters(PROBE_BIND_FIXED, NULL));
    CHECK(probe_binding_matters(PROBE_BIND_FIXED, FIXED_PARAMS));
    CHECK(probe_fixed_first(FIXED_PARAMS));
    CHECK(!probe_fixed_first(FIXED_PARAMS_1D));
    int wh[2] = { 0, 0 };
    CHECK(probe_fixed_size(wh, FIXED_PARAMS));
    CHECK_INT(wh[0], ==, 4096);
    CHECK_INT(wh[1], ==, 4096);
}

int main(void)
{
    TEST_RUN(test_bindings__the_default_is_kept_when_it_runs_clean);
    TEST_RUN(test_bindings__a_binding_that_wrote_past_a_buffer_is_kept_only_when_none_runs_clean);
    TEST_RUN(test_bindings__an_overrun_at_the_large_size_moves_to_side);
    TEST_RUN(test_bindings__without_the_large_size_the_overrun_stays_hidden);
    TEST_RUN(test_bindings__a_kernel_without_size_parameters_tries_only_the_default);
    TEST_RUN(test_bindings__when_every_binding_fails_the_default_reason_is_kept);
    TEST_RUN(test_bindings__failing_large_everywhere_keeps_the_first_clean_at_small_sizes);
    TEST_RUN(test_bindings__a_sanitizer_report_moves_to_the_next_binding);
    TEST_RUN(test_bindings__flagged_everywhere_keeps_the_first_that_ran_with_its_report);
    TEST_RUN(test_bindings__a_2d_kernel_is_probed_with_2d_blocks_only);
    TEST_RUN(test_bindings__a_1d_kernel_keeps_both_block_shapes);
    TEST_RUN(test_bindings__a_2d_kernel_failing_with_2d_blocks_still_fails);
    TEST_RUN(test_bindings__a_1d_kernel_with_a_smaller_fixed_tile_runs_with_a_retried_block);
    TEST_RUN(test_bindings__a_2d_kernel_with_another_tile_runs_with_a_retried_block);
    TEST_RUN(test_bindings__the_block_retry_follows_faults_only);
    TEST_RUN(test_bindings__the_source_block_is_the_first_retry_shape);
    TEST_RUN(test_bindings__shapes_over_the_launch_bounds_are_not_tried);
    TEST_RUN(test_bindings__the_source_launch_is_read_from_params);
    TEST_RUN(test_bindings__a_1d_kernel_hanging_only_with_16x16_runs_with_a_1d_retry_block);
    TEST_RUN(test_bindings__a_transformer_kernel_failing_under_area_runs_under_tokens);
    TEST_RUN(test_bindings__a_tiled_kernel_faulting_under_area_and_side_runs_under_tiles);
    TEST_RUN(test_bindings__a_small_only_tiled_kernel_gets_tiles_with_the_sources_block);
    TEST_RUN(test_bindings__shapes_against_a_block_assert_are_not_tried);
    TEST_RUN(test_bindings__the_fault_budget_stops_the_search_after_n_faulting_runs);
    TEST_RUN(test_bindings__without_a_fault_budget_a_rescue_at_the_fourth_shape_is_still_found);
    TEST_RUN(test_bindings__fewer_faults_than_the_budget_change_nothing);
    TEST_RUN(test_bindings__a_fixed_size_kernel_runs_its_own_size_first);
    TEST_RUN(test_bindings__a_fixed_size_failing_at_its_size_falls_back_to_area);
    TEST_RUN(test_bindings__a_fixed_size_runs_clean_under_the_sanitizer_or_is_not_kept_first);
    TEST_RUN(test_bindings__a_1d_fixed_size_kernel_running_at_w_times_h_keeps_area);
    TEST_RUN(test_bindings__a_1d_fixed_size_kernel_faulting_at_w_times_h_runs_its_own_size);
    TEST_RUN(test_bindings__a_fixed_size_is_tried_once_with_the_block_retry);
    TEST_RUN(test_bindings__a_kernel_without_a_fixed_record_never_tries_it);
    TEST_RUN(test_bindings__a_fault_with_an_argument_the_harness_cannot_make_is_not_retried);
    return test_done();
}
