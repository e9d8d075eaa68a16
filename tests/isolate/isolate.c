/* Unit tests of the isolate library's pure parts: parameter roles, block-name rules, the
 * normalisation behind kernel ids, the worker record format, template arguments of harnesses,
 * and one real libclang extraction of a small tree. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "isolate/extract.h"
#include "isolate/harness.h"
#include "isolate/isolate.h"
#include "isolate/params.h"
#include "common/record.h"
#include "isolate/srctext.h"
#include "isolate/sysinc.h"

#include <stdio.h>
#include "tests/support/test.h"

#include <stdlib.h>
#include <string.h>

static void test_params__roles_follow_common_names(void)
{
    CHECK_STR(params_role_name(params_role_of("width")), "width");
    CHECK_STR(params_role_name(params_role_of("numCols")), "width");
    CHECK_STR(params_role_name(params_role_of("nx")), "width");
    CHECK_STR(params_role_name(params_role_of("num_rows")), "height");
    CHECK_STR(params_role_name(params_role_of("H")), "height");
    CHECK_STR(params_role_name(params_role_of("n")), "size");
    CHECK_STR(params_role_name(params_role_of("nElements")), "size");
    CHECK_STR(params_role_name(params_role_of("array_len")), "size");
    CHECK_STR(params_role_name(params_role_of("pitch")), "stride");
    CHECK_STR(params_role_name(params_role_of("lda")), "stride");
    CHECK_STR(params_role_name(params_role_of("alpha")), "scale");
    CHECK_STR(params_role_name(params_role_of("beta1")), "scale");
    CHECK_STR(params_role_name(params_role_of("seed")), "unknown");
    /* a dimension of a named matrix (CUDA samples' matrixMul: wA, wB) */
    CHECK_STR(params_role_name(params_role_of("wA")), "width");
    CHECK_STR(params_role_name(params_role_of("wB")), "width");
    CHECK_STR(params_role_name(params_role_of("hA")), "height");
    CHECK_STR(params_role_name(params_role_of("nA")), "size");
    CHECK_STR(params_role_name(params_role_of("rows_c")), "height");
    CHECK_STR(params_role_name(params_role_of("a")), "scale"); /* alone it is still a factor */
    CHECK_STR(params_role_name(params_role_of("alphaA")), "scale");
    /* a block or tile size is the configuration's block, not a matrix size (#14 item 9) */
    CHECK_STR(params_role_name(params_role_of("block_size")), "block");
    CHECK_STR(params_role_name(params_role_of("blockSize")), "block");
    CHECK_STR(params_role_name(params_role_of("TILE_WIDTH")), "block");
    CHECK_STR(params_role_name(params_role_of("BLOCK_DIM")), "block");
    CHECK_STR(params_role_name(params_role_of("num_blocks")), "size"); /* a count of blocks */
    CHECK_STR(params_role_name(params_role_of("nblocks")), "size");
    CHECK_STR(params_role_name(params_role_of("matrix_size")), "size");
}

static void test_params__block_names_are_recognised(void)
{
    CHECK(params_is_block_name("BLOCK_SIZE"));
    CHECK(params_is_block_name("TILE"));
    CHECK(params_is_block_name("tileWidth"));
    CHECK(params_is_block_name("THREADS"));
    CHECK(!params_is_block_name("RADIUS"));
    CHECK(!params_is_block_name("N"));
}

static void test_normalise__ignores_comments_and_whitespace(void)
{
    const char *a = "__global__ void k(int *p) {\n  // comment\n  p[0] = 1; /* x */ }\n";
    const char *b = "__global__  void k(int *p)\n{ p[0] = 1;   }";
    struct buf na = BUF_INIT, nb = BUF_INIT, nc = BUF_INIT;
    isolate_normalise(&na, a, strlen(a));
    isolate_normalise(&nb, b, strlen(b));
    CHECK_STR(na.data, nb.data);
    const char *c = "const char *s = \"a  // not a comment\";";
    isolate_normalise(&nc, c, strlen(c));
    CHECK_CONTAINS(nc.data, "\"a  // not a comment\"");
    buf_release(&na);
    buf_release(&nb);
    buf_release(&nc);
}

static void test_record__round_trips_binary_values(void)
{
    struct buf b = BUF_INIT;
    record_begin(&b, "kernel", 2);
    record_field(&b, "source", "a\0b\nc", 5);
    record_field_int(&b, "line", 42);
    record_begin(&b, "note", 1);
    record_field_str(&b, "class", "x");
    size_t pos = 0;
    struct record r;
    CHECK_INT(record_next(&r, b.data, b.len, &pos), ==, 1);
    CHECK_STR(r.type, "kernel");
    CHECK_INT(record_get(&r, "source")->value_len, ==, 5);
    CHECK(memcmp(record_get(&r, "source")->value, "a\0b\nc", 5) == 0);
    CHECK_INT(record_int(&r, "line"), ==, 42);
    CHECK_INT(record_next(&r, b.data, b.len, &pos), ==, 1);
    CHECK_STR(record_str(&r, "class"), "x");
    CHECK_INT(record_next(&r, b.data, b.len, &pos), ==, 0);
    buf_release(&b);
}

static void test_record__reports_a_truncated_tail(void)
{
    struct buf b = BUF_INIT;
    record_begin(&b, "kernel", 1);
    record_field_str(&b, "source", "0123456789");
    buf_setlen(&b, b.len - 5); /* the worker was killed while writing */
    size_t pos = 0;
    struct record r;
    CHECK_INT(record_next(&r, b.data, b.len, &pos), ==, LSCAT_EINVALID);
    buf_release(&b);
}

static void test_harness__instantiates_block_parameters_per_block_value(void)
{
    struct harness_kernel k = { .name = "ns::reduce", .call = "ns::reduce",
                                .tparams = "type T float\nblock BS BX\nvalue R 1\n",
                                .is_template = 1, .roles = "buffer,buffer,size",
                                .names = "in,out,n", .indexing = "1d" };
    struct buf args = BUF_INIT, h = BUF_INIT;
    harness_template_args(&args, &k, "BX");
    CHECK_STR(args.data, "<float, BX, 1>");
    harness_generate(&h, &k);
    CHECK_CONTAINS(h.data, "case 256: return &ns::reduce<float, 256, 1>;");
    CHECK_CONTAINS(h.data, "#include \"tune/timing.h\"");
    CHECK_CONTAINS(h.data, "#include \"isolate/harness_core.h\""); /* linked with the core */
    CHECK_CONTAINS(h.data, "extern const lscat_kernel_desc lscat_kernel = {");
    CHECK_CONTAINS(h.data, "\"buffer\", \"buffer\", \"size\", nullptr");
    CHECK_CONTAINS(h.data, "lscat_names[] = { \"in\", \"out\", \"n\", nullptr");
    CHECK_CONTAINS(h.data, "lscat_grid2d = 0;");
    CHECK_CONTAINS(h.data, "lscat_ref_block[3] = { 256, 1, 1 }");
    CHECK(strstr(h.data, "lscat_check_config") == NULL); /* the output check is the core's */
    buf_release(&args);
    buf_release(&h);
}

