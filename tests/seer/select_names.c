/* seer_select.h (what a user includes, without lscat's headers) numbers the kernels as lscat's
 * seer/kernels.h does, so the class map train writes means the same kernels in both. */
#include "tests/support/test.h"

#include "seer/kernels.h"
#include "seer/seer_select.h"

static void test_seer_select__numbers_kernels_as_lscat_does(void)
{
    int user[] = { SEER_KERNEL_CSR_THREAD, SEER_KERNEL_CSR_WARP, SEER_KERNEL_CSR_BLOCK,
                   SEER_KERNEL_CSR_MERGE, SEER_KERNEL_ELL_THREAD, SEER_KERNEL_COO_WARP,
                   SEER_KERNEL_CSR_ADAPTIVE, SEER_KERNEL_CUSPARSE_DEFAULT,
                   SEER_KERNEL_CUSPARSE_CSR_ALG1, SEER_KERNEL_CUSPARSE_CSR_ALG2,
                   SEER_KERNEL_CUSPARSE_COO_ALG1 };
    int ours[] = { SEER_K_CSR_THREAD, SEER_K_CSR_WARP, SEER_K_CSR_BLOCK, SEER_K_CSR_MERGE,
                   SEER_K_ELL_THREAD, SEER_K_COO_WARP, SEER_K_CSR_ADAPTIVE,
                   SEER_K_CUSPARSE_DEFAULT, SEER_K_CUSPARSE_CSR_ALG1, SEER_K_CUSPARSE_CSR_ALG2,
                   SEER_K_CUSPARSE_COO_ALG1 };
    CHECK_INT(SEER_KERNEL_COUNT, ==, SEER_K_COUNT);
    CHECK_INT(sizeof(user) / sizeof(user[0]), ==, SEER_K_COUNT);
    for (int k = 0; k < SEER_K_COUNT; k++)
        CHECK_INT(user[k], ==, ours[k]);
    CHECK_INT(seer_kernel_by_name("csr_merge"), ==, SEER_KERNEL_CSR_MERGE);
    CHECK_INT(seer_kernel_by_name("csr_merg"), ==, -1);
    CHECK_STR(seer_kernel_name(SEER_KERNEL_CUSPARSE_COO_ALG1), "cusparse_coo_alg1");
}

int main(void)
{
    TEST_RUN(test_seer_select__numbers_kernels_as_lscat_does);
    return test_done();
}
