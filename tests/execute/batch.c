/* --build-batch against the real nvcc (docs/execute.md "Batched builds"): golden harnesses
 * from tests/isolate/fixtures/harness-golden, and three a batch must not keep (one that fails
 * its first attempt and is repaired, one whose macro a hoisted system header defines, one that
 * does not compile), built alone in one store and in batches in another. Every builds row and
 * every attempt must be the same in both, byte for byte (ptxas entries included: their names
 * as built alone); the batched ones say so in their log, the three others do not. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/build.h"
#include "execute/execute.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* By system headers (a batch's members share them): none: saxpy, fixed_scale, matmul_square,
 * transpose, texref_scale (its texture reference needs a repair), broken, warns, odd_smem
 * (1,156 bytes of static shared memory); none but an extern __shared__ array: dyn_smem (with
 * it, a module pads every kernel's static shared memory to 16 bytes: alone); <cassert> and
 * <assert.h>: add_positions, tile32x4, tile_gemm64, clash (defines assert); <cassert>,
 * <cstddef>, <assert.h>: head_sums, softmax_rows; <cassert>: warp_rows, strided_copy. */
static const char *const names[] = { "saxpy", "fixed_scale", "matmul_square", "transpose",
                                     "texref_scale", "add_positions", "tile32x4", "tile_gemm64",
                                     "head_sums", "softmax_rows", "warp_rows", "strided_copy",
                                     "clash", "broken", "warns", "odd_smem", "dyn_smem", NULL };
#define NK 17
static struct fixture_env alone, batched;
static char ids[NK][65];
static struct execute_counts ca, cb;
static int ready, have_nvcc;

/* Add kernel i to env: a golden one, or clash/broken made from one. */
static void add(struct fixture_env *env, int i)
{
    const char *base = strcmp(names[i], "clash") == 0 ? "add_positions"
                       : strcmp(names[i], "broken") == 0 || strcmp(names[i], "warns") == 0 ||
                               strcmp(names[i], "odd_smem") == 0 ||
                               strcmp(names[i], "dyn_smem") == 0
                           ? "saxpy"
                           : names[i];
    char *seed = xasprintf("batch:%s", names[i]);
    CHECK_OK(fixture_add_golden(env, base, seed, 2, ids[i]));
    free(seed);
    if (base == names[i])
        return;
    char *k = xasprintf("%s/kernels/%.2s/%s/kernel.cu", env->work, ids[i], ids[i]);
    struct buf b = BUF_INIT, t = BUF_INIT;
    CHECK_OK(buf_read_file(&b, k));
    if (strcmp(names[i], "clash") == 0) { /* its includes first, then its own assert */
        const char *end = strstr(b.data, "#include <assert.h>\n");
        CHECK(end != NULL);
        end += strlen("#include <assert.h>\n");
        buf_add(&t, b.data, (size_t)(end - b.data));
        buf_adds(&t, "#define assert(x) ((void)0)\n");
        buf_adds(&t, end);
    } else if (strcmp(names[i], "broken") == 0) {
        buf_adds(&t, b.data);
        buf_adds(&t, "\n__global__ void broken_extra(float *p) { p[0] = undeclared_name; }\n");
    } else if (strcmp(names[i], "warns") == 0) { /* a warning about its own file */
        buf_adds(&t, b.data);
        buf_adds(&t, "\nstatic void warns_here(void) { int unused_in_warns = 0; }\n");
    } else if (strcmp(names[i], "odd_smem") == 0) {
        buf_adds(&t, b.data);
        buf_adds(&t, "\n__global__ void odd_smem_extra(int *m)\n{\n    __shared__ int t[17][17];\n"
                     "    t[threadIdx.x][0] = m[threadIdx.x];\n    __syncthreads();\n"
                     "    m[threadIdx.x] = t[threadIdx.y][1];\n}\n");
    } else {
        buf_adds(&t, b.data);
        buf_adds(&t, "\n__global__ void dyn_smem_extra(float *p)\n{\n    extern __shared__ float s[];\n"
                     "    s[threadIdx.x] = p[threadIdx.x];\n    __syncthreads();\n"
                     "    p[0] = s[1];\n}\n");
    }
    CHECK_OK(fs_write_atomic(k, t.data, t.len));
    buf_release(&b);
    buf_release(&t);
    free(k);
}

