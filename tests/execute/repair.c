/* Repair strategies on source text, driven by hand-made diagnostics (the nvcc-driven end of
 * each strategy is in stage.c). */
#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "execute/repair.h"
#include "execute/reposearch.h"
#include "execute/srcscan.h"
#include "tests/support/test.h"

#include <stdlib.h>
#include <string.h>

/* Repair `src` against diagnostics parsed from `log`; returns the fixes JSON. */
static char *repair(struct buf *src, const char *log, const char *repo)
{
    struct diag_list d = DIAG_LIST_INIT;
    struct buf fixes = BUF_INIT;
    classify_parse(&d, log);
    struct repair_input in = { &d, "kernel.cu", repo, repo ? &reposearch_resolver : NULL, NULL,
                               NULL };
    repair_apply(src, &fixes, &in);
    diag_list_release(&d);
    return buf_detach(&fixes, NULL);
}

static void test_repair__rewrites_intrinsics_but_not_comments_strings_or_sync_forms(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "// __shfl(x, 0) in a comment\n__device__ int f(int v) {\n"
                 "  const char *t = \"__any(\";\n"
                 "  return __shfl (v, 0) + __shfl_sync(0xffffffff, v, 1) + __any(v);\n}\n");
    char *f = repair(&s, "kernel.cu(4): error: identifier \"__shfl\" is undefined\n", NULL);
    CHECK_CONTAINS(s.data, "// __shfl(x, 0) in a comment");
    CHECK_CONTAINS(s.data, "\"__any(\"");
    CHECK_CONTAINS(s.data, "return __shfl_sync(0xffffffff, v, 0) + __shfl_sync(0xffffffff, v, 1) "
                           "+ __any_sync(0xffffffff, v);");
    CHECK_CONTAINS(f, "\"rewrite_removed_api:__shfl->__shfl_sync\"");
    free(f);
    buf_release(&s);
}

static void test_repair__drops_the_host_function_an_error_points_into(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "#include <cstdio>\n__global__ void k(float *x) { x[0] = 1; }\n"
                 "static int host_only(int a)\n{\n  const char *s = \"}\"; /* { */\n"
                 "  return cv::foo(a);\n}\n__device__ int keep(void) { return 1; }\n");
    char *f = repair(&s, "kernel.cu(6): error: name followed by \"::\" must be a class or "
                         "namespace name\n", NULL);
    CHECK_CONTAINS(f, "drop_host_code:host_only");
    CHECK(!strstr(s.data, "cv::foo"));
    CHECK_CONTAINS(s.data, "__global__ void k(float *x) { x[0] = 1; }");
    CHECK_CONTAINS(s.data, "__device__ int keep(void) { return 1; }");
    free(f);
    buf_release(&s);
}

static void test_repair__never_drops_device_code(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "__device__ int d(int a)\n{\n  return undefined_thing(a);\n}\n");
    char *f = repair(&s, "kernel.cu(3): error: identifier \"undefined_thing\" is undefined\n",
                     NULL);
    CHECK_STR(f, "");
    CHECK_CONTAINS(s.data, "undefined_thing(a)");
    free(f);
    buf_release(&s);
}

static void test_repair__host_device_goes_after_a_template_head(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "template <typename T>\nT twice(T v) { return v + v; }\n"
                 "__global__ void k(float *x) { x[0] = twice(x[0]); }\n");
    char *f = repair(&s, "kernel.cu(3): error: calling a __host__ function(\"twice<float>\") from "
                         "a __global__ function(\"k\") is not allowed\n", NULL);
    CHECK_CONTAINS(s.data, "template <typename T>\n__host__ __device__ T twice(T v)");
    CHECK_CONTAINS(f, "host_device:twice");
    free(f);
    buf_release(&s);
}

static void test_repair__template_defaults_keep_existing_defaults(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "template <typename T, int N, bool B, int M = 4>\n"
                 "__global__ void k(float *x) { x[0] = N; }\n");
    char *f = repair(&s, "harness.cu(9): error: no instance of function template \"k\" matches "
                         "the argument list\n", NULL);
    CHECK_CONTAINS(s.data, "template <typename T = float, int N = 32, bool B = false, int M = 4>");
    CHECK_CONTAINS(f, "template_defaults:k<float,32,false,default>");
    free(f);
    buf_release(&s);
}

static void test_repair__adds_each_header_once(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "__global__ void k(float *x) { printf(\"a\"); printf(\"b\"); }\n");
    char *f = repair(&s, "kernel.cu(1): error: identifier \"printf\" is undefined\n"
                         "kernel.cu(1): error: identifier \"printf\" is undefined\n", NULL);
    CHECK_CONTAINS(s.data, "#include <cstdio>\n__global__");
    CHECK(strstr(s.data, "<cstdio>") == strrchr(s.data, '<'));
    CHECK_STR(f, "\"add_header:<cstdio>\"");
    free(f);
    CHECK_STR(repair_header_for("curand_init"), "<curand_kernel.h>");
    CHECK_STR(repair_header_for("std::chrono"), "<chrono>");
    CHECK_STR(repair_header_for("std::uintptr_t"), "<cstdint>"); /* namespace "std" has no member */
    CHECK(repair_header_for("no_such_thing") == NULL);
    buf_release(&s);
}

