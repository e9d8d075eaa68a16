/* Tests of the kernel-indexing analysis (isolate/indexing.c) on the fixture kernels of
 * tests/isolate/fixtures/indexing (saxpy 1D, five-point stencil 2D, naive matmul 2D, a
 * grid-stride loop, a 3D kernel) and on small inline sources for the edge cases. */
#include "common/buf.h"
#include "isolate/indexing.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct indexing of_text(const char *src)
{
    struct indexing ix;
    indexing_analyze(&ix, src, strlen(src));
    return ix;
}

static struct indexing of_fixture(const char *name)
{
    const char *root = getenv("LSCAT_ROOT");
    char path[1024];
    struct buf b = BUF_INIT;
    snprintf(path, sizeof path, "%s/tests/isolate/fixtures/indexing/%s", root ? root : ".", name);
    if (buf_read_file(&b, path) < 0)
        test_fail(__FILE__, __LINE__, "cannot read fixture %s", path);
    struct indexing ix;
    indexing_analyze(&ix, b.data, b.len);
    buf_release(&b);
    return ix;
}

static void test_indexing__saxpy_is_1d(void)
{
    struct indexing ix = of_fixture("saxpy.cu");
    CHECK_STR(indexing_name(ix.kind), "1d");
    CHECK_INT(ix.dims, ==, 1);
    CHECK(!ix.grid_stride);
    char uses[128];
    indexing_uses_text(uses, sizeof uses, ix.uses);
    CHECK_STR(uses, "threadIdx.x blockIdx.x blockDim.x");
}

static void test_indexing__five_point_stencil_is_2d(void)
{
    struct indexing ix = of_fixture("stencil.cu");
    CHECK_STR(indexing_name(ix.kind), "2d");
    CHECK(ix.uses & INDEXING_USE(0, 1));
    CHECK(ix.uses & INDEXING_USE(1, 1));
}

static void test_indexing__naive_matmul_is_2d(void)
{
    struct indexing ix = of_fixture("matmul.cu");
    CHECK_STR(indexing_name(ix.kind), "2d");
    CHECK_INT(ix.dims, ==, 2);
    CHECK(!ix.grid_stride); /* acc += ... is a sum, not a step by the grid */
}

static void test_indexing__grid_stride_loop_through_a_named_stride(void)
{
    struct indexing ix = of_fixture("gridstride.cu");
    CHECK_STR(indexing_name(ix.kind), "grid_stride");
    CHECK(ix.grid_stride);
    CHECK(!(ix.uses & INDEXING_USE(3, 1))); /* gridDim.y only in a comment */
}

static void test_indexing__3d_kernel_is_3d(void)
{
    struct indexing ix = of_fixture("volume3d.cu");
    CHECK_STR(indexing_name(ix.kind), "3d");
    CHECK_INT(ix.dims, ==, 3);
}

static void test_indexing__grid_stride_written_in_the_loop_step(void)
{
    struct indexing ix = of_text("__global__ void k(float *p, int n) { for (int i = threadIdx.x "
                                 "+ blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) "
                                 "p[i] = 0; }");
    CHECK_STR(indexing_name(ix.kind), "grid_stride");
    ix = of_text("__global__ void k(float *p, int n) { int i = threadIdx.x; while (i < n) { "
                 "p[i] = 1; i = i + blockDim.x * gridDim.x; } }");
    CHECK_STR(indexing_name(ix.kind), "grid_stride");
}

static void test_indexing__a_2d_grid_stride_loop_is_still_2d(void)
{
    struct indexing ix = of_text("__global__ void k(float *p, int w, int h) { for (int y = "
                                 "threadIdx.y; y < h; y += blockDim.y * gridDim.y) p[y * w + "
                                 "threadIdx.x] = 0; }");
    CHECK_STR(indexing_name(ix.kind), "2d");
    CHECK(ix.grid_stride);
}

static void test_indexing__indices_behind_macros_and_device_functions_count(void)
{
    struct indexing ix = of_text("#define ROW (blockIdx.y * blockDim.y + threadIdx.y)\n"
                                 "__device__ int col() { return blockIdx.x * blockDim.x + "
                                 "threadIdx.x; }\n__global__ void k(float *p, int w) { p[ROW * w "
                                 "+ col()] = 0; }\n");
    CHECK_STR(indexing_name(ix.kind), "2d");
}

static void test_indexing__comments_and_strings_do_not_count(void)
{
    struct indexing ix = of_text("__global__ void k(float *p) {\n  // threadIdx.y\n"
                                 "  /* blockIdx.z */ printf(\"%d threadIdx.z\", 1);\n"
                                 "  char c = '\\''; p[threadIdx.x] = c; }\n");
    CHECK_STR(indexing_name(ix.kind), "1d");
}

