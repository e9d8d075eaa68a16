/* isolate/resolve.c, the resolve service execute's repair loop talks to, with the real
 * libclang on the fixture repository tests/execute/fixtures/resolver-repo: definitions come
 * with their closure and without what the kernel has; headers resolve as isolate's -I rule
 * says; bad requests get an error record and the service goes on; the real program serves. */
#include "common/buf.h"
#include "common/error.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "common/record.h"
#include "isolate/resolve.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *repo(void)
{
    const char *root = getenv("LSCAT_ROOT");
    return xasprintf("%s/tests/execute/fixtures/resolver-repo", root ? root : ".");
}

static const char *cuda_home(void)
{
    const char *c = getenv("CUDA_HOME");
    return c && *c ? c : "/usr/local/cuda";
}

/* The first record of `b`: its type into type, the field `key` (or "") returned, caller frees. */
static char *field(const struct buf *b, char type[32], const char *key)
{
    struct buf copy = BUF_INIT;
    buf_add(&copy, b->data, b->len);
    struct record r;
    size_t pos = 0;
    char *v = NULL;
    type[0] = '\0';
    if (record_next(&r, copy.data, copy.len, &pos) == 1) {
        snprintf(type, 32, "%s", r.type);
        v = xstrdup(record_str(&r, key));
    }
    buf_release(&copy);
    return v ? v : xstrdup("");
}

static void test_resolve__a_struct_comes_with_the_macro_it_uses(void)
{
    struct resolve_service *s = resolve_service_new(cuda_home());
    char *root = repo(), type[32];
    struct buf out = BUF_INIT;
    CHECK_OK(resolve_decl(&out, s, root, "Matrix", NULL));
    char *text = field(&out, type, "text"), *origin = field(&out, type, "origin");
    CHECK_STR(type, "decl");
    CHECK_STR(origin, "include/matrix.cuh:6");
    const char *mac = strstr(text, "#define MAT_TILE 16"), *st = strstr(text, "struct Matrix {");
    CHECK(mac && st && mac < st);
    CHECK(!strstr(text, "clampf")); /* only what Matrix needs */
    free(text);
    free(origin);
    buf_release(&out);
    free(root);
    resolve_service_free(s);
}

static void test_resolve__a_device_function_comes_with_its_callees_minus_what_the_kernel_has(void)
{
    struct resolve_service *s = resolve_service_new(cuda_home());
    char *root = repo(), type[32];
    struct buf out = BUF_INIT;
    CHECK_OK(resolve_decl(&out, s, root, "scaled", NULL));
    char *text = field(&out, type, "text");
    const char *m = strstr(text, "#define MAT_SCALE"), *c = strstr(text, "float clampf("),
               *f = strstr(text, "float scaled(");
    CHECK(m && c && f && m < c && c < f);
    free(text);
    buf_reset(&out);
    const char *have = "__device__ inline float clampf(float v)\n{\n    return v < 0.0f ? 0.0f : v;\n}\n"
                       "#define MAT_SCALE(x) ((x) * 0.5f)\n";
    CHECK_OK(resolve_decl(&out, s, root, "scaled", have));
    text = field(&out, type, "text");
    char *pieces = field(&out, type, "pieces");
    CHECK(!strstr(text, "clampf(float") && !strstr(text, "#define MAT_SCALE"));
    CHECK_CONTAINS(text, "float scaled(");
    CHECK_STR(pieces, "1");
    free(text);
    free(pieces);
    buf_reset(&out); /* everything already there: not found, and why */
    char *all = xasprintf("%s\n__device__ inline float scaled(float v)\n{\n    return MAT_SCALE(clampf(v));\n}", have);
    CHECK_INT(resolve_decl(&out, s, root, "scaled", all), ==, LSCAT_ENOTFOUND);
    char *msg = field(&out, type, "message");
    CHECK_STR(type, "notfound");
    CHECK_CONTAINS(msg, "already in the kernel");
    free(msg);
    free(all);
    buf_release(&out);
    free(root);
    resolve_service_free(s);
}

static void test_resolve__an_enumerator_brings_its_enum_and_unknown_names_are_not_found(void)
{
    struct resolve_service *s = resolve_service_new(cuda_home());
    char *root = repo(), type[32];
    struct buf out = BUF_INIT;
    CHECK_OK(resolve_decl(&out, s, root, "MODE_SCALED", NULL));
    char *text = field(&out, type, "text");
    CHECK_CONTAINS(text, "enum Mode { MODE_PLAIN = 1, MODE_SCALED = 2 };");
    free(text);
    buf_reset(&out);
    CHECK_INT(resolve_decl(&out, s, root, "threadIdx_nowhere", NULL), ==, LSCAT_ENOTFOUND);
    char *msg = field(&out, type, "message");
    CHECK_STR(type, "notfound");
    CHECK_CONTAINS(msg, "no definition of 'threadIdx_nowhere'");
    free(msg);
    buf_reset(&out); /* used (in use.cu) but defined nowhere in the tree: not found either */
    CHECK_INT(resolve_decl(&out, s, root, "blockIdx", NULL), ==, LSCAT_ENOTFOUND);
    buf_release(&out);
    free(root);
    resolve_service_free(s);
}

static void test_resolve__a_function_template_comes_with_its_explicit_specialisations(void)
{
    struct resolve_service *s = resolve_service_new(cuda_home());
    char *root = repo(), type[32];
    struct buf out = BUF_INIT;
    CHECK_OK(resolve_decl(&out, s, root, "convert", NULL));
    char *text = field(&out, type, "text");
    const char *primary = strstr(text, "__device__ Td convert(Ts v);"),
               *spec = strstr(text, "convert<float, int>(int v)");
    CHECK(primary && spec && primary < spec);
    free(text);
    buf_release(&out);
    free(root);
    resolve_service_free(s);
}

