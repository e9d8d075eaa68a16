/* Unit tests of dataset/columns.c: every published table's SQL runs on a fresh store and
 * yields exactly the columns the writers and columns.md declare. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "dataset/columns.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_columns__every_table_sql_matches_its_column_list(void)
{
    char *db = fs_join(test_tmpdir(), "s.db");
    struct store *s;
    CHECK_OK(store_open(&s, db, STORE_CREATE));
    int n;
    const struct columns_table *t = columns_tables(&n);
    CHECK_INT(n, ==, 8);
    for (int i = 0; i < n; i++) {
        struct store_stmt *st;
        CHECK_OK(store_prepare(&st, s, t[i].sql));
        if (store_col_count(st) != t[i].ncols)
            test_fail(__FILE__, __LINE__, "%s: SQL has %d columns, definition %d", t[i].name,
                      store_col_count(st), t[i].ncols);
        if (strchr(t[i].sql, '?'))
            CHECK_OK(store_bind(st, "tt", "h100", "2026"));
        CHECK_INT(store_step(st), ==, STORE_DONE);
        store_finalize(st);
    }
    store_free(s);
    free(db);
}

static void test_columns__markdown_documents_every_column(void)
{
    struct buf b = BUF_INIT;
    columns_markdown(&b);
    int n;
    const struct columns_table *t = columns_tables(&n);
    for (int i = 0; i < n; i++) {
        char head[64];
        snprintf(head, sizeof(head), "\n## %s\n", t[i].name);
        CHECK_CONTAINS(b.data, head);
        for (int c = 0; c < t[i].ncols; c++) {
            char cell[128];
            snprintf(cell, sizeof(cell), "| `%s` | %s |", t[i].cols[c].name,
                     columns_type_name(&t[i].cols[c]));
            CHECK_CONTAINS(b.data, cell);
        }
    }
    buf_release(&b);
}

int main(void)
{
    TEST_RUN(test_columns__every_table_sql_matches_its_column_list);
    TEST_RUN(test_columns__markdown_documents_every_column);
    return test_done();
}