/* The generated part of harness.cu defines the two table types the harness core reads through
 * lscat_kernel; the core defines them too, and the two must be the same text (one definition). */
static void test_harness__the_cores_table_types_are_the_generated_ones(void)
{
    struct harness_kernel k = { .name = "saxpy", .call = "saxpy", .roles = "size,buffer",
                                .names = "n,x", .indexing = "1d" };
    struct buf h = BUF_INIT, core = BUF_INIT;
    const char *root = getenv("LSCAT_ROOT") ? getenv("LSCAT_ROOT") : ".";
    char *path = xasprintf("%s/isolate/harness_core.cu", root);
    harness_generate(&h, &k);
    CHECK_OK(buf_read_file(&core, path));
    const char *types[] = { "struct lscat_member {", "struct lscat_texparam {", NULL };
    for (int i = 0; types[i]; i++) {
        const char *at = strstr(h.data, types[i]);
        CHECK(at != NULL);
        char *line = xstrndup(at, strcspn(at, "\n") + 1); /* with its newline: the whole line */
        CHECK(strstr(core.data, line) != NULL);
        free(line);
    }
    free(path);
    buf_release(&h);
    buf_release(&core);
}

/* siboehm's sgemmWarptiling: a 2D kernel (instantiated at 8..32) whose block template value
 * NUM_THREADS is 128 at its source's launch gets that instantiation too; its tiles binding
 * reads the grid expression and rounds M and N to their tiles, K (no divisor) to their lcm. */
static void test_harness__a_tiled_kernel_gets_its_sources_block_and_tiles(void)
{
    struct harness_kernel k = { .name = "warp", .call = "warp", .tparams = "value BM 128\n"
                                "block NUM_THREADS BX\n", .is_template = 1, .is2d = 1,
                                .roles = "size,size,size,scale,buffer", .names = "M,N,K,alpha,C",
                                .indexing = "2d", .launch = "block 128 1 1\nsmem 0\n"
                                "grid_expr cdiv(N,64);cdiv(M,128);1\n" };
    struct buf h = BUF_INIT;
    harness_generate(&h, &k);
    CHECK_CONTAINS(h.data, "case 32: return &warp<128, 32>;");
    CHECK_CONTAINS(h.data, "case 128: return &warp<128, 128>; /* the source's block */");
    CHECK_CONTAINS(h.data, "lscat_src_grid[3] = { \"cdiv(N,64)\", \"cdiv(M,128)\", \"1\" };");
    CHECK_CONTAINS(h.data, "lscat_tile_align[] = { 128, 64, 128, 0, 0, 0 };");
    /* siboehm's sgemm_shared_mem_block: BLOCKSIZE is a tile side (32 under 1024 threads),
     * not the block: no 1024 instantiation (its 32x32 floats would be 4 MiB of shared memory) */
    k.tparams = "block BLOCKSIZE BX\n";
    k.launch = "block 1024 1 1\nsmem 0\ngrid_expr cdiv(M,32);cdiv(N,32);1\n";
    buf_reset(&h);
    harness_generate(&h, &k);
    CHECK(strstr(h.data, "case 1024:") == NULL);
    struct harness_launch l;
    harness_launch_parse(&l, "block 256 1 1\ngrid_expr 16;cdiv(M,256)+cdiv(M2,8);(N/2048)*2\n");
    CHECK_INT(harness_grid_align(&l, "M"), ==, 256);   /* not M2's 8 */
    CHECK_INT(harness_grid_align(&l, "N"), ==, 2048);
    CHECK_INT(harness_grid_align(&l, "K"), ==, 0);
    harness_launch_parse(&l, "block 256 1 1\ngrid_expr 16;M\"x;1\n"); /* not the language */
    CHECK_STR(l.grid_expr[0], "");
    buf_release(&h);
}

static void test_harness__a_2d_kernel_gets_2d_grids_and_a_16x16_reference(void)
{
    struct harness_kernel k = { .name = "stencil", .call = "stencil", .tparams = "",
                                .roles = "buffer,buffer,width,height", .indexing = "2d" };
    struct buf h = BUF_INIT;
    CHECK(harness_grid2d(&k));
    harness_generate(&h, &k);
    CHECK_CONTAINS(h.data, "#define LSCAT_INDEXING \"2d\"");
    CHECK_CONTAINS(h.data, "lscat_grid2d = 1;");
    CHECK_CONTAINS(h.data, "lscat_ref_block[3] = { 16, 16, 1 }");
    buf_reset(&h);
    k.indexing = "grid_stride";
    CHECK(!harness_grid2d(&k));
    k.indexing = "3d"; /* z is 1 in the harness (depth = 1): planned and gridded as 2D */
    CHECK(harness_grid2d(&k));
    k.indexing = NULL; /* isolated before the analysis: is2d decides */
    k.is2d = 1;
    CHECK(harness_grid2d(&k));
    buf_release(&h);
}

static void test_harness__texture_object_parameters_get_their_fetch_and_element(void)
{
    struct harness_kernel k = { .name = "sp", .call = "sp", .tparams = "type T float\n",
                                .is_template = 1, .roles = "buffer,scale,unknown,scale",
                                .names = "dst,texA,img,texB", .indexing = "1d",
                                .source = "#define LOAD_A(i) tex1Dfetch<fComplex>(texA, i)\n"
                                          "// tex1Dfetch is the texture-object form here\n"
                                          "template <class T> __global__ void sp(T *dst, "
                                          "cudaTextureObject_t texA, cudaTextureObject_t img, "
                                          "cudaTextureObject_t texB) {\n"
                                          "  dst[0] = LOAD_A(0).x + tex2D< T >( img, 1, 2) + "
                                          "tex1D<T>(texB, 0.5f) + my_tex2D<int>(dst, 1);\n}\n" };
    struct buf lines = BUF_INIT, h = BUF_INIT;
    CHECK_INT(harness_textures(&lines, &k), ==, 3);
    CHECK_STR(lines.data, "1\ttex1Dfetch\tlinear\ttexA\tfComplex\n"
                          "2\ttex2D\tpitch2d\timg\tfloat\n"
                          "3\ttex1D\tarray1d\ttexB\tfloat\n");
    harness_generate(&h, &k);
    CHECK_CONTAINS(h.data, "{ 1, 'l', cudaCreateChannelDesc<fComplex>() }, /* tex1Dfetch(texA) */");
    CHECK_CONTAINS(h.data, "{ 2, 'p', cudaCreateChannelDesc<float>() }, /* tex2D(img) */");
    CHECK_CONTAINS(h.data, "{ 3, 'a', cudaCreateChannelDesc<float>() }, /* tex1D(texB) */");
    buf_reset(&lines);
    k.source = NULL; /* nothing known: an empty table */
    CHECK_INT(harness_textures(&lines, &k), ==, 0);
    buf_release(&lines);
    buf_release(&h);
}