static void test_indexing__a_sum_over_gridDim_blocks_is_not_a_stride(void)
{
    struct indexing ix = of_text("__global__ void k(float *p, float *out) { float s = 0; for "
                                 "(int b = 0; b < gridDim.x; b++) s += p[b]; if (threadIdx.x == 0)"
                                 " out[blockIdx.x] = s; }");
    CHECK_STR(indexing_name(ix.kind), "1d");
}

static void test_indexing__cooperative_groups_spelling_counts(void)
{
    struct indexing ix = of_text("__global__ void k(float *p, int w) { auto b = cg::"
                                 "this_thread_block(); p[b.thread_index().y * w + "
                                 "b.thread_index().x] = 0; }");
    CHECK_STR(indexing_name(ix.kind), "2d");
}

static void test_indexing__grid_wide_barriers_in_every_spelling_are_grid_sync(void)
{
    static const char *const yes[] = {
        "__global__ void k(float *p) { cg::grid_group grid = cg::this_grid(); p[0] = 1; "
        "cg::sync(grid); }",
        "__global__ void k(float *p) { auto gg = this_grid(); p[0] = 1; gg.sync(); }",
        "__global__ void k(float *p) { p[0] = 1; cooperative_groups::this_grid().sync(); }",
        "__device__ void step(float *p, const cg::grid_group &g) { p[0] = 1; g.sync(); }",
        "struct Peer { const cg::grid_group &grid; __device__ void sync() { grid.sync(); } };",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        struct indexing ix = of_text(yes[i]);
        CHECK_INT(ix.grid_sync, ==, 1);
    }
}

static void test_indexing__block_syncs_and_unrelated_names_are_no_grid_sync(void)
{
    static const char *const no[] = {
        "__global__ void k(float *p) { cg::thread_block b = cg::this_thread_block(); b.sync(); "
        "cg::sync(b); __syncthreads(); }",
        "__global__ void k(float *p) { int grid = blockIdx.x; p[grid] = 0; __syncthreads(); }",
        "__global__ void k(float *p) { auto g = cg::this_grid(); p[g.thread_rank()] = 0; }",
        "__global__ void k(float *p) { /* this_grid().sync(); */ p[0] = 0; }",
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        struct indexing ix = of_text(no[i]);
        CHECK_INT(ix.grid_sync, ==, 0);
    }
}

static void test_indexing__counting_threads_with_blockDim_y_is_not_2d(void)
{
    struct indexing ix = of_text("__global__ void k(float *y, int n) { if (blockDim.x * "
                                 "blockDim.y > 512) return; int i = blockIdx.x * blockDim.x + "
                                 "threadIdx.x; if (i < n) y[i] = 0; }");
    CHECK_STR(indexing_name(ix.kind), "1d");
    CHECK(ix.uses & INDEXING_USE(2, 1)); /* seen, and recorded in indexing_uses */
}

static void test_indexing__no_index_at_all_is_none(void)
{
    struct indexing ix = of_text("__global__ void k(float *p) { p[0] = 1.0f; }");
    CHECK_STR(indexing_name(ix.kind), "none");
    CHECK_INT(ix.dims, ==, 0);
    ix = of_text("");
    CHECK_STR(indexing_name(ix.kind), "none");
}

static void test_indexing__names_round_trip(void)
{
    for (int k = INDEXING_NONE; k <= INDEXING_3D; k++)
        CHECK_INT(indexing_parse(indexing_name((enum indexing_kind)k)), ==, k);
    CHECK_INT(indexing_parse("4d"), ==, -1);
    CHECK_INT(indexing_parse(NULL), ==, -1);
}

int main(void)
{
    TEST_RUN(test_indexing__saxpy_is_1d);
    TEST_RUN(test_indexing__five_point_stencil_is_2d);
    TEST_RUN(test_indexing__naive_matmul_is_2d);
    TEST_RUN(test_indexing__grid_stride_loop_through_a_named_stride);
    TEST_RUN(test_indexing__3d_kernel_is_3d);
    TEST_RUN(test_indexing__grid_stride_written_in_the_loop_step);
    TEST_RUN(test_indexing__a_2d_grid_stride_loop_is_still_2d);
    TEST_RUN(test_indexing__indices_behind_macros_and_device_functions_count);
    TEST_RUN(test_indexing__comments_and_strings_do_not_count);
    TEST_RUN(test_indexing__a_sum_over_gridDim_blocks_is_not_a_stride);
    TEST_RUN(test_indexing__cooperative_groups_spelling_counts);
    TEST_RUN(test_indexing__grid_wide_barriers_in_every_spelling_are_grid_sync);
    TEST_RUN(test_indexing__block_syncs_and_unrelated_names_are_no_grid_sync);
    TEST_RUN(test_indexing__counting_threads_with_blockDim_y_is_not_2d);
    TEST_RUN(test_indexing__no_index_at_all_is_none);
    TEST_RUN(test_indexing__names_round_trip);
    return test_done();
}
