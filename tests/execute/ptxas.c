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

int main(void)
{
    TEST_RUN(test_ptxas__parses_every_entry_and_architecture);
    TEST_RUN(test_ptxas__summary_takes_the_maximum_for_the_newest_arch);
    TEST_RUN(test_ptxas__extract_keeps_only_ptxas_lines);
    return test_done();
}