static void test_extract__finds_kernel_and_its_closure(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    char *file = fs_join(root, "k.cu");
    const char *src = "#define TWICE(x) (2 * (x))\n"
                      "struct S { float v; };\n"
                      "__device__ float unused(float x) { return x; }\n"
                      "__device__ float helper(S s) { return TWICE(s.v); }\n"
                      "namespace ns { __global__ void k(float *out, S s, int n) {\n"
                      "  if ((int)threadIdx.x < n) out[threadIdx.x] = helper(s); } }\n";
    test_write_file(file, src, strlen(src));
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    struct extract_options o = EXTRACT_OPTIONS_INIT;
    o.root = root;
    o.file = file;
    o.cuda_home = cuda;
    struct buf out = BUF_INIT;
    CHECK_OK(extract_file(&out, &o));
    size_t pos = 0;
    struct record r;
    int kernels = 0;
    while (record_next(&r, out.data, out.len, &pos) == 1) {
        if (strcmp(r.type, "kernel") != 0)
            continue;
        kernels++;
        CHECK_STR(record_str(&r, "name"), "ns::k");
        const char *s = record_str(&r, "source");
        CHECK_CONTAINS(s, "#define TWICE(x) (2 * (x))");
        CHECK_CONTAINS(s, "struct S { float v; };");
        CHECK_CONTAINS(s, "helper(S s)");
        CHECK_CONTAINS(s, "namespace ns {");
        CHECK(strstr(s, "unused") == NULL);
        CHECK_STR(record_str(&r, "roles"), "buffer,unknown,size");
        CHECK_STR(record_str(&r, "indexing"), "1d");
        CHECK_STR(record_str(&r, "indexing_uses"), "threadIdx.x");
    }
    CHECK_INT(kernels, ==, 1);
    buf_release(&out);
    free(file);
    free(root);
}

/* Parse root/file (written from src) with extract_file and the given -I folders; the records. */
static void extract_src(struct buf *out, const char *root, const char *name, const char *src,
                        const char *const *incdirs, int nincdirs)
{
    char *file = fs_join(root, name);
    test_write_file(file, src, strlen(src));
    struct extract_options o = EXTRACT_OPTIONS_INIT;
    o.root = root;
    o.file = file;
    o.cuda_home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    o.include_dirs = incdirs;
    o.n_include_dirs = nincdirs;
    CHECK_OK(extract_file(out, &o));
    free(file);
}

/* The source of kernel `name` in the records (borrowed from out), or NULL. */
static const char *record_kernel_source(const struct buf *out, const char *name)
{
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out->data, out->len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0 && strcmp(record_str(&r, "name"), name) == 0)
            return record_str(&r, "source");
    return NULL;
}

static void test_extract__keeps_a_conditional_block_around_a_declaration_whole(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    char *hdr = fs_join(root, "m.h");
    const char *h = "#ifndef M_H\n#define M_H\n#ifdef __CUDACC__\n__host__ __device__\n#endif\n"
                    "inline float twice(float v) { return 2 * v; }\n#endif\n";
    test_write_file(hdr, h, strlen(h));
    struct buf out = BUF_INIT;
    extract_src(&out, root, "c.cu", "#include \"m.h\"\n"
                "__global__ void k(float *a) { a[0] = twice(a[0]); }\n", NULL, 0);
    const char *s = record_kernel_source(&out, "k");
    CHECK(s != NULL);
    CHECK_CONTAINS(s, "#ifdef __CUDACC__\n__host__ __device__\n#endif\ninline float twice");
    buf_release(&out);
    free(hdr);
    free(root);
}

static void test_srctext__widens_an_extent_to_whole_conditional_blocks(void)
{
    const char t[] = "int a;\n#if X\nint b;\n#ifdef Y\nY\n#endif\nint c;\n#else\nint d;\n#endif\nint e;\n";
    unsigned start = (unsigned)(strstr(t, "Y\n#endif") - t), end = (unsigned)(strstr(t, "int c;") - t + 6);
    CHECK_INT(srctext_balance_conditionals(t, sizeof t - 1, &start, &end), ==, 1);
    CHECK_INT(start, ==, (unsigned)(strstr(t, "#ifdef Y") - t));
    start = (unsigned)(strstr(t, "int c;") - t);
    end = (unsigned)(strstr(t, "int d;") - t + 6);
    CHECK_INT(srctext_balance_conditionals(t, sizeof t - 1, &start, &end), ==, 1);
    CHECK_INT(start, ==, (unsigned)(strstr(t, "#if X") - t));
    start = (unsigned)(strstr(t, "#ifdef Y") - t);
    end = start + 9;
    CHECK_INT(srctext_balance_conditionals(t, sizeof t - 1, &start, &end), ==, 1);
    CHECK_INT(end, ==, (unsigned)(strstr(t, "int c;") - t));
    start = 0;
    end = 6; /* int a; touches no block */
    CHECK_INT(srctext_balance_conditionals(t, sizeof t - 1, &start, &end), ==, 0);
}

static void test_extract__a_trees_own_cuda_h_does_not_hide_the_toolkits(void)
{
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (!fs_exists(rt)) {
        printf("skip - no CUDA headers\n");
        free(rt);
        return;
    }
    char *root = realpath(test_tmpdir(), NULL);
    char *inc = fs_join(root, "inc"), *own = fs_join(root, "inc/cuda.h");
    CHECK_OK(fs_mkdirs(inc, 0755));
    test_write_file(own, "/* the tree's own, older cuda.h */\n", 35);
    struct buf out = BUF_INIT;
    const char *dirs[] = { inc };
    extract_src(&out, root, "s.cu", "__global__ void k(float *a) { a[threadIdx.x] = 1; }\n", dirs, 1);
    size_t pos = 0;
    struct record r;
    int kernels = 0;
    while (record_next(&r, out.data, out.len, &pos) == 1)
        if (strcmp(r.type, "tu") == 0)
            CHECK_STR(record_str(&r, "first_error"), "");
        else if (strcmp(r.type, "kernel") == 0)
            kernels++;
    CHECK_INT(kernels, ==, 1);
    buf_release(&out);
    free(own);
    free(inc);
    free(rt);
    free(root);
}