static void test_batch__the_same_kernels_alone_and_in_batches(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    CHECK_OK(fixture_env_init(&alone));
    CHECK_OK(fixture_env_init(&batched));
    for (int i = 0; i < NK; i++) {
        add(&alone, i);
        add(&batched, i);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    o.jobs = 2;
    o.arch = "sm_90";
    o.probe = EXECUTE_PROBE_NEVER;
    o.build_batch = 1;
    CHECK_OK(execute_run(&ca, alone.s, alone.work, &o, alone.run_id));
    o.jobs = 1; /* one builder: the groups below are whole */
    o.build_batch = 8;
    CHECK_OK(execute_run(&cb, batched.s, batched.work, &o, batched.run_id));
    ready = 1;
    printf("# alone: %d built, %d failed; batched: %d built, %d failed, %d of them in %d "
           "batches\n", ca.built_first_try + ca.built_after_repair, ca.build_failed,
           cb.built_first_try + cb.built_after_repair, cb.build_failed, cb.batched, cb.batches);
    CHECK_INT(ca.batches, ==, 0);
    CHECK_INT(cb.built_first_try, ==, ca.built_first_try);
    CHECK_INT(cb.built_after_repair, ==, ca.built_after_repair);
    CHECK_INT(cb.build_failed, ==, ca.build_failed);
    CHECK_INT(ca.build_failed, ==, 1); /* broken */
    /* none: 6 of 8 (texref_scale and broken alone); assert: 3 of 4 (clash alone); 2; 2;
     * dyn_smem alone in its group */
    CHECK_INT(cb.batched, ==, 13);
    CHECK_INT(cb.batches, ==, 4);
}

static void need_run(void)
{
    if (!have_nvcc)
        test_skip("nvcc not found");
    if (!ready)
        test_fail(__FILE__, __LINE__, "the two execute runs did not complete");
}

static char *row(struct fixture_env *env, const char *sql, const char *id)
{
    char *v = fixture_query_text(env, sql, id);
    return v ? v : xstrdup("(null)");
}

static void test_batch__every_build_row_and_attempt_is_the_same(void)
{
    need_run();
    const char *sql[] = {
        "SELECT status || '|' || attempts || '|' || coalesce(fixes, '') || '|' || "
        "coalesce(error_class, '') || '|' || coalesce(registers, '') || '|' || "
        "coalesce(shared_bytes, '') || '|' || coalesce(stack_bytes, '') || '|' || "
        "coalesce(spill_store_bytes, '') || '|' || coalesce(spill_load_bytes, '') || '|' || "
        "coalesce(const_bytes, '') || '|' || coalesce(barriers, '') || '|' || "
        "coalesce(ptxas, '') || '|' || flags || '|' || cache_key FROM builds WHERE kernel_id = ?",
        "SELECT group_concat(a.attempt || ':' || coalesce(a.error_class, 'none'), ',') FROM "
        "build_attempts a JOIN builds b ON b.id = a.build_id WHERE b.kernel_id = ?",
        "SELECT status FROM kernels WHERE id = ?",
    };
    for (int i = 0; i < NK; i++)
        for (int q = 0; q < 3; q++) {
            char *a = row(&alone, sql[q], ids[i]), *b = row(&batched, sql[q], ids[i]);
            if (strcmp(a, b) != 0)
                printf("# %s differs:\n#   alone:   %s\n#   batched: %s\n", names[i], a, b);
            CHECK_STR(b, a);
            free(a);
            free(b);
        }
    /* the entry names are the ones a build alone has, not the batch's namespaced ones */
    char *px = row(&batched, "SELECT ptxas FROM builds WHERE kernel_id = ?", ids[0]);
    CHECK_CONTAINS(px, "\"entry\":\"_Z5saxpy");
    CHECK(strstr(px, "lk") == NULL);
    free(px);
}

static void test_batch__a_batched_build_says_so_and_links_both_binaries(void)
{
    need_run();
    for (int i = 0; i < NK; i++) {
        char *bin = row(&batched, "SELECT binary_path FROM builds WHERE kernel_id = ?", ids[i]);
        char *log = row(&batched, "SELECT a.log_path FROM build_attempts a JOIN builds b ON "
                                  "b.id = a.build_id WHERE b.kernel_id = ? AND a.attempt = 1",
                        ids[i]);
        char *lp = fs_join(batched.work, log);
        struct buf l = BUF_INIT;
        CHECK_OK(buf_read_file(&l, lp));
        int says = l.data && strstr(l.data, "in one nvcc run") != NULL;
        int expect = strcmp(names[i], "texref_scale") && strcmp(names[i], "clash") &&
                     strcmp(names[i], "broken") && strcmp(names[i], "dyn_smem");
        if (says != expect)
            printf("# %s: batched %d, expected %d\n", names[i], says, expect);
        CHECK_INT(says, ==, expect);
        if (expect) {
            char *abs = fs_join(batched.work, bin), *so = xasprintf("%s.so", abs);
            CHECK(fs_exists(abs));
            CHECK(fs_exists(so));
            CHECK_CONTAINS(l.data, "--defsym=lscat_kernel=");
            free(abs);
            free(so);
        }
        if (strcmp(names[i], "warns") == 0) { /* its warning, in its own log as alone */
            char *la = fs_join(alone.work, log);
            struct buf a = BUF_INIT;
            CHECK_OK(buf_read_file(&a, la));
            CHECK_CONTAINS(a.data, "unused_in_warns");
            CHECK_CONTAINS(l.data, "unused_in_warns");
            buf_release(&a);
            free(la);
        }
        buf_release(&l);
        free(lp);
        free(log);
        free(bin);
    }
}

static void test_batch__what_a_batch_cannot_keep_apart_is_not_eligible(void)
{
    char *tmp = fs_join(test_tmpdir(), "eligible");
    CHECK_OK(fs_mkdirs(tmp, 0755));
    const char *bad[] = {
        "#include \"helper.h\"\n__global__ void k(float *p) {}\n", /* a quoted include */
        "#define N 4\n#include <cstdio>\n__global__ void k(float *p) {}\n", /* define first */
        "#ifdef X\n#include <cstdio>\n#endif\n__global__ void k(float *p) {}\n",
        "#undef assert\n__global__ void k(float *p) {}\n",
        "__constant__ float c[4];\n__global__ void k(float *p) { p[0] = c[0]; }\n",
        "__device__ int counter;\n__global__ void k(float *p) { counter++; }\n",
        "extern \"C\" __global__ void k(float *p) {}\n",
        "#pragma once\n__global__ void k(float *p) {}\n",
        "using namespace std;\n__global__ void k(float *p) {}\n",
        NULL,
    };
    char *root = fixture_source_root();
    char *h = xasprintf("%s/tests/isolate/fixtures/harness-golden/saxpy/harness.cu", root);
    free(root);
    struct buf hb = BUF_INIT;
    CHECK_OK(buf_read_file(&hb, h));
    char *kp = fs_join(tmp, "kernel.cu"), *hp = fs_join(tmp, "harness.cu");
    CHECK_OK(fs_write_atomic(hp, hb.data, hb.len));
    const char *good = "#include <cstdio>\n#define N 4\n__device__ float twice(float x) "
                       "{ return 2 * x; }\n__global__ void k(float *p) {\n#pragma unroll\n"
                       "for (int i = 0; i < N; i++) p[i] = twice(p[i]);\n}\n";
    CHECK_OK(fs_write_atomic(kp, good, strlen(good)));
    char *sig = build_batch_signature(tmp);
    CHECK(sig != NULL);
    CHECK_CONTAINS(sig, "#include <cstdio>\n");
    CHECK_CONTAINS(sig, "#include <tuple>\n"); /* the harness's */
    free(sig);
    /* an extern __shared__ array groups a kernel apart; the word extern elsewhere beside a
     * static __shared__ array cannot be told apart from one: alone */
    const char *xs = "__global__ void k(float *p) {\n    extern\n        __shared__ float s[];\n"
                     "    s[0] = p[0];\n}\n";
    CHECK_OK(fs_write_atomic(kp, xs, strlen(xs)));
    CHECK((sig = build_batch_signature(tmp)) != NULL);
    CHECK_CONTAINS(sig, "extern __shared__\n");
    free(sig);
    const char *st = "// external input, shared tile\n__global__ void k(float *p) {\n"
                     "    __shared__ float s[33];\n    s[0] = p[0];\n}\n";
    CHECK_OK(fs_write_atomic(kp, st, strlen(st)));
    CHECK((sig = build_batch_signature(tmp)) != NULL);
    CHECK(strstr(sig, "extern __shared__") == NULL);
    free(sig);
    const char *amb = "// the extern array of the source is static here\n__global__ void k(float "
                      "*p) {\n    __shared__ float s[33];\n    s[0] = p[0];\n}\n";
    CHECK_OK(fs_write_atomic(kp, amb, strlen(amb)));
    CHECK_INT(build_batch_eligible(tmp), ==, 0);
    for (int i = 0; bad[i]; i++) {
        CHECK_OK(fs_write_atomic(kp, bad[i], strlen(bad[i])));
        int e = build_batch_eligible(tmp);
        if (e)
            printf("# eligible, but should not be: %s", bad[i]);
        CHECK_INT(e, ==, 0);
    }
    /* anything else in the folder could be included: not eligible either */
    CHECK_OK(fs_write_atomic(kp, good, strlen(good)));
    char *extra = fs_join(tmp, "helper.h");
    CHECK_OK(fs_write_atomic(extra, "", 0));
    CHECK_INT(build_batch_eligible(tmp), ==, 0);
    free(extra);
    buf_release(&hb);
    free(h);
    free(kp);
    free(hp);

    free(tmp);
}

int main(void)
{
    have_nvcc = fixture_have_nvcc();
    TEST_RUN(test_batch__what_a_batch_cannot_keep_apart_is_not_eligible);
    TEST_RUN(test_batch__the_same_kernels_alone_and_in_batches);
    TEST_RUN(test_batch__every_build_row_and_attempt_is_the_same);
    TEST_RUN(test_batch__a_batched_build_says_so_and_links_both_binaries);
    fixture_env_release(&alone);
    fixture_env_release(&batched);
    return test_done();
}