static void test_resolve__a_header_name_resolves_through_the_tree_folders_only(void)
{
    struct resolve_service *s = resolve_service_new(cuda_home());
    char *root = repo(), type[32];
    struct buf out = BUF_INIT;
    CHECK_OK(resolve_header(&out, s, root, "matrix.cuh"));
    char *path = field(&out, type, "path");
    CHECK_STR(type, "header");
    CHECK_CONTAINS(path, "/resolver-repo/include/matrix.cuh");
    free(path);
    buf_reset(&out);
    CHECK_INT(resolve_header(&out, s, root, "../../../../../../../etc/passwd"), ==, LSCAT_ENOTFOUND);
    buf_reset(&out);
    CHECK_INT(resolve_header(&out, s, root, "/etc/passwd"), ==, LSCAT_EINVALID);
    char *msg = field(&out, type, "message");
    CHECK_STR(type, "error");
    free(msg);
    buf_release(&out);
    free(root);
    resolve_service_free(s);
}

/* Every bad request gets an error record; the stream goes on (the last ping is answered). */
static void test_resolve__bad_requests_get_error_records_and_the_service_goes_on(void)
{
    char *root = repo();
    char *req = xasprintf("bogus\n\ndecl\ndecl %s\ndecl /nonexistent-lscat x\ndecl %s 1abc\n"
                          "decl %s x -5\ndecl %s x 99999999999\ndecl %s x 1 2 3\n"
                          "header %s /etc/passwd\nheader %s\ndecl %s scaled 3\nabcping\n",
                          root, root, root, root, root, root, root, root);
    FILE *in = fmemopen(req, strlen(req), "r");
    char *outp = NULL;
    size_t outn = 0;
    FILE *out = open_memstream(&outp, &outn);
    CHECK_OK(resolve_serve(in, out, cuda_home()));
    fclose(in);
    fclose(out);
    struct record r;
    size_t pos = 0;
    int errors = 0, n = 0, rc;
    const char *types[16];
    while ((rc = record_next(&r, outp, outn, &pos)) == 1 && n < 16) {
        static char keep[16][32];
        snprintf(keep[n], 32, "%s", r.type);
        types[n] = keep[n];
        n++;
        errors += strcmp(r.type, "error") == 0;
    }
    CHECK_INT(rc, ==, 0);
    CHECK_INT(n, ==, 13); /* one reply per request line; "abc" were the decl's 3 bytes */
    CHECK_INT(errors, ==, 11);
    CHECK_STR(types[11], "decl");
    CHECK_STR(types[12], "pong");
    free(outp);
    free(req);
    free(root);
}

static void test_resolve__a_request_cut_short_ends_the_service_with_an_error(void)
{
    char *root = repo();
    char *req = xasprintf("decl %s scaled 100\nshort", root);
    FILE *in = fmemopen(req, strlen(req), "r");
    char *outp = NULL;
    size_t outn = 0;
    FILE *out = open_memstream(&outp, &outn);
    CHECK_INT(resolve_serve(in, out, cuda_home()), <, 0);
    fclose(in);
    fclose(out);
    CHECK_INT(outn, ==, 0);
    free(outp);
    free(req);
    free(root);
}

/* The program: `resolve --serve` answers on stdout and exits 0 at EOF; without --serve: 2. */
static void test_resolve__the_program_serves_and_checks_its_command_line(void)
{
    char *exe = xasprintf("%s/lscat-isolate", test_bin_dir());
    char *root = repo();
    char *req = xasprintf("ping\ndecl %s Matrix\nnonsense\n", root);
    const char *argv[] = { exe, "resolve", "--serve", NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.stdin_data = req;
    o.stdin_len = strlen(req);
    o.timeout_s = 60;
    CHECK_OK(proc_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 0);
    CHECK(strncmp(r.out.data, "R pong 1\n", 9) == 0);
    CHECK_CONTAINS(r.out.data, "struct Matrix {");
    CHECK_CONTAINS(r.out.data, "R error 1\n");
    proc_result_release(&r);
    const char *bad[] = { exe, "resolve", NULL };
    o.argv = bad;
    CHECK_OK(proc_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 2);
    CHECK_CONTAINS(r.err.data, "--serve");
    proc_result_release(&r);
    const char *help[] = { exe, "resolve", "--help", NULL };
    o.argv = help;
    CHECK_OK(proc_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 0);
    CHECK_CONTAINS(r.out.data, "decl ROOT IDENT [KERNEL_BYTES]");
    proc_result_release(&r);
    free(req);
    free(root);
    free(exe);
}

int main(void)
{
    TEST_RUN(test_resolve__a_struct_comes_with_the_macro_it_uses);
    TEST_RUN(test_resolve__a_device_function_comes_with_its_callees_minus_what_the_kernel_has);
    TEST_RUN(test_resolve__an_enumerator_brings_its_enum_and_unknown_names_are_not_found);
    TEST_RUN(test_resolve__a_function_template_comes_with_its_explicit_specialisations);
    TEST_RUN(test_resolve__a_header_name_resolves_through_the_tree_folders_only);
    TEST_RUN(test_resolve__bad_requests_get_error_records_and_the_service_goes_on);
    TEST_RUN(test_resolve__a_request_cut_short_ends_the_service_with_an_error);
    TEST_RUN(test_resolve__the_program_serves_and_checks_its_command_line);
    return test_done();
}