static void test_extract__a_missing_header_costs_only_the_kernels_that_use_what_it_declares(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT;
    extract_src(&out, root, "mixed.cu",
                "#include <Python.h>\n#include <windows.h>\n#include \"gone_helpers.h\"\n"
                "struct Pair { gone_real_t a, b; };\n"
                "__global__ void uses_macro(float *x, int n)\n"
                "{ int i = threadIdx.x; if (i < n) x[i] = GONE_SCALE * x[i]; }\n"
                "__device__ float sq(float v) { return v * v; }\n"
                "__global__ void uses_type(Pair *p) { p[threadIdx.x].a = 0; }\n"
                "__global__ void complete(float *x, int n)\n"
                "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = sq(x[i]); }\n"
                "static PyObject *wrap(PyObject *self, PyObject *args) { return Py_None; }\n"
                "DWORD WINAPI worker(LPVOID arg) { return 0; }\n", NULL, 0);
    struct buf kernels = BUF_INIT, notes = BUF_INIT; /* one pass: record_next splits `out` */
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out.data, out.len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0)
            buf_addf(&kernels, "%s ", record_str(&r, "name"));
        else if (strcmp(r.type, "note") == 0 && strcmp(record_str(&r, "class"), "kernel_missing_header") == 0)
            buf_addf(&notes, "%s\n", record_str(&r, "message"));
    CHECK_STR(kernels.data, "complete "); /* host code's missing headers cost no kernel */
    CHECK_CONTAINS(notes.data, "kernel 'uses_macro' needs what a missing header declares "
                               "(use of undeclared identifier 'GONE_SCALE'");
    CHECK_CONTAINS(notes.data, "'gone_helpers.h'");
    CHECK_CONTAINS(notes.data, "kernel 'uses_type'"); /* through its struct */
    buf_release(&kernels);
    buf_release(&notes);
    buf_release(&out);
    free(root);
}

/* "name tparams" of every kernel record, one per line. */
static void kernel_tparams(struct buf *list, struct buf *out)
{
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out->data, out->len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0)
            buf_addf(list, "%s: %s|%s\n", record_str(&r, "name"), record_str(&r, "tparams"),
                     record_str(&r, "source"));
}

/* "name: launch" of every kernel record, one per line. */
static void kernel_launches(struct buf *list, struct buf *out)
{
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out->data, out->len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0)
            buf_addf(list, "%s: %s|\n", record_str(&r, "name"), record_str(&r, "launch"));
}

/* The repository's own launch (isolate/launch.c): a dim3 temporary with shared memory bytes,
 * a dim3 variable of macros and constexpr values with a macro's 64 KiB, a template's launch,
 * one inside a host template, bytes from the tree's cudaFuncSetAttribute opt-in,
 * __launch_bounds__ with a literal and a macro; a block known only at run time stays out. */
static void test_extract__records_the_sources_own_launch_and_launch_bounds(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "l.cu",
                "#define BS 32\n#define SHM (64 * 1024)\n#define NT 128\nconstexpr int TY = 8;\n"
                "__global__ void tile(float *a, int n) { a[threadIdx.y * 32 + threadIdx.x] = n; }\n"
                "__global__ void big(float *a) { extern __shared__ float s[]; s[threadIdx.x] = a[0];\n"
                "  a[threadIdx.x] = s[0]; }\n"
                "__global__ void __launch_bounds__(64) bounded(float *a) { a[threadIdx.x] = 1; }\n"
                "__global__ void __launch_bounds__(NT, 2) bmacro(float *a) { a[threadIdx.x] = 1; }\n"
                "template <int N> __global__ void tk(float *a) { a[threadIdx.x] = N; }\n"
                "__global__ void dyn(float *a) { a[threadIdx.x] = 2; }\n"
                "void host(float *a, int n, int b)\n"
                "{ dim3 blk(BS, TY); size_t bytes = SHM;\n"
                "  tile<<<dim3(n / 32, n / 8), dim3(32, 8), 2048>>>(a, n);\n"
                "  big<<<16, blk, bytes>>>(a); bounded<<<1, 64>>>(a); bmacro<<<n, b>>>(a);\n"
                "  tk<4><<<dim3(2, 2, 1), 128, 4 * 256>>>(a); dyn<<<1, b>>>(a); }\n"
                "template <class F> __global__ void tsum(float *r, const F *v) { r[0] = v[0]; }\n"
                "template <class F> void th(float *r, const F *v) { tsum<<<1, 1024>>>(r, v); }\n"
                "__global__ void optk(float *a) { extern __shared__ float s[]; s[0] = 1; a[0] = s[0]; }\n"
                "static size_t init_optk() { size_t m = (64 + 8) * 1024;\n"
                "  cudaFuncSetAttribute(optk, cudaFuncAttributeMaxDynamicSharedMemorySize, m);\n"
                "  return m; }\n"
                "void run_optk(float *a) { static size_t bytes = init_optk(); optk<<<4, 256, bytes>>>(a); }\n",
                NULL, 0);
    kernel_launches(&list, &out);
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (fs_exists(rt)) { /* launches parse only with the toolkit's headers */
        /* its grid is n's: an expression over the kernel's parameter */
        CHECK_CONTAINS(list.data, "tile: block 32 8 1\nsmem 2048\ngrid_expr (n/32);(n/8);1\n|");
        CHECK_CONTAINS(list.data, "big: block 32 8 1\nsmem 65536\ngrid 16 1 1\n|");
        CHECK_CONTAINS(list.data, "tk: block 128 1 1\nsmem 1024\ngrid 2 2 1\n|");
        CHECK_CONTAINS(list.data, "bounded: block 64 1 1\nsmem 0\ngrid 1 1 1\nbounds 64\n|");
        CHECK_CONTAINS(list.data, "dyn: |"); /* a block known at run time only */
        /* a launch left unresolved inside a host template */
        CHECK_CONTAINS(list.data, "tsum: block 1024 1 1\nsmem 0\ngrid 1 1 1\n|");
        /* bytes known only at run time: the tree's opt-in says them */
        CHECK_CONTAINS(list.data, "optk: block 256 1 1\nsmem 73728\ngrid 4 1 1\n|");
    }
    CHECK_CONTAINS(list.data, "bmacro: bounds 128\n|");
    free(rt);
    buf_release(&list);
    buf_release(&out);
    free(root);
}

/* The source's grid as an expression (docs/isolate.md "grid_expr"): cuda_hgemm's launch (a
 * `dim3 grid` of an inline div_ceil over the host's M, N passed on to the kernel, macros),
 * siboehm's (a CEIL_DIV macro over const locals, the kernel's parameters in another order
 * than the host's), a host variable passed under another name; a grid of a value the call does
 * not pass, of a run-time call, or of a conditional records none. */
