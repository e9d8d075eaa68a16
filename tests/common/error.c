/* Tests for common/error.c: the thread-local error slot. */
#include "common/error.h"
#include "tests/support/test.h"

#include <pthread.h>
#include <string.h>

static void test_error__set_returns_err_and_keeps_the_message(void)
{
    lscat_error_clear();
    CHECK_STR(lscat_error_last(), "");
    CHECK_INT(lscat_error_code(), ==, LSCAT_OK);
    CHECK_INT(lscat_error_set("cannot open '%s': %s", "x.db", "locked"), ==, LSCAT_ERR);
    CHECK_STR(lscat_error_last(), "cannot open 'x.db': locked");
    CHECK_INT(lscat_error_code(), ==, LSCAT_ERR);
    CHECK_INT(lscat_error_setc(LSCAT_EBUSY, "busy"), ==, LSCAT_EBUSY);
    CHECK_INT(lscat_error_code(), ==, LSCAT_EBUSY);
}

static void test_error__wrap_prepends_context_and_keeps_the_code(void)
{
    lscat_error_setc(LSCAT_EVERSION, "schema 9");
    lscat_error_wrap("opening '%s'", "a.db");
    CHECK_STR(lscat_error_last(), "opening 'a.db': schema 9");
    CHECK_INT(lscat_error_code(), ==, LSCAT_EVERSION);
    lscat_error_clear();
    lscat_error_wrap("only context");
    CHECK_STR(lscat_error_last(), "only context");
}

static void test_error__long_messages_are_cut_with_an_ellipsis(void)
{
    char big[5000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    lscat_error_set("%s", big);
    size_t n = strlen(lscat_error_last());
    CHECK_INT(n, <, 4096);
    CHECK(!strcmp(lscat_error_last() + n - 3, "..."));
}

static void *other_thread(void *arg)
{
    (void)arg;
    static char seen[64];
    strcpy(seen, lscat_error_last()); /* must not see the main thread's message */
    lscat_error_set("from the other thread");
    return seen;
}

static void test_error__slot_is_per_thread(void)
{
    lscat_error_set("from main");
    pthread_t t;
    void *seen = NULL;
    CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
    pthread_join(t, &seen);
    CHECK_STR((const char *)seen, "");
    CHECK_STR(lscat_error_last(), "from main");
}

int main(void)
{
    TEST_RUN(test_error__set_returns_err_and_keeps_the_message);
    TEST_RUN(test_error__wrap_prepends_context_and_keeps_the_code);
    TEST_RUN(test_error__long_messages_are_cut_with_an_ellipsis);
    TEST_RUN(test_error__slot_is_per_thread);
    return test_done();
}
