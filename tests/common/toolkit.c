/* Tests of common/toolkit.c: nvcc is found where the user said, then under CUDA_HOME, then on
 * PATH; lscat's shared sources by their marker file, $LSCAT_SHARE_DIR first. */
#include "common/fs.h"
#include "common/toolkit.h"
#include "common/xalloc.h"
#include "tests/support/test.h"

#include <stdlib.h>
#include <sys/stat.h>

static char *fake_nvcc(const char *dir)
{
    char *p = fs_join(dir, "nvcc");
    test_write_file(p, "#!/bin/sh\n", 10);
    CHECK(chmod(p, 0755) == 0);
    return p;
}

static void test_toolkit__nvcc_given_then_cuda_home_then_path(void)
{
    char *home = fs_join(test_tmpdir(), "cuda"), *bin = fs_join(home, "bin");
    char *onpath = fs_join(test_tmpdir(), "path");
    char *in_home = fake_nvcc(bin), *in_path = fake_nvcc(onpath), *got = NULL;
    char *missing = fs_join(test_tmpdir(), "none/nvcc");
    CHECK((got = toolkit_find_nvcc(missing)) == NULL); /* a given one that is not there */
    setenv("CUDA_HOME", home, 1);
    setenv("PATH", onpath, 1);
    CHECK_STR(got = toolkit_find_nvcc(NULL), in_home);
    free(got);
    setenv("CUDA_HOME", test_tmpdir(), 1);
    CHECK_STR(got = toolkit_find_nvcc(NULL), in_path);
    free(got);
    CHECK_STR(got = toolkit_find_nvcc(in_home), in_home);
    free(got);
    free(home), free(bin), free(onpath), free(in_home), free(in_path), free(missing);
}

static void test_toolkit__share_folder_is_the_one_holding_the_marker(void)
{
    char *share = fs_join(test_tmpdir(), "share"), *marker = fs_join(share, "tune/timing.cu");
    char *got = NULL;
    test_write_file(marker, "//\n", 3);
    setenv("LSCAT_SHARE_DIR", share, 1);
    CHECK_STR(got = toolkit_find_share("tune/timing.cu", NULL), share);
    free(got);
    CHECK(toolkit_find_share("tune/sweep_host.cu", share) == NULL); /* set but without it */
    unsetenv("LSCAT_SHARE_DIR");
    CHECK_STR(got = toolkit_find_share("tune/timing.cu", share), share); /* the source tree */
    free(got);
    CHECK(toolkit_find_share("tune/none.cu", share) == NULL);
    free(share), free(marker);
}

int main(void)
{
    TEST_RUN(test_toolkit__nvcc_given_then_cuda_home_then_path);
    TEST_RUN(test_toolkit__share_folder_is_the_one_holding_the_marker);
    return test_done();
}