static void test_extract__records_the_sources_grid_as_an_expression_over_kernel_parameters(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "g.cu",
                "#include <cstddef>\n#define BLOCK_ROWS 256\n#define BLOCK_COLS 128\n"
                "#define BLOCK_STRIDE 16\n#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))\n"
                "inline __device__ __host__ size_t div_ceil(size_t a, size_t b) {\n"
                "  return (a % b != 0) ? (a / b + 1) : (a / b); }\n"
                "__global__ void mma(const float *A, const float *B, float *C, size_t M, size_t N,\n"
                "  size_t K) { C[blockIdx.y * N + threadIdx.x] = A[K] + B[M]; }\n"
                "void mmaHost(float *A, float *B, float *C, size_t M, size_t N, size_t K) {\n"
                "  dim3 block(256);\n"
                "  dim3 grid(BLOCK_STRIDE, div_ceil(M, BLOCK_ROWS), div_ceil(N, BLOCK_COLS * BLOCK_STRIDE));\n"
                "  mma<<<grid, block, 1024>>>(A, B, C, M, N, K); }\n"
                "template <int BM, int BN> __global__ void sg(int M, int N, int K, float *C)\n"
                "{ C[(blockIdx.y * BM + threadIdx.x) * N + blockIdx.x * BN] = K; }\n"
                "void sgHost(int M, int N, int K, float *C) { const unsigned BM = 128, BN = 64;\n"
                "  dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM)); dim3 blockDim((BM * BN) / 64);\n"
                "  sg<BM, BN><<<gridDim, blockDim>>>(M, N, K, C); }\n"
                "__global__ void renamed(float *x, int count) { x[blockIdx.x * 64 + threadIdx.x] = count; }\n"
                "__global__ void member(float *x, int n, int m) { x[threadIdx.x] = n + m; }\n"
                "void mhost(float *x, int n, int m) { dim3 b(16, 8); dim3 g(m / b.x, n / b.y);\n"
                "  member<<<g, b>>>(x, n, m); }\n"
                "__global__ void other(float *x, int n) { x[threadIdx.x] = n; }\n"
                "__global__ void runtime(float *x, int n) { x[threadIdx.x] = n; }\n"
                "__global__ void cond(float *x, int n) { x[threadIdx.x] = n; }\n"
                "int pick(int n);\n"
                "void host(float *x, int len, int m) { renamed<<<(len + 63) / 64, 64>>>(x, len);\n"
                "  other<<<m / 32, 32>>>(x, len); runtime<<<pick(len), 32>>>(x, len);\n"
                "  cond<<<len > 4 ? len : 4, 32>>>(x, len); }\n",
                NULL, 0);
    kernel_launches(&list, &out);
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (fs_exists(rt)) { /* launches parse only with the toolkit's headers */
        CHECK_CONTAINS(list.data, "mma: block 256 1 1\nsmem 1024\n"
                                  "grid_expr 16;cdiv(M,256);cdiv(N,2048)\n|");
        CHECK_CONTAINS(list.data, "sg: block 128 1 1\nsmem 0\ngrid_expr cdiv(N,64);cdiv(M,128);1\n|");
        CHECK_CONTAINS(list.data, "renamed: block 64 1 1\nsmem 0\ngrid_expr cdiv(count,64);1;1\n|");
        CHECK_CONTAINS(list.data, "member: block 16 8 1\nsmem 0\ngrid_expr (m/16);(n/8);1\n|");
        CHECK_CONTAINS(list.data, "other: block 32 1 1\nsmem 0\n|");
        CHECK_CONTAINS(list.data, "runtime: block 32 1 1\nsmem 0\n|");
        CHECK_CONTAINS(list.data, "cond: block 32 1 1\nsmem 0\n|");
    }
    free(rt);
    buf_release(&list);
    buf_release(&out);
    free(root);
}

static void test_extract__instantiates_a_functor_template_from_the_trees_call_sites(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "f.cu",
                "struct AddOne { __device__ float operator()(float v) const { return v + 1; } };\n"
                "template <class Op> __global__ void apply(float *x, int n, Op op)\n"
                "{ int i = threadIdx.x; if (i < n) x[i] = op(x[i]); }\n"
                "template <int BLOCK, int ITEMS> __global__ void tiled(float *x, int n)\n"
                "{ __shared__ float s[BLOCK * ITEMS / 2]; s[threadIdx.x % 2] = x[0];\n"
                "  x[threadIdx.x] = s[0] / (ITEMS / 2); }\n"
                "template <class T> __global__ void plain(T *x) { x[threadIdx.x] = 0; }\n"
                "template <class T, int N> struct Traits { typedef T value_type; enum { items = N }; };\n"
                "template <class TR> __global__ void scan(typename TR::value_type *x)\n"
                "{ __shared__ typename TR::value_type s[TR::items]; s[0] = x[0]; x[1] = s[0]; }\n"
                "namespace { struct Hidden { __device__ float operator()(float a) const { return a; } }; }\n"
                "template <class Op> __global__ void hid(float *x, Op op) { x[0] = op(x[0]); }\n"
                "void host(float *x, int n)\n"
                "{ apply<<<(n + 255) / 256, 256>>>(x, n, AddOne());\n"
                "  tiled<256, 4><<<1, 256>>>(x, n); plain<<<1, 32>>>((double *)x);\n"
                "  scan<Traits<float, 8> ><<<1, 32>>>(x); hid<<<1, 1>>>(x, Hidden()); }\n", NULL, 0);
    kernel_tparams(&list, &out);
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (fs_exists(rt)) { /* launches parse only with the toolkit's headers */
        CHECK_CONTAINS(list.data, "apply: type Op AddOne\n|struct AddOne"); /* the functor joins */
        CHECK_CONTAINS(list.data, "tiled: block BLOCK BX\nvalue ITEMS 4\n|");
        CHECK_CONTAINS(list.data, "scan: type TR Traits<float,8>\n|template <class T, int N> struct Traits");
        CHECK_CONTAINS(list.data, "hid: type Op Hidden\n|namespace {\nstruct Hidden");
    }
    CHECK_CONTAINS(list.data, "plain: type T float\n|"); /* an arithmetic type keeps float */
    free(rt);
    buf_release(&list);
    buf_release(&out);
    free(root);
}

static void test_extract__an_integer_type_from_the_trees_launches_replaces_float(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "k.cu",
                "template <class K> __global__ void bits(K *k) { k[0] = k[1] >> 2; }\n"
                "template <class K, int D> __global__ void merge(K *k) { k[0] = k[1] % D; }\n"
                "template <class T> __global__ void scale(T *x) { x[0] *= 2; }\n"
                "template <class K> void run(K *k) { merge<K, 2><<<1, 32>>>(k); }\n"
                "struct half16 { unsigned short bits; };\n"
                "template <class T> __global__ void norm(T *x) { x[0] = x[1]; }\n"
                "template <class F> void prec(F *x) { norm<<<1, 32>>>(x); }\n"
                "void host(float *x, unsigned *u, int *i)\n"
                "{ bits<<<1, 32>>>(u); run(i); scale<<<1, 32>>>(x); scale<<<1, 32>>>(u);\n"
                "  prec((half16 *)x); }\n",
                NULL, 0);
    kernel_tparams(&list, &out);
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (fs_exists(rt)) { /* launches parse only with the toolkit's headers */
        CHECK_CONTAINS(list.data, "bits: type K unsigned\n|"); /* "unsigned int": one word */
        CHECK_CONTAINS(list.data, "merge: type K int\n"); /* through a host template */
        CHECK_CONTAINS(list.data, "scale: type T float\n|"); /* a float launch wins */
        /* a class through a pointer argument of a host template: the buffer's precision */
        CHECK_CONTAINS(list.data, "norm: type T float\n|");
    }
    free(rt);
    buf_release(&list);
    buf_release(&out);
    free(root);
}

