/* Unit-test harness: runs tests one after another in one process, catches failed checks with
 * longjmp, gives each test its own temporary folder, prints one result line per test. */
#include "tests/support/test.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static jmp_buf test_jmp;
static int n_pass, n_fail, n_skip;
static char *tmpdir;
static char msg[4096];
static int skipped;

void test_fail(const char *file, int line, const char *fmt, ...)
{
    int n = snprintf(msg, sizeof(msg), "%s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n')
            *p = ' ';
    longjmp(test_jmp, 1);
}

void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    skipped = 1;
    longjmp(test_jmp, 1);
}

const char *test_tmpdir(void)
{
    if (!tmpdir) {
        const char *base = getenv("TMPDIR");
        char *tmpl = xasprintf("%s/lscat-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpl)) {
            fprintf(stderr, "cannot create a temporary folder: %s\n", strerror(errno));
            abort();
        }
        tmpdir = tmpl;
    }
    return tmpdir;
}

const char *test_data(const char *rel)
{
    static char path[4096];
    const char *root = getenv("LSCAT_ROOT");
    snprintf(path, sizeof(path), "%s/tests/data/%s", root && *root ? root : ".", rel);
    if (access(path, R_OK) != 0)
        test_fail(__FILE__, __LINE__, "cannot read %s: %s (tests/data ships with lscat)", path,
                  strerror(errno));
    return path;
}

const char *test_shared_data(const char *rel)
{
    return test_data(rel);
}

void test_write_file(const char *path, const char *content, size_t len)
{
    if (fs_mkdirs_parent(path) < 0)
        test_fail(__FILE__, __LINE__, "%s", lscat_error_last());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(content, 1, len, f) != len || fclose(f) != 0)
        test_fail(__FILE__, __LINE__, "cannot write %s: %s", path, strerror(errno));
}

const char *test_bin_dir(void)
{
    const char *b = getenv("LSCAT_BIN");
    return b && *b ? b : "build/bin";
}

int test_wait_until(int (*fn)(void *), void *arg)
{
    double until = fs_mono_s() + TEST_PATIENCE_S;
    while (!fn(arg)) {
        if (fs_mono_s() > until)
            return 0;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return 1;
}

void test_run(const char *name, void (*fn)(void))
{
    msg[0] = '\0';
    skipped = 0;
    lscat_error_clear();
    if (setjmp(test_jmp) == 0) {
        fn();
        printf("ok - %s\n", name);
        n_pass++;
    } else if (skipped) {
        printf("skip - %s: %s\n", name, msg);
        n_skip++;
    } else {
        printf("not ok - %s: %s\n", name, msg);
        n_fail++;
    }
    fflush(stdout);
    if (tmpdir) {
        if (!n_fail || !getenv("LSCAT_KEEP_TMP"))
            fs_remove_tree(tmpdir);
        free(tmpdir);
        tmpdir = NULL;
    }
}

int test_done(void)
{
    return n_fail ? 1 : 0;
}
