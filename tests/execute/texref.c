/* Texture references and texture object parameters (issue #14, B3 and P6), without a GPU: the
 * texture_object repair on text (pulls a declaration from the repository, rewrites every
 * file-scope `texture<...>`), then real nvcc through execute: the golden kernels of
 * tests/isolate/fixtures/textures build (the references after the repair), and the texture
 * object parameters get a binding in the generated harness. gpu_texture.c probes them. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "execute/execute.h"
#include "execute/repair.h"
#include "execute/reposearch.h"
#include "tests/execute/support/fixture.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Repair `src` against `log` with the fixture repository and lscat's compat folder. */
static char *repair(struct buf *src, const char *log, const char *include_dir)
{
    char *root = fixture_source_root();
    char *repo = xasprintf("%s/tests/execute/fixtures/repo", root);
    char *compat = xasprintf("%s/isolate/compat", root);
    struct diag_list d = DIAG_LIST_INIT;
    struct buf fixes = BUF_INIT;
    classify_parse(&d, log);
    classify_refine_textures(&d, src->data);
    struct repair_input in = { &d, "kernel.cu", repo, &reposearch_resolver, include_dir, compat };
    repair_apply(src, &fixes, &in);
    diag_list_release(&d);
    free(root);
    free(repo);
    free(compat);
    return buf_detach(&fixes, NULL);
}

static void test_texref__a_missing_reference_is_pulled_and_becomes_a_texture_object(void)
{
    char tmp[] = "/tmp/lscat-texref-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    struct buf s = BUF_INIT;
    buf_adds(&s, "#include <cuda_runtime.h>\n__global__ void k(float *out, int n)\n{\n"
                 "    int i = threadIdx.x;\n    if (i < n)\n"
                 "        out[i] = tex1Dfetch(t_in, i);\n}\n");
    char *f = repair(&s, "kernel.cu(6): error: identifier \"t_in\" is undefined\n", tmp);
    CHECK_CONTAINS(f, "\"pull_decl:t_in@src/textures.cuh:6(text)\"");
    CHECK_CONTAINS(f, "\"texture_object:t_in\"");
    CHECK_CONTAINS(s.data, "#include \"lscat_texref.h\"");
    CHECK_CONTAINS(s.data, "__device__ lscat_texref<float, 1, cudaReadModeElementType> t_in;");
    CHECK_CONTAINS(s.data, "LSCAT_TEXREF_REGISTER(t_in);");
    CHECK(strstr(s.data, "t_in;") < strstr(s.data, "__global__"));
    char *copied = xasprintf("%s/lscat_texref.h", tmp);
    CHECK(fs_exists(copied));
    free(copied);
    free(f); /* the same diagnostic again (another error kept it undefined): not pulled twice */
    f = repair(&s, "kernel.cu(9): error: identifier \"t_in\" is undefined\n", tmp);
    CHECK(!strstr(f, "pull_decl"));
    fs_remove_tree(tmp);
    free(f);
    buf_release(&s);
}

static void test_texref__a_pulled_reference_precedes_a_use_inside_a_conditional_block(void)
{
    char tmp[] = "/tmp/lscat-texref-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    struct buf s = BUF_INIT;
    buf_adds(&s, "#include <vector_types.h>\n#define NODETEX 1\n#define TWO \\\n  2\n"
                 "#if NODETEX\n__device__ float fetch(int i) { return tex1Dfetch(t_in, i); }\n"
                 "#endif\n__global__ void k(float *o) { o[0] = fetch(TWO); }\n");
    char *f = repair(&s, "kernel.cu(6): error: identifier \"t_in\" is undefined\n", tmp);
    CHECK_CONTAINS(f, "\"texture_object:t_in\"");
    CHECK_CONTAINS(s.data, "#define TWO \\\n  2\n/* lscat execute: pulled from src/textures.cuh:6 "
                           "(text) */\n__device__ lscat_texref<float, 1, cudaReadModeElementType> "
                           "t_in;");
    CHECK(strstr(s.data, "t_in;") < strstr(s.data, "#if NODETEX"));
    fs_remove_tree(tmp);
    free(f);
    buf_release(&s);
}