static void test_extract__instantiates_a_type_parameter_from_the_members_the_kernel_uses(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "u.cu",
                "template <class S> struct Reader { const S *p;\n"
                "  template <int N> __device__ S get(int i) const { return p[i * N]; } };\n"
                "struct Other { __device__ float peek(int i) const { return i; } };\n"
                "struct Writer { float *q; __device__ void put(int i, float v) const { q[i] = v; } };\n"
                "struct Twice { __device__ float operator()(float v) const { return 2 * v; } };\n"
                "struct Flags { static __device__ bool on() { return true; } };\n"
                "template <class L, class W> __global__ void rowcopy(L ld, W st)\n"
                "{ st.put(threadIdx.x, ld.template get<1>(threadIdx.x)); }\n"
                "template <class Op> __global__ void mapk(float *x) { Op op; x[0] = op(x[0]); }\n"
                "template <class T2> __global__ void halve(T2 *__restrict__ w)\n"
                "{ w[threadIdx.x].x /= 2; w[threadIdx.x].y /= 2; }\n"
                "template <class TR> __global__ void flag(float *x) { if (TR::on()) x[0] = 1; }\n"
                "template <class T> __global__ void keep(T *x) { T v = x[0]; x[1] = v; }\n"
                "template <class T> __global__ void unknown(T t, float *x) { x[0] = t.nowhere; }\n"
                "namespace lim { const int SHM = 48 * 1024; }\n"
                "template <int W> __global__ void __launch_bounds__(W, lim::SHM / (W * 64))\n"
                "bounded(float *x) { x[0] = 0; }\n",
                NULL, 0);
    kernel_tparams(&list, &out);
    /* a name only __launch_bounds__ uses joins the closure */
    CHECK_CONTAINS(list.data, "namespace lim {\nconst int SHM = 48 * 1024;");
    /* the class declaring every member used, with its closure; float for its own unused S */
    CHECK_CONTAINS(list.data, "rowcopy: type L Reader<float>\ntype W Writer\n|");
    CHECK_CONTAINS(list.data, "struct Writer");
    CHECK_CONTAINS(list.data, "mapk: type Op Twice\n|struct Twice");
    CHECK_CONTAINS(list.data, "halve: type T2 float2\n|"); /* x and y only: a vector type */
    CHECK_CONTAINS(list.data, "flag: type TR Flags\n|struct Flags");
    CHECK_CONTAINS(list.data, "keep: type T float\n|"); /* used as a value: stays float */
    CHECK_CONTAINS(list.data, "unknown: type T float\n|"); /* no class declares it: as before */
    buf_release(&list);
    buf_release(&out);
    free(root);
}

/* Field `field` of kernel `name` in the records, as "name: value" lines in `list` (the records
 * are parsed in place, once). */
static void kernel_fields(struct buf *list, struct buf *out, const char *field)
{
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out->data, out->len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0)
            buf_addf(list, "%s: %s|\n", record_str(&r, "name"), record_str(&r, field));
}

/* A reference parameter's record is filled as an array element (deref 1); a pointer to the
 * record's own type is a link ('n'), an integer pointer named like a lock word starts zeroed
 * ("lock"), one named like a block does not. */
static void test_extract__references_links_and_lock_words_are_members(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT;
    extract_src(&out, root, "r.cu",
                "struct Cnt { int hits; float *samples; };\n"
                "__global__ void byref(Cnt &c) { c.samples[0] += c.hits; }\n"
                "struct Node { int key; Node *next; };\n"
                "__global__ void walk(Node *l, int *o) { o[0] = l->next->key; }\n"
                "struct Lk { int *mutex; int *blocks; unsigned *row_lock; };\n"
                "__global__ void locked(Lk k) { atomicCAS(k.mutex, 0, 1); }\n",
                NULL, 0);
    struct buf members = BUF_INIT;
    kernel_fields(&members, &out, "members");
    CHECK_CONTAINS(members.data, "byref: 0 1 0 s 4 x 0 0 unknown hits\n"
                                 "0 1 8 p 8 f 4 0 buffer samples\n|");
    CHECK_CONTAINS(members.data, "walk: 0 1 0 s 4 x 0 0 unknown key\n0 1 8 n 8 x 16 0 next next\n|");
    CHECK_CONTAINS(members.data, "locked: 0 0 0 p 8 s 4 0 lock mutex\n0 0 8 p 8 s 4 0 buffer "
                                 "blocks\n0 0 16 p 8 u 4 0 lock row_lock\n|");
    buf_release(&members);
    buf_release(&out);
    free(root);
}

static void test_extract__lists_the_pointer_members_of_struct_arguments(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT;
    extract_src(&out, root, "s.cu",
                "typedef struct { int width; int height; float *elements; } Mat;\n"
                "__global__ void scale(Mat m) { m.elements[threadIdx.x % m.width] *= 2; }\n"
                "struct Base { int tag; };\n"
                "class Inner : public Base { public: int n; private: double *vals; };\n"
                "struct Outer { Inner in; const unsigned char *flags; int bits : 3; float w[4]; };\n"
                "__global__ void nest(Outer o) { }\n"
                "struct Rec { float2 p; int *idx; };\n"
                "__global__ void recs(int k, Rec *r) { r[k].idx[0] = 1; }\n"
                "struct Plain { int n; float a; };\n"
                "__global__ void plain(Plain p, float *x) { x[0] = p.a; }\n"
                "struct V { __device__ virtual int f() const { return 1; } int *q; };\n"
                "__global__ void virt(V v, V **vs, int *o) { o[0] = v.f() + vs[0]->f(); }\n"
                "template <class T> class Box { public: __device__ virtual T get() = 0; };\n"
                "__global__ void boxed(Box<int> **b, int *o) { o[0] = b[0]->get(); }\n",
                NULL, 0);
    struct buf copy = BUF_INIT, members = BUF_INIT, notes = BUF_INIT;
    buf_add(&copy, out.data, out.len);
    kernel_fields(&members, &out, "members");
    kernel_fields(&notes, &copy, "arg_note");
    /* offsets from the record layout; roles from the members' names */
    CHECK_CONTAINS(members.data, "scale: 0 0 0 s 4 x 0 0 width width\n0 0 4 s 4 x 0 0 height "
                                 "height\n0 0 8 p 8 f 4 0 buffer elements\n|");
    /* a base's field, a private member one record down, a const pointee; not the bit-field
     * nor the array */
    CHECK_CONTAINS(members.data, "nest: 0 0 0 s 4 x 0 0 unknown in.tag\n0 0 4 s 4 x 0 0 size in.n\n"
                                 "0 0 8 p 8 f 8 0 buffer in.vals\n0 0 16 p 8 u 1 1 buffer flags\n|");
    /* each element of an array through a pointer */
    CHECK_CONTAINS(members.data, "recs: 1 1 8 p 8 s 4 0 buffer idx\n|");
    /* no pointer member: the old fill stays; a class with virtual functions is only named */
    CHECK_CONTAINS(members.data, "plain: |");
    CHECK_CONTAINS(members.data, "virt: |");
    CHECK_CONTAINS(notes.data, "virt: parameter 'v': class V has virtual functions; the harness "
                               "cannot make such an object");
    CHECK_CONTAINS(notes.data, "; parameter 'vs': class V has virtual functions");
    CHECK_CONTAINS(notes.data, "scale: |");
    CHECK_CONTAINS(notes.data, "boxed: parameter 'b': class Box<int> has virtual functions");
    buf_release(&copy);
    buf_release(&members);
    buf_release(&notes);
    buf_release(&out);
    free(root);
}

