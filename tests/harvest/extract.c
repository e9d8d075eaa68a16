/* Tests of harvest/extract.c with hostile archives (made by
 * tests/harvest/support/hostile_archives.py): traversal, absolute paths, links, devices,
 * bombs and caps are refused and recorded, and nothing is written outside the tree. */
#include "harvest/extract.h"
#include "harvest/fetch.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *archives(void)
{
    static char dir[4096];
    snprintf(dir, sizeof(dir), "%s/arch", test_tmpdir());
    if (!fs_exists(dir)) {
        const char *root = getenv("LSCAT_ROOT") ? getenv("LSCAT_ROOT") : ".";
        char *cmd = xasprintf("python3 '%s/tests/harvest/support/hostile_archives.py' '%s'", root,
                              dir);
        CHECK_INT(system(cmd), ==, 0);
        free(cmd);
    }
    return dir;
}

static const char *reason_of(const struct extract_result *r, const char *needle)
{
    for (size_t i = 0; i < r->nrefused; i++)
        if (strstr(r->refused[i].path, needle))
            return r->refused[i].reason;
    return NULL;
}

static int has_file(const struct extract_result *r, const char *path)
{
    for (size_t i = 0; i < r->nfiles; i++)
        if (!strcmp(r->files[i].path, path))
            return 1;
    return 0;
}

static void test_extract_check_path__refuses_traversal_and_normalises(void)
{
    char out[256];
    CHECK_STR(extract_check_path(out, sizeof(out), "/etc/passwd", 0), "absolute_path");
    CHECK_STR(extract_check_path(out, sizeof(out), "top/../../x", 1), "dot_dot");
    CHECK_STR(extract_check_path(out, sizeof(out), "../x", 1), "dot_dot");
    CHECK_STR(extract_check_path(out, sizeof(out), "a\\..\\b", 0), "backslash");
    CHECK_STR(extract_check_path(out, sizeof(out), "C:/x", 0), "absolute_path");
    CHECK(!extract_check_path(out, sizeof(out), "top/./a//b/c.cu", 1));
    CHECK_STR(out, "a/b/c.cu");
    CHECK(!extract_check_path(out, sizeof(out), "x.cu", 1));
    CHECK_STR(out, "x.cu");
}

static void test_extract_kind__keeps_sources_headers_and_build_files(void)
{
    CHECK_STR(extract_kind("a/k.cu"), "cuda");
    CHECK_STR(extract_kind("a/k.CUH"), "cuda");
    CHECK_STR(extract_kind("m.c"), "c");
    CHECK_STR(extract_kind("m.cpp"), "cpp");
    CHECK_STR(extract_kind("t.tpp"), "header");
    CHECK_STR(extract_kind("x/i.inl"), "header");
    CHECK_STR(extract_kind("CMakeLists.txt"), "build");
    CHECK_STR(extract_kind("sub/Makefile"), "build");
    CHECK(!extract_kind("README.md"));
    CHECK(!extract_kind("plot.py"));
    CHECK(!extract_kind(".cu"));
}

static void test_extract_archive__refuses_hostile_tar_entries(void)
{
    struct extract_result r;
    const struct extract_limits lim = EXTRACT_LIMITS_INIT;
    char *tar = xasprintf("%s/evil.tar", archives());
    char *tree = xasprintf("%s/w/trees/o/n", test_tmpdir());
    char *work = xasprintf("%s/w", test_tmpdir());
    extract_result_init(&r);
    CHECK_OK(extract_archive(&r, tar, 1, work, tree, &lim));
    CHECK(has_file(&r, "ok.cu"));
    CHECK(has_file(&r, "a/b/c.h"));
    CHECK_INT(r.nfiles, ==, 2);
    CHECK_STR(reason_of(&r, "evil.cu"), "dot_dot");
    CHECK_STR(reason_of(&r, "abs.cu"), "absolute_path");
    CHECK_STR(reason_of(&r, "dev.cu"), "device");
    CHECK_STR(reason_of(&r, "fifo.cu"), "device");
    CHECK_STR(reason_of(&r, "hard.cu"), "hardlink");
    CHECK_STR(reason_of(&r, "link.cu"), "symlink");
    CHECK_STR(reason_of(&r, "x.cu"), "backslash");
    CHECK(!reason_of(&r, "notes.txt"));
    char *evil = xasprintf("%s/w/trees/evil.cu", test_tmpdir());
    char *evil2 = xasprintf("%s/evil.cu", test_tmpdir());
    CHECK(!fs_exists(evil) && !fs_exists(evil2));
    char *ok = xasprintf("%s/ok.cu", tree);
    struct stat st;
    CHECK(stat(ok, &st) == 0 && st.st_nlink == 2); /* hard link to its blob */
    CHECK(!(st.st_mode & 0222));                   /* read-only */
    extract_result_release(&r);
    free(tar), free(tree), free(work), free(evil), free(evil2), free(ok);
}

