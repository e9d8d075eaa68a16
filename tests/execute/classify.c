/* Classification of nvcc logs, on logs captured from nvcc 13.0 / gcc / ptxas / ld. */
#include "execute/classify.h"
#include "tests/support/test.h"

#include <stdlib.h>

static enum build_class first_class(const char *log, int timed_out, char **first)
{
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, log);
    enum build_class c = classify_failure(first, &d, log, timed_out, 80);
    diag_list_release(&d);
    return c;
}

static void expect(const char *log, enum build_class want, const char *first_contains)
{
    char *first = NULL;
    enum build_class got = first_class(log, 0, &first);
    if (got != want) {
        free(first);
        test_fail(__FILE__, __LINE__, "class %s, expected %s", classify_name(got),
                  classify_name(want));
    }
    if (first_contains)
        CHECK_CONTAINS(first, first_contains);
    free(first);
}

static void test_classify__gcc_missing_header(void)
{
    expect("kernel.cu:1:10: fatal error: nothere.h: No such file or directory\n"
           "    1 | #include \"nothere.h\"\ncompilation terminated.\n",
           CLASS_MISSING_HEADER, "nothere.h");
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, "kernel.cu:1:10: fatal error: a/b.h: No such file or directory\n");
    CHECK_STR(d.items[0].subject, "a/b.h");
    CHECK_STR(d.items[0].file, "kernel.cu");
    CHECK_INT(d.items[0].line, ==, 1);
    diag_list_release(&d);
}

static void test_classify__undeclared_and_removed_identifiers(void)
{
    expect("kernel.cu(4): error: identifier \"foo_undecl\" is undefined\n", CLASS_UNDECLARED_IDENTIFIER,
           "foo_undecl");
    expect("kernel.cu(1): error: identifier \"__shfl_down\" is undefined\n", CLASS_REMOVED_CUDA_API,
           NULL);
    expect("b.cu(1): error: identifier \"cudaThreadSynchronize\" is undefined\n",
           CLASS_REMOVED_CUDA_API, NULL);
    expect("c.cu(1): error: texture is not a template\n", CLASS_REMOVED_CUDA_API, NULL);
    expect("d.cu(6): error: namespace \"std\" has no member \"vector\"\n",
           CLASS_UNDECLARED_IDENTIFIER, NULL);
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, "d.cu(6): error: namespace \"std\" has no member \"vector\"\n");
    CHECK_STR(d.items[0].subject, "std::vector");
    diag_list_release(&d);
}

static void test_classify__a_warp_vote_without_sync_warning_counts_as_removed_api(void)
{
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, "g.cu(1): warning #1444-D: function \"__any\" was declared deprecated "
                       "(\"__any() is not valid on compute_70 and above, and should be replaced "
                       "with __any_sync().\")\n");
    CHECK_INT(d.count, ==, 1);
    CHECK_INT(d.items[0].cls, ==, CLASS_REMOVED_CUDA_API);
    CHECK_STR(d.items[0].subject, "__any");
    diag_list_release(&d);
}

static void test_classify__an_undefined_name_used_as_a_type_is_unknown_type(void)
{
    expect("u2.cu(1): error: identifier \"real_t\" is undefined\n"
           "  __attribute__((global)) void k(float *x, int n, real_t *y){ x[0] = y[0]; }\n"
           "                                                  ^\n\n",
           CLASS_UNKNOWN_TYPE, NULL);
    expect("u2.cu(1): error: identifier \"real_t\" is undefined\n"
           "  x[0] = real_t + 1;\n"
           "         ^\n",
           CLASS_UNDECLARED_IDENTIFIER, NULL);
}