static void test_texref__every_declared_reference_is_rewritten_and_registered(void)
{
    char tmp[] = "/tmp/lscat-texref-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    struct buf s = BUF_INIT;
    buf_adds(&s, "// texture<int> in_a_comment;\nstatic texture<float4, 2> a, b;\n"
                 "texture <uchar4, 1, cudaReadModeNormalizedFloat> c;\n"
                 "__global__ void k(float *o) { o[0] = tex2D(a, 0, 0).x + tex1Dfetch(c, 1).y; }\n");
    char *f = repair(&s, "kernel.cu(2): error: texture is not a template\n", tmp);
    CHECK_CONTAINS(f, "\"texture_object:a,b,c\"");
    CHECK(!strstr(f, "pull_decl"));
    CHECK_CONTAINS(s.data, "// texture<int> in_a_comment;");
    CHECK_CONTAINS(s.data, "static __device__ lscat_texref<float4, 2> a, b;");
    CHECK_CONTAINS(s.data, "LSCAT_TEXREF_REGISTER(a); LSCAT_TEXREF_REGISTER(b);");
    CHECK_CONTAINS(s.data, "__device__ lscat_texref<uchar4, 1, cudaReadModeNormalizedFloat> c;");
    fs_remove_tree(tmp);
    free(f);
    buf_release(&s);
}

static void test_texref__nothing_is_rewritten_without_a_removed_api_diagnostic(void)
{
    struct buf s = BUF_INIT;
    buf_adds(&s, "texture<float> t;\n__global__ void k(float *o) { o[0] = y; }\n");
    char *f = repair(&s, "kernel.cu(2): error: identifier \"y\" is undefined\n", "/nonexistent");
    CHECK(!strstr(f, "texture_object"));
    CHECK_CONTAINS(s.data, "texture<float> t;");
    free(f);
    buf_release(&s);
}

/* The stand-in header with real nvcc: fetches of every form, the old host binding calls, and a
 * registry filled before main (the program runs without a GPU: it only reads the registry). */
static void test_texref__the_stand_in_compiles_old_host_calls_and_registers_before_main(void)
{
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    char *root = fixture_source_root();
    char *dir = realpath(test_tmpdir(), NULL);
    char *src = fs_join(dir, "old.cu"), *bin = fs_join(dir, "old");
    const char *text =
        "#include \"lscat_texref.h\"\n"
        "__device__ lscat_texref<float, 1, cudaReadModeElementType> t_in; "
        "LSCAT_TEXREF_REGISTER(t_in);\n"
        "static __device__ lscat_texref<uchar4, 2, cudaReadModeNormalizedFloat> t_img; "
        "LSCAT_TEXREF_REGISTER(t_img);\n"
        "__device__ float via(const texture<float, 1> &t, int i) { return tex1Dfetch(t, i); }\n"
        "__global__ void k(float *o) { int i = threadIdx.x;\n"
        "  o[i] = via(t_in, i) + tex1D(t_in, 0.5f) + tex2D(t_img, i, 0).w; }\n"
        "void host(float *d, cudaArray_t a) { size_t off;\n"
        "  cudaBindTexture(&off, t_in, d, 64 * sizeof(float));\n"
        "  cudaBindTexture2D(0, t_img, d, cudaCreateChannelDesc<uchar4>(), 8, 8, 32);\n"
        "  cudaBindTextureToArray(t_in, a); cudaUnbindTexture(t_in); k<<<1, 32>>>(d); }\n"
        "int main() { return lscat_ntexrefs == 2 && lscat_texrefs[1].normalized &&\n"
        "  lscat_texrefs[1].desc.x == 8 && lscat_texrefs[0].desc.f == cudaChannelFormatKindFloat"
        " ? 0 : 1; }\n";
    CHECK_OK(fs_write_atomic(src, text, strlen(text)));
    const char *home = getenv("CUDA_HOME");
    char *cmd = xasprintf("\"%s/bin/nvcc\" -arch=sm_90 -I\"%s/isolate/compat\" \"%s\" -o \"%s\" "
                          ">\"%s.log\" 2>&1", home ? home : "/usr/local/cuda", root, src, bin, bin);
    CHECK_INT(system(cmd), ==, 0);
    char *run = xasprintf("\"%s\"", bin);
    CHECK_INT(system(run), ==, 0);
    free(run);
    free(cmd);
    free(src);
    free(bin);
    free(dir);
    free(root);
}