static void test_extract_archive__stops_a_zip_bomb_at_the_ratio_cap(void)
{
    struct extract_result r;
    const struct extract_limits lim = EXTRACT_LIMITS_INIT;
    char *zip = xasprintf("%s/bomb.zip", archives());
    char *work = xasprintf("%s/wb", test_tmpdir());
    char *tree = xasprintf("%s/trees/o/n", work);
    extract_result_init(&r);
    CHECK_OK(extract_archive(&r, zip, 1, work, tree, &lim));
    CHECK(r.aborted);
    CHECK_INT(r.nfiles, <, 2);
    CHECK_STR(r.refused[r.nrefused - 1].reason, "ratio_cap");
    CHECK_INT(r.bytes_inflated, <=, 2 * (8 << 20));
    extract_result_release(&r);
    free(zip), free(work), free(tree);
}

static void test_extract_archive__refuses_files_over_the_size_cap(void)
{
    struct extract_result r;
    const struct extract_limits lim = EXTRACT_LIMITS_INIT;
    char *zip = xasprintf("%s/big.zip", archives());
    char *work = xasprintf("%s/wz", test_tmpdir());
    char *tree = xasprintf("%s/trees/o/n", work);
    extract_result_init(&r);
    CHECK_OK(extract_archive(&r, zip, 1, work, tree, &lim));
    CHECK_STR(reason_of(&r, "big.cu"), "too_large");
    CHECK(has_file(&r, "small.cu"));
    extract_result_release(&r);
    free(zip), free(work), free(tree);
}

static void test_extract_archive__caps_the_entry_count(void)
{
    struct extract_result r;
    struct extract_limits lim = EXTRACT_LIMITS_INIT;
    lim.max_entries = 3;
    char *tar = xasprintf("%s/evil.tar", archives());
    char *work = xasprintf("%s/we", test_tmpdir());
    char *tree = xasprintf("%s/trees/o/n", work);
    extract_result_init(&r);
    CHECK_OK(extract_archive(&r, tar, 1, work, tree, &lim));
    CHECK(r.aborted);
    CHECK_STR(r.refused[r.nrefused - 1].reason, "entry_cap");
    extract_result_release(&r);
    free(tar), free(work), free(tree);
}

static void test_extract_archive__rejects_a_file_that_is_not_an_archive(void)
{
    struct extract_result r;
    const struct extract_limits lim = EXTRACT_LIMITS_INIT;
    char *p = xasprintf("%s/junk.zip", test_tmpdir());
    test_write_file(p, "<html>404</html>", 16);
    char *work = xasprintf("%s/wj", test_tmpdir());
    char *tree = xasprintf("%s/trees/o/n", work);
    extract_result_init(&r);
    CHECK(extract_archive(&r, p, 1, work, tree, &lim) < 0);
    extract_result_release(&r);
    free(p), free(work), free(tree);
}

static void test_extract_license_spdx__recognises_common_licenses(void)
{
    static const char mit[] = "MIT License\n\nPermission is hereby granted, free of charge, ...";
    static const char bsd3[] = "Redistribution and use in source and binary forms ... 3. Neither "
                               "the name of the copyright holder ...";
    static const char gpl3[] = "GNU GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007";
    CHECK_STR(extract_license_spdx(mit, strlen(mit)), "MIT");
    CHECK_STR(extract_license_spdx(bsd3, strlen(bsd3)), "BSD-3-Clause");
    CHECK_STR(extract_license_spdx(gpl3, strlen(gpl3)), "GPL-3.0");
    CHECK_STR(extract_license_spdx("all rights reserved", 19), "NOASSERTION");
    CHECK(extract_is_license_file("LICENSE"));
    CHECK(extract_is_license_file("License.md"));
    CHECK(extract_is_license_file("COPYING"));
    CHECK(!extract_is_license_file("docs/LICENSE"));
    CHECK(!extract_is_license_file("licenses.cu"));
}

static void test_fetch_zip_commit__reads_githubs_zip_comment(void)
{
    char sha[41];
    char *z = xasprintf("%s/commit.zip", archives());
    char *p = xasprintf("%s/plain.zip", archives());
    CHECK(fetch_zip_commit(sha, z));
    CHECK_STR(sha, "0123456789abcdef0123456789abcdef01234567");
    CHECK(!fetch_zip_commit(sha, p));
    free(z), free(p);
}

static void test_fetch_expand_url__fills_owner_and_name(void)
{
    char *u = fetch_expand_url(FETCH_DEFAULT_ARCHIVE_URL, "NVIDIA/cuda-samples");
    CHECK_STR(u, "https://codeload.github.com/NVIDIA/cuda-samples/zip/HEAD");
    free(u);
    u = fetch_expand_url("file:///a/{full_name}.zip", "o/n");
    CHECK_STR(u, "file:///a/o/n.zip");
    free(u);
}

int main(void)
{
    TEST_RUN(test_extract_check_path__refuses_traversal_and_normalises);
    TEST_RUN(test_extract_kind__keeps_sources_headers_and_build_files);
    TEST_RUN(test_extract_archive__refuses_hostile_tar_entries);
    TEST_RUN(test_extract_archive__stops_a_zip_bomb_at_the_ratio_cap);
    TEST_RUN(test_extract_archive__refuses_files_over_the_size_cap);
    TEST_RUN(test_extract_archive__caps_the_entry_count);
    TEST_RUN(test_extract_archive__rejects_a_file_that_is_not_an_archive);
    TEST_RUN(test_extract_license_spdx__recognises_common_licenses);
    TEST_RUN(test_fetch_zip_commit__reads_githubs_zip_comment);
    TEST_RUN(test_fetch_expand_url__fills_owner_and_name);
    return test_done();
}
