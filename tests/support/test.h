/* The unit-test harness. A test program is a main() that calls TEST_RUN(fn) for each test and
 * returns test_done(). Each test prints one line on stdout, which tests/run.sh counts:
 *     ok - store__refuses_a_newer_schema
 *     not ok - store__refuses_a_newer_schema: tests/store/store.c:42: rc == 0 (rc = -8: ...)
 *     skip - tune__calibration: no CUDA device
 * A failed check ends its test at once (longjmp); the other tests still run. */
#ifndef LSCAT_TEST_H
#define LSCAT_TEST_H

#include <setjmp.h>
#include <stdint.h>
#include <string.h>

void test_run(const char *name, void (*fn)(void));
int test_done(void);
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A fresh empty folder for this test, removed after the test passes. Borrowed string. */
const char *test_tmpdir(void);
/* Path of a real-data file shipped in tests/data (e.g. "matrices/can_24.mtx"), under
 * $LSCAT_ROOT (set by tests/run.sh) or the current folder; fails the test when it is missing. */
const char *test_data(const char *rel);
/* The old name of test_data, kept until no branch calls it. */
const char *test_shared_data(const char *rel);
/* Write a file (creating folders); fails the test on error. */
void test_write_file(const char *path, const char *content, size_t len);
/* The built programs' folder (LSCAT_BIN, default build/bin). */
const char *test_bin_dir(void);

/* How tests treat time (README, "Tests and time"): a test waits for a state it can see (a row,
 * a log line, a file), never for a fixed time. test_wait_until polls fn(arg) every 10 ms until
 * it returns nonzero and returns 1; it gives up and returns 0 only after TEST_PATIENCE_S, a
 * guard against a hang that no busy machine comes near. Safe in a helper thread (it never
 * fails the test itself). */
#define TEST_PATIENCE_S 600.0
int test_wait_until(int (*fn)(void *), void *arg);

#define TEST_RUN(fn) test_run(#fn, fn)

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond))                                                                        \
            test_fail(__FILE__, __LINE__, "%s", #cond);                                     \
    } while (0)

#define CHECK_INT(a, op, b)                                                                 \
    do {                                                                                    \
        long long ta_ = (long long)(a), tb_ = (long long)(b);                               \
        if (!(ta_ op tb_))                                                                  \
            test_fail(__FILE__, __LINE__, "%s %s %s (%lld vs %lld)", #a, #op, #b, ta_, tb_); \
    } while (0)

#define CHECK_STR(a, b)                                                                     \
    do {                                                                                    \
        const char *ta_ = (a), *tb_ = (b);                                                  \
        if (!ta_ || !tb_ || strcmp(ta_, tb_) != 0)                                          \
            test_fail(__FILE__, __LINE__, "%s == %s (\"%s\" vs \"%s\")", #a, #b,             \
                      ta_ ? ta_ : "(null)", tb_ ? tb_ : "(null)");                          \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                         \
    do {                                                                                    \
        const char *th_ = (hay), *tn_ = (needle);                                           \
        if (!th_ || !strstr(th_, tn_))                                                      \
            test_fail(__FILE__, __LINE__, "'%s' contains '%s' (it is \"%.300s\")", #hay,     \
                      tn_, th_ ? th_ : "(null)");                                           \
    } while (0)

/* A library call that must succeed (return >= 0); on failure shows lscat_error_last(). */
#define CHECK_OK(expr)                                                                      \
    do {                                                                                    \
        long long tr_ = (long long)(expr);                                                  \
        if (tr_ < 0)                                                                        \
            test_fail(__FILE__, __LINE__, "%s failed (%lld): %s", #expr, tr_,               \
                      lscat_error_last());                                                  \
    } while (0)

#endif