static void test_classify__front_end_classes(void)
{
    expect("d.cu(2): error: function \"atomicAdd(double *, double)\" has already been defined "
           "(previous definition at line 93 of sm_60_atomic_functions.h)\n",
           CLASS_REDEFINITION, "atomicAdd");
    expect("d.cu(4): error: incomplete type \"S\" is not allowed\n", CLASS_INCOMPLETE_TYPE, NULL);
    expect("d.cu(6): error: no instance of function template \"t\" matches the argument list\n",
           CLASS_TEMPLATE, NULL);
    expect("j.cu(5): error: no instance of overloaded function \"max\" matches the argument list\n",
           CLASS_NO_MATCHING_OVERLOAD, NULL);
    expect("h2.cu(2): error: calling a __host__ function(\"hostf(int)\") from a __global__ "
           "function(\"k\") is not allowed\n", CLASS_HOST_FROM_DEVICE, NULL);
    expect("x.cu(3): error: explicit type is missing (\"int\" assumed)\n", CLASS_UNKNOWN_TYPE, NULL);
    expect("e2.cu:1:2: error: #error this kernel needs a config\n", CLASS_OTHER, "#error");
    expect("f.cu(1): error: expression preceding parentheses of apparent call must have "
           "(pointer-to-) function type\n", CLASS_TEMPLATE_FUNCTOR, NULL);
    expect("z.cu(3): error: zero-sized variable \"s\" is not allowed in device code\n",
           CLASS_TEMPLATE_VALUE, "s");
    expect("s.cu(9): error: expression must have class type but it has type \"float\"\n",
           CLASS_TEMPLATE_TYPE, "float");
    expect("s.cu(9): error: name followed by \"::\" must be a class or namespace name\n",
           CLASS_TEMPLATE_TYPE, "::");
    expect("m.cu(4): error: a value of type \"uint32_t *\" (aka \"unsigned int *\") cannot be used "
           "to initialize an entity of type \"float *\"\n", CLASS_TEMPLATE_TYPE, "uint32_t *");
    expect("m.cu(5): error: argument of type \"float *\" is incompatible with parameter of type "
           "\"unsigned int *\"\n", CLASS_TEMPLATE_TYPE, "float *");
    expect("k.cu(7): error: argument of type \"int *\" is incompatible with parameter of type "
           "\"unsigned int *\"\n", CLASS_NO_MATCHING_OVERLOAD, "int *");
    expect("k.cu(8): error: argument of type \"float\" is incompatible with parameter of type "
           "\"float *\"\n", CLASS_NO_MATCHING_OVERLOAD, "float *");
    expect("ptxas error   : Entry function '_Z5sgemmILi32EEvPf' uses too much shared data "
           "(0x40000 bytes, 0xc000 max)\n", CLASS_RESOURCE_LIMIT, NULL);
    expect("a.cu(133): error: static assertion failed with \"\"\n", CLASS_STATIC_ASSERT, NULL);
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, "h2.cu(2): error: calling a __host__ function(\"hostf(int)\") from a "
                       "__global__ function(\"k\") is not allowed\n");
    CHECK_STR(d.items[0].subject, "hostf");
    diag_list_release(&d);
}

static void test_classify__link_errors_from_ld_nvlink_and_ptxas(void)
{
    expect("/usr/bin/ld: /tmp/x.o: in function `main':\n"
           "tmpxft.cudafe1.cpp:(.text+0x8b): undefined reference to `missing_host()'\n"
           "collect2: error: ld returned 1 exit status\n", CLASS_LINK_ERROR, "missing_host");
    expect("ptxas fatal   : Unresolved extern function '_Z1fi'\n", CLASS_LINK_ERROR, "_Z1fi");
    expect("nvlink error   : Undefined reference to '_Z3foov' in 'a.o'\n", CLASS_LINK_ERROR, NULL);
}

static void test_classify__compiler_crashes_and_timeouts(void)
{
    expect("nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n",
           CLASS_INTERNAL_COMPILER_ERROR, NULL);
    expect("x.cu(10): internal error: assertion failed at: \"types.c\", line 123\n",
           CLASS_INTERNAL_COMPILER_ERROR, NULL);
    expect("Segmentation fault (core dumped)\n", CLASS_INTERNAL_COMPILER_ERROR, NULL);
    char *first = NULL;
    CHECK_INT(first_class("", 1, &first), ==, CLASS_TIMEOUT);
    free(first);
}

static void test_classify__an_undefined_texture_reference_is_removed_api(void)
{
    struct diag_list d = DIAG_LIST_INIT;
    classify_parse(&d, "kernel.cu(5): error: identifier \"texIn\" is undefined\n"
                       "kernel.cu(6): error: identifier \"width\" is undefined\n");
    classify_refine_textures(&d, "__global__ void k(float *o) {\n  o[0] = tex1Dfetch( texIn, 3) "
                                 "+ tex2D<float>(width, 0, 0);\n}\n");
    CHECK_INT(d.items[0].cls, ==, CLASS_REMOVED_CUDA_API);
    CHECK_INT(d.items[1].cls, ==, CLASS_UNDECLARED_IDENTIFIER);
    diag_list_release(&d);
}

static void test_classify__first_error_is_capped(void)
{
    char log[400];
    memset(log, 'x', sizeof(log));
    memcpy(log, "k.cu(1): error: ", 16);
    log[sizeof(log) - 1] = '\0';
    char *first = NULL;
    first_class(log, 0, &first);
    CHECK_INT(strlen(first), ==, 80);
    free(first);
}

static void test_classify__names_round_trip(void)
{
    for (int c = 0; c < CLASS_COUNT; c++)
        CHECK_INT(classify_from_name(classify_name((enum build_class)c)), ==, c);
    CHECK_INT(classify_from_name("nonsense"), ==, -1);
}

int main(void)
{
    TEST_RUN(test_classify__gcc_missing_header);
    TEST_RUN(test_classify__undeclared_and_removed_identifiers);
    TEST_RUN(test_classify__a_warp_vote_without_sync_warning_counts_as_removed_api);
    TEST_RUN(test_classify__an_undefined_name_used_as_a_type_is_unknown_type);
    TEST_RUN(test_classify__front_end_classes);
    TEST_RUN(test_classify__link_errors_from_ld_nvlink_and_ptxas);
    TEST_RUN(test_classify__compiler_crashes_and_timeouts);
    TEST_RUN(test_classify__an_undefined_texture_reference_is_removed_api);
    TEST_RUN(test_classify__first_error_is_capped);
    TEST_RUN(test_classify__names_round_trip);
    return test_done();
}