static void test_extract__instantiates_from_launches_inside_host_templates(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "h.cu",
                "struct Reader { __device__ float operator()(const float *p, int i) const { return p[i]; } };\n"
                "struct Pay { __device__ float operator()(float s) const { return s > 1 ? s - 1 : 0; } };\n"
                "template <class T, class R> __global__ void spmv(const T *v, T *out, int n)\n"
                "{ R r; int i = threadIdx.x; if (i < n) out[i] = r(v, i); }\n"
                "template <class T, class R> void inner(const T *v, T *out, int n)\n"
                "{ spmv<T, R><<<1, 32>>>(v, out, n); }\n"
                "template <class T, class R> void outer(const T *v, T *out, int n) { inner<T, R>(v, out, n); }\n"
                "template <int BLOCK, class P> __global__ void paths(float *x, P pay)\n"
                "{ x[threadIdx.x] = pay(x[threadIdx.x]); }\n"
                "template <class P> void run(float *x, const P &pay) { paths<128><<<1, 128>>>(x, pay); }\n"
                "template <class T, class V> __global__ void scan(T *x) { V v = ((V *)x)[threadIdx.x]; x[0] = v.x; }\n"
                "template <class T, class V> void test(T *x) { scan<T, V><<<1, 32>>>(x); }\n"
                "void host(float *v, float *o)\n"
                "{ outer<float, Reader>(v, o, 32); run(o, Pay()); test<float, float4>(o); }\n", NULL, 0);
    kernel_tparams(&list, &out);
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (fs_exists(rt)) { /* launches parse only with the toolkit's headers */
        /* explicit arguments through two host templates; the functor joins the closure */
        CHECK_CONTAINS(list.data, "spmv: type T float\ntype R Reader\n|struct Reader");
        /* deduced from a parameter of the host template, its type from the host's call */
        CHECK_CONTAINS(list.data, "paths: block BLOCK BX\ntype P Pay\n|struct Pay");
        CHECK_CONTAINS(list.data, "scan: type T float\ntype V float4\n|");
    }
    free(rt);
    buf_release(&list);
    buf_release(&out);
    free(root);
}

static void test_extract__instantiates_an_enumeration_template_parameter(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, list = BUF_INIT;
    extract_src(&out, root, "e.cu",
                "namespace ns { enum class Algo { kSum = 3, kMax = 7 }; }\n"
                "enum Mode { ModeA = 2, ModeB };\n"
                "template <class T, ns::Algo A, Mode M, int N>\n"
                "__global__ void reduce(T *x, int n)\n"
                "{ if (A == ns::Algo::kMax && M == ModeB) x[0] = N; else x[threadIdx.x] = n; }\n"
                "template <Mode M> __global__ void unlaunched(float *x) { x[0] = M; }\n"
                "void host(float *x)\n"
                "{ reduce<float, ns::Algo::kMax, ModeB, 5><<<1, 32>>>(x, 32); }\n", NULL, 0);
    kernel_tparams(&list, &out);
    /* no call site: the first enumerator, cast so that the harness can name it */
    CHECK_CONTAINS(list.data, "unlaunched: value M (Mode)2\n|enum Mode");
    const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
    char *rt = fs_join(cuda, "include/cuda.h");
    if (fs_exists(rt)) /* the call site's values, with launches parsed (the toolkit's headers) */
        CHECK_CONTAINS(list.data, "reduce: type T float\nvalue A (ns::Algo)7\nvalue M (Mode)3\n"
                                  "value N 5\n|");
    else
        CHECK_CONTAINS(list.data, "reduce: type T float\nvalue A (ns::Algo)3\nvalue M (Mode)2\n");
    free(rt);
    buf_release(&list);
    buf_release(&out);
    free(root);
}

static void test_extract__a_kernel_in_a_skipped_preprocessor_branch_is_recorded(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, kernels = BUF_INIT, notes = BUF_INIT;
    extract_src(&out, root, "branches.cu",
                "#define FAST\n"
                "#ifdef WITH_EXTRA\n"
                "template <int N> __global__ __launch_bounds__(N, 8)\n"
                "void extra(float *x) { x[threadIdx.x] = N; }\n"
                "__global__ void declared_only(float *x);\n"
                "// __global__ void commented(float *x) { }\n"
                "#endif\n"
                "#ifdef FAST\n"
                "__global__ void variant(float *x) { x[0] = 1; }\n"
                "#else\n"
                "__global__ void\n"
                "variant(float *x, int debug) { x[0] = debug; }\n"
                "__global__ void LAUNCH_BOUNDS(256, 2)\n"
                "slow_only(float *x) { x[0] = 2; }\n"
                "#endif\n", NULL, 0);
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out.data, out.len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0)
            buf_addf(&kernels, "%s ", record_str(&r, "name"));
        else if (strcmp(r.type, "note") == 0 &&
                 strcmp(record_str(&r, "class"), "kernel_inactive_branch") == 0)
            buf_addf(&notes, "%s\n", record_str(&r, "message"));
    CHECK_STR(kernels.data, "variant ");
    /* one note per skipped definition, at its name's line (after a macro such as
     * LAUNCH_BOUNDS(...)); no declaration, no comment, no other variant of a found kernel */
    CHECK_CONTAINS(notes.data, "branches.cu:4: kernel 'extra' is in a preprocessor branch this "
                               "parse does not take");
    CHECK_CONTAINS(notes.data, "\nbranches.cu:14: kernel 'slow_only' is in a preprocessor branch");
    CHECK(strstr(notes.data, "declared_only") == NULL && strstr(notes.data, "commented") == NULL);
    CHECK(strstr(notes.data, "variant") == NULL);
    buf_release(&kernels);
    buf_release(&notes);
    buf_release(&out);
    free(root);
}

