/* ptxas -v parsing, on output captured from nvcc 13.0 for two architectures. */
#include "common/error.h"
#include "execute/ptxas.h"
#include "tests/support/test.h"

#include <stdlib.h>

static const char log_two_archs[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z1kPfi' for 'sm_80'\n"
    "ptxas info    : Function properties for _Z1kPfi\n"
    "    256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Used 21 registers, used 1 barriers, 256 bytes cumulative stack size, "
    "1024 bytes smem, 364 bytes cmem[0]\n"
    "ptxas info    : Compile time = 13.964 ms\n"
    "ptxas info    : Function properties for _Z6helperf\n"
    "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Compiling entry function '_Z1kPfi' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z1kPfi\n"
    "    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 1 barriers, 256 bytes cumulative stack size, "
    "1024 bytes smem\n"
    "ptxas info    : Compiling entry function '_Z2k2v' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z2k2v\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 8 registers, 4096 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]\n";

static void test_ptxas__parses_every_entry_and_architecture(void)
{
    struct ptxas_info info = PTXAS_INFO_INIT;
    ptxas_parse(&info, log_two_archs);
    CHECK_INT(info.count, ==, 3);
    CHECK_STR(info.entries[0].name, "_Z1kPfi");
    CHECK_STR(info.entries[0].arch, "sm_80");
    CHECK_INT(info.entries[0].registers, ==, 21);
    CHECK_INT(info.entries[0].stack_bytes, ==, 256);
    CHECK_INT(info.entries[0].spill_store_bytes, ==, 8);
    CHECK_INT(info.entries[0].spill_load_bytes, ==, 4);
    CHECK_INT(info.entries[0].shared_bytes, ==, 1024);
    CHECK_INT(info.entries[0].const_bytes, ==, 364);
    CHECK_INT(info.entries[0].barriers, ==, 1);
    CHECK_INT(info.entries[2].const_bytes, ==, 388);
    ptxas_info_release(&info);
}

static void test_ptxas__summary_takes_the_maximum_for_the_newest_arch(void)
{
    struct ptxas_info info = PTXAS_INFO_INIT;
    struct ptxas_entry s;
    ptxas_parse(&info, log_two_archs);
    CHECK_OK(ptxas_summary(&s, &info, "sm_90"));
    CHECK_INT(s.registers, ==, 40);
    CHECK_INT(s.shared_bytes, ==, 4096);
    CHECK_INT(s.spill_store_bytes, ==, 0);
    CHECK_INT(ptxas_summary(&s, &info, "sm_70"), <, 0);
    struct buf j = BUF_INIT;
    ptxas_to_json(&j, &info);
    CHECK_CONTAINS(j.data, "{\"entry\":\"_Z2k2v\",\"arch\":\"sm_90\",\"registers\":8");
    buf_release(&j);
    ptxas_info_release(&info);
}

static void test_ptxas__extract_keeps_only_ptxas_lines(void)
{
    struct buf b = BUF_INIT;
    ptxas_extract(&b, "$ nvcc ...\nptxas info    : Used 8 registers\n    0 bytes stack frame, 0 "
                      "bytes spill stores, 0 bytes spill loads\nother\n");
    CHECK_CONTAINS(b.data, "Used 8 registers");
    CHECK_CONTAINS(b.data, "stack frame");
    CHECK(!strstr(b.data, "other"));
    buf_release(&b);
}

/* Names ptxas printed for kernels of llm.c and the CUDA samples compiled in a batch (namespace
 * lk<i>) and alone, nvcc 13.0 (session 30): the batch's must come out as the alone's. */
static void test_ptxas__a_batched_name_comes_out_as_built_alone(void)
{
    static const char *const pairs[][3] = {
        { "lk0", "_ZN3lk024fused_classifier_kernel3EPfS0_S0_PKfPKiiiii",
          "_Z24fused_classifier_kernel3PfS_S_PKfPKiiiii" },
        { "lk4", "_ZN3lk426layernorm_backward_kernel2IffffEEvPT_PT0_S4_PKT1_PKT2_PKS3_SA_SA_"
                 "iiiPfSD_",
          "_Z26layernorm_backward_kernel2IffffEvPT_PT0_S3_PKT1_PKT2_PKS2_S9_S9_iiiPfSC_" },
        { "lk0", "_ZN3lk027layernorm_backward_kernel10EP13__nv_bfloat16S1_S1_PfPKS0_S4_S4_S4_"
                 "S4_iii",
          "_Z27layernorm_backward_kernel10P13__nv_bfloat16S0_S0_PfPKS_S3_S3_S3_S3_iii" },
        { "lk0", "_ZN3lk039softmax_autoregressive_backward_kernel7ILi16EEEvPfPKfS3_iiif",
          "_Z39softmax_autoregressive_backward_kernel7ILi16EEvPfPKfS2_iiif" },
        { "lk2", "_ZN3lk223residual_forward_kernelEPfS0_S0_i",
          "_Z23residual_forward_kernelPfS_S_i" },
        /* a kernel in a namespace of its own keeps it: lk0::ns::kern(float*, float*) */
        { "lk0", "_ZN3lk02ns4kernEPfS1_", "_ZN2ns4kernEPfS0_" },
        /* lk12: a two-digit namespace */
        { "lk12", "_ZN4lk125saxpyEifPfS0_", "_Z5saxpyifPfS_" },
    };
    char out[512];
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        CHECK_INT(ptxas_unnest(out, sizeof(out), pairs[i][1], pairs[i][0]), ==, 0);
        CHECK_STR(out, pairs[i][2]);
    }
    /* a type of the namespace (S_), another namespace, no namespace, a local name: not
     * rewritten, so that kernel is built alone */
    CHECK_INT(ptxas_unnest(out, sizeof(out), "_ZN3lk04kernENS_3FooE", "lk0"), ==, -1);
    CHECK_INT(ptxas_unnest(out, sizeof(out), "_ZN3lk14kernEPf", "lk0"), ==, -1);
    CHECK_INT(ptxas_unnest(out, sizeof(out), "_Z5saxpyifPfS_", "lk0"), ==, -1);
    CHECK_INT(ptxas_unnest(out, sizeof(out), "_ZZN3lk04kernEvE1x", "lk0"), ==, -1);
    CHECK_INT(ptxas_unnest(out, sizeof(out), "_ZN3lk04kernEPf", "lk1"), ==, -1);
    /* too small a buffer */
    CHECK_INT(ptxas_unnest(out, 8, "_ZN3lk023residual_forward_kernelEPfS0_S0_i", "lk0"), ==, -1);
}

int main(void)
{
    TEST_RUN(test_ptxas__parses_every_entry_and_architecture);
    TEST_RUN(test_ptxas__summary_takes_the_maximum_for_the_newest_arch);
    TEST_RUN(test_ptxas__extract_keeps_only_ptxas_lines);
    TEST_RUN(test_ptxas__a_batched_name_comes_out_as_built_alone);
    return test_done();
}