static void test_repair__reports_nothing_when_no_strategy_applies(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "__global__ void k(float *x) { x[0] = max(1, 2.0f, 3); }\n");
    char *f = repair(&s, "kernel.cu(1): error: no instance of overloaded function \"max\" "
                         "matches the argument list\n", NULL);
    CHECK_STR(f, "");
    free(f);
    buf_release(&s);
}

static void test_reposearch__finds_macros_typedefs_structs_and_functions(void)
{
    const char *root = getenv("LSCAT_ROOT");
    char *repo = xasprintf("%s/tests/execute/fixtures/repo", root ? root : ".");
    const char *names[] = { "BLOCK_DIM", "real_t", "Pair", "sq", "cg", "Node", "THREADS", "d_pair", NULL };
    const char *want[] = { "#define BLOCK_DIM 16", "typedef float real_t;", "struct Pair { float a, b; };",
                           "__device__ inline float sq(float v)",
                           "namespace cg = cooperative_groups;",
                           "typedef struct Node {\n\tint key;\n\tfloat value;\n} Node;",
                           /* not the commented-out one; the whole conditional */
                           "#ifdef WG_SIZE\n#define THREADS WG_SIZE\n#else\n#define THREADS 256\n#endif",
                           "__constant__ Pair d_pair;" /* a device variable without initialiser */ };
    for (int i = 0; names[i]; i++) {
        struct buf out = BUF_INIT, origin = BUF_INIT;
        const char *via = NULL;
        CHECK_OK(reposearch_find_decl(NULL, repo, names[i], NULL, &out, &origin, &via));
        CHECK_STR(via, "text");
        CHECK_CONTAINS(out.data, want[i]);
        CHECK_CONTAINS(origin.data, "src/util.cuh:");
        buf_release(&out);
        buf_release(&origin);
    }
    struct buf out = BUF_INIT, origin = BUF_INIT;
    const char *via = NULL;
    CHECK_INT(reposearch_find_decl(NULL, repo, "nothing_here", NULL, &out, &origin, &via), ==,
              LSCAT_ENOTFOUND);
    char *path = NULL;
    CHECK_OK(reposearch_find_header(NULL, repo, "common_defs.h", &path, &via));
    CHECK_CONTAINS(path, "/repo/common_defs.h");
    free(path);
    buf_release(&out);
    buf_release(&origin);
    free(repo);
}

static void test_repair__block_max_drops_the_swept_sizes_whose_shared_tile_overflows(void)
{
    const char *harness = "#if 8 <= LSCAT_BLOCK_MAX\n    case 8: return &k<8>;\n#endif\n"
                          "#if 16 <= LSCAT_BLOCK_MAX\n    case 16: return &k<16>;\n#endif\n"
                          "#if 24 <= LSCAT_BLOCK_MAX\n    case 24: return &k<24>;\n#endif\n"
                          "#if 32 <= LSCAT_BLOCK_MAX\n    case 32: return &k<32>;\n#endif\n";
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, "ptxas error   : Entry function '_Z1kILi16EEvPf' uses too much shared data "
                       "(0x10000 bytes, 0xc000 max)\n"
                       "ptxas error   : Entry function '_Z1kILi32EEvPf' uses too much shared data "
                       "(0x40000 bytes, 0xc000 max)\n");
    /* the largest (256 KiB at 32) decides: a quarter of the tile at 16 is still 64 KiB */
    CHECK_INT(repair_block_max(&d, harness, 0), ==, 8);
    diag_list_release(&d);
    classify_parse(&d, "ptxas error   : Entry function '_Z1kILi32EEvPf' uses too much shared data "
                       "(0x10000 bytes, 0xc000 max)\n");
    CHECK_INT(repair_block_max(&d, harness, 0), ==, 24);
    CHECK_INT(repair_block_max(&d, harness, 24), ==, 16); /* still too large: one step down */
    CHECK_INT(repair_block_max(&d, harness, 8), ==, 0);   /* nothing smaller is left */
    CHECK_INT(repair_block_max(&d, "no swept sizes", 0), ==, 0);
    diag_list_release(&d);
    classify_parse(&d, "k.cu(3): error: identifier \"x\" is undefined\n");
    CHECK_INT(repair_block_max(&d, harness, 0), ==, 0);
    diag_list_release(&d);
}

int main(void)
{
    TEST_RUN(test_repair__block_max_drops_the_swept_sizes_whose_shared_tile_overflows);
    TEST_RUN(test_repair__rewrites_intrinsics_but_not_comments_strings_or_sync_forms);
    TEST_RUN(test_repair__drops_the_host_function_an_error_points_into);
    TEST_RUN(test_repair__never_drops_device_code);
    TEST_RUN(test_repair__host_device_goes_after_a_template_head);
    TEST_RUN(test_repair__template_defaults_keep_existing_defaults);
    TEST_RUN(test_repair__adds_each_header_once);
    TEST_RUN(test_repair__reports_nothing_when_no_strategy_applies);
    TEST_RUN(test_reposearch__finds_macros_typedefs_structs_and_functions);
    return test_done();
}