static void test_extract__a_kernel_the_parse_drops_is_recorded_as_unparsed(void)
{
    char *root = realpath(test_tmpdir(), NULL);
    struct buf out = BUF_INIT, kernels = BUF_INIT, notes = BUF_INIT;
    extract_src(&out, root, "dropped.cu",
                "namespace at { namespace native {\n"
                "template <typename T>\n"
                "__global__ void dropped(nosuch::Info<T> dst, int n) { }\n"
                "} }\n"
                "__global__ void kept(float *x) { x[0] = 1; }\n"
                "#define MAKE(n) __global__ void n(float *x) \\\n { x[0] = 2; }\n"
                "MAKE(made)\n"
                "const char *src = \"__global__ void in_string(float *x) { }\";\n", NULL, 0);
    size_t pos = 0;
    struct record r;
    while (record_next(&r, out.data, out.len, &pos) == 1)
        if (strcmp(r.type, "kernel") == 0)
            buf_addf(&kernels, "%s ", record_str(&r, "name"));
        else if (strcmp(r.type, "note") == 0 && strcmp(record_str(&r, "class"), "kernel_unparsed") == 0)
            buf_addf(&notes, "%s\n", record_str(&r, "message"));
    CHECK_STR(kernels.data, "kept made ");
    /* the dropped definition only: not a kernel of the AST, a macro's body or a string */
    CHECK_CONTAINS(notes.data, "dropped.cu:3: kernel 'dropped' is defined in the text but the parse "
                               "has no valid declaration of it (first error: dropped.cu:3: error:");
    CHECK(strchr(notes.data, '\n') == notes.data + notes.len - 1);
    buf_release(&kernels);
    buf_release(&notes);
    buf_release(&out);
    free(root);
}

static void test_sysinc__finds_openmp_and_lscats_own_helper_headers(void)
{
    struct sysinc si;
    sysinc_init(&si);
    int omp = 0, helper = 0;
    for (size_t i = 0; i < si.n; i++) {
        char *a = fs_join(si.dirs[i], "omp.h"), *b = fs_join(si.dirs[i], "helper_timer.h");
        omp |= fs_exists(a);
        helper |= fs_exists(b);
        free(a);
        free(b);
    }
    CHECK(omp); /* GCC's omp.h: gcc -print-file-name=include */
    CHECK(helper);
    sysinc_release(&si);
}

static void test_srctext__rewrites_invalid_utf8_keeping_literal_values(void)
{
    const char src[] = "// caf\xe9\nconst char *s = \"na\xefve\"; char c = '\xe9'; /* \xc3\xa9 ok */";
    struct buf out = BUF_INIT;
    CHECK_INT(srctext_fix_utf8(&out, src, sizeof src - 1), ==, 3);
    CHECK_STR(out.data, "// caf?\nconst char *s = \"na\\357ve\"; char c = '\\351'; /* \xc3\xa9 ok */");
    buf_release(&out);
}

static void test_srctext__refuses_includes_leaving_the_tree(void)
{
    char *base = realpath(test_tmpdir(), NULL);
    char *root = fs_join(base, "repo");
    char *outside = fs_join(base, "outside.h"), *file = fs_join(root, "src/k.cu");
    char *inner = fs_join(root, "src/inner.h");
    test_write_file(outside, "#define X 1\n", 12);
    test_write_file(inner, "#include \"../../outside.h\"\n", 26);
    const char *k = "#include \"inner.h\"\n#include </etc/hostname>\n#include <cstdio>\n";
    test_write_file(file, k, strlen(k));
    struct srctext_refusals rf = { 0 };
    srctext_scan_includes(&rf, root, "/usr/local/cuda", file);
    CHECK_INT(rf.n, ==, 2);
    CHECK_STR(rf.paths[0], outside);
    CHECK_STR(rf.paths[1], "/etc/hostname");
    srctext_refusals_release(&rf);
    free(base), free(root), free(outside), free(file), free(inner);
}

int main(void)
{
    TEST_RUN(test_params__roles_follow_common_names);
    TEST_RUN(test_params__block_names_are_recognised);
    TEST_RUN(test_normalise__ignores_comments_and_whitespace);
    TEST_RUN(test_record__round_trips_binary_values);
    TEST_RUN(test_record__reports_a_truncated_tail);
    TEST_RUN(test_harness__instantiates_block_parameters_per_block_value);
    TEST_RUN(test_harness__the_cores_table_types_are_the_generated_ones);
    TEST_RUN(test_harness__a_2d_kernel_gets_2d_grids_and_a_16x16_reference);
    TEST_RUN(test_harness__a_tiled_kernel_gets_its_sources_block_and_tiles);
    TEST_RUN(test_extract__finds_kernel_and_its_closure);
    TEST_RUN(test_srctext__rewrites_invalid_utf8_keeping_literal_values);
    TEST_RUN(test_srctext__widens_an_extent_to_whole_conditional_blocks);
    TEST_RUN(test_extract__a_trees_own_cuda_h_does_not_hide_the_toolkits);
    TEST_RUN(test_extract__a_missing_header_costs_only_the_kernels_that_use_what_it_declares);
    TEST_RUN(test_extract__lists_the_pointer_members_of_struct_arguments);
    TEST_RUN(test_extract__references_links_and_lock_words_are_members);
    TEST_RUN(test_extract__instantiates_from_launches_inside_host_templates);
    TEST_RUN(test_extract__instantiates_an_enumeration_template_parameter);
    TEST_RUN(test_extract__a_kernel_in_a_skipped_preprocessor_branch_is_recorded);
    TEST_RUN(test_extract__a_kernel_the_parse_drops_is_recorded_as_unparsed);
    TEST_RUN(test_extract__instantiates_a_functor_template_from_the_trees_call_sites);
    TEST_RUN(test_extract__instantiates_a_type_parameter_from_the_members_the_kernel_uses);
    TEST_RUN(test_extract__an_integer_type_from_the_trees_launches_replaces_float);
    TEST_RUN(test_extract__records_the_sources_own_launch_and_launch_bounds);
    TEST_RUN(test_extract__records_the_sources_grid_as_an_expression_over_kernel_parameters);
    TEST_RUN(test_sysinc__finds_openmp_and_lscats_own_helper_headers);
    TEST_RUN(test_extract__keeps_a_conditional_block_around_a_declaration_whole);
    TEST_RUN(test_srctext__refuses_includes_leaving_the_tree);
    TEST_RUN(test_harness__texture_object_parameters_get_their_fetch_and_element);
    return test_done();
}