static const char *const names[] = { "texref_scale", "texref_sum2d", "tex_blur" };
static const int param_counts[] = { 2, 3, 4 };

static void test_texref__the_golden_texture_kernels_build_with_nvcc(void)
{
    if (!fixture_have_nvcc())
        test_skip("nvcc not found");
    struct fixture_env env;
    char ids[3][65];
    CHECK_OK(fixture_env_init(&env));
    for (int i = 0; i < 3; i++) {
        char *seed = xasprintf("golden-tex:%s", names[i]);
        CHECK_OK(fixture_add_golden(&env, names[i], seed, param_counts[i], ids[i]));
        free(seed);
    }
    struct execute_options o = EXECUTE_OPTIONS_INIT;
    struct execute_counts c;
    o.jobs = 2;
    o.probe = EXECUTE_PROBE_NEVER;
    CHECK_OK(execute_run(&c, env.s, env.work, &o, env.run_id));
    CHECK_INT(c.built_after_repair, ==, 2);
    CHECK_INT(c.build_failed, ==, 0);
    for (int i = 0; i < 2; i++) {
        char *fixes = fixture_query_text(&env, "SELECT fixes FROM builds WHERE kernel_id = ?",
                                         ids[i]);
        CHECK_CONTAINS(fixes, "texture_object:");
        CHECK_CONTAINS(fixes, "pull_decl:");
        free(fixes);
        char *cls = fixture_query_text(&env, "SELECT a.error_class FROM build_attempts a JOIN "
                                             "builds b ON b.id = a.build_id WHERE "
                                             "b.kernel_id = ? AND a.attempt = 1", ids[i]);
        CHECK_STR(cls, "removed_cuda_api");
        free(cls);
    }
    fixture_env_release(&env);
}

static void test_texref__a_texture_object_parameter_is_bound_in_the_harness(void)
{
    char *root = fixture_source_root();
    struct buf h = BUF_INIT, p = BUF_INIT;
    char *dir = xasprintf("%s/tests/isolate/fixtures/harness-golden/tex_blur", root);
    char *hp = fs_join(dir, "harness.cu"), *pp = fs_join(dir, "params.json");
    CHECK_OK(buf_read_file(&h, hp));
    CHECK_OK(buf_read_file(&p, pp));
    CHECK_CONTAINS(h.data, "{ 3, 'p', cudaCreateChannelDesc<unsigned char>() }, /* tex2D(img) */");
    CHECK_CONTAINS(h.data, "lscat_texparams, "); /* handed to the harness core, which binds it */
    CHECK_CONTAINS(p.data, "\"textures\":[{\"param\":\"img\",\"index\":3,\"fetch\":\"tex2D\","
                           "\"resource\":\"pitch2d\",\"elem\":\"unsigned char\"}]");
    free(hp);
    free(pp);
    free(dir);
    free(root);
    buf_release(&h);
    buf_release(&p);
}

int main(void)
{
    TEST_RUN(test_texref__a_missing_reference_is_pulled_and_becomes_a_texture_object);
    TEST_RUN(test_texref__a_pulled_reference_precedes_a_use_inside_a_conditional_block);
    TEST_RUN(test_texref__every_declared_reference_is_rewritten_and_registered);
    TEST_RUN(test_texref__nothing_is_rewritten_without_a_removed_api_diagnostic);
    TEST_RUN(test_texref__a_texture_object_parameter_is_bound_in_the_harness);
    TEST_RUN(test_texref__the_stand_in_compiles_old_host_calls_and_registers_before_main);
    TEST_RUN(test_texref__the_golden_texture_kernels_build_with_nvcc);
    return test_done();
}
