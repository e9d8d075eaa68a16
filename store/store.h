/* The store: one SQLite database (WAL, foreign keys on) that is the single source of truth of
 * every stage. Only this module talks to SQLite and translates its codes; stages use the thin
 * statement API below and get lscat error codes with readable messages.
 *
 *     struct store *s;
 *     if (store_open(&s, cli.db_path, STORE_CREATE) < 0) ...  // lscat_error_last() says why
 *     store_begin(s);
 *     store_run(s, "INSERT INTO repos(full_name, source) VALUES (?, ?)", "tt", name, "import");
 *     store_commit(s);
 *     store_free(s);
 *
 * Opening never modifies a file it refuses (not SQLite, corrupt, another program's database,
 * or a schema newer than this lscat). Migrations run in their own transactions. */
#ifndef LSCAT_STORE_H
#define LSCAT_STORE_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_stmt;

enum store_flags {
    STORE_CREATE = 1,   /* create the file (and its folder) when missing, migrate to latest */
    STORE_READONLY = 2, /* never write; fails on a store that needs migrating */
};

enum { STORE_DONE = 0, STORE_ROW = 1 };

/* `application_id` written into every lscat store ('LSCT'). */
#define STORE_APPLICATION_ID 0x4C534354

/* Open (and migrate) the store at `path`. *out belongs to the caller: store_free() it. */
int store_open(struct store **out, const char *path, unsigned flags);
void store_free(struct store *s);
const char *store_path(const struct store *s);
int store_schema_version(struct store *s);

/* Run SQL without parameters (may hold several statements). */
int store_exec(struct store *s, const char *sql);
/* BEGIN IMMEDIATE: takes the write lock now, waiting up to the busy timeout for other writers. */
int store_begin(struct store *s);
int store_commit(struct store *s);
/* Never fails; safe to call when no transaction is open. */
void store_rollback(struct store *s);

/* Run one statement with parameters described by `types`, one char per '?':
 *   't' const char * (NULL binds NULL)   'i' int64_t   'I' int   'd' double   'n' NULL (no arg)
 *   'b' const void *, size_t (blob)
 * Returns the number of rows changed, or a negative code. */
int store_run(struct store *s, const char *sql, const char *types, ...);
/* The first column of the first row as an integer (0 when no row or NULL). */
int store_query_int(int64_t *out, struct store *s, const char *sql, const char *types, ...);
/* The first column of the first row as a heap string (caller frees; NULL when no row/NULL). */
int store_query_text(char **out, struct store *s, const char *sql, const char *types, ...);

int store_prepare(struct store_stmt **out, struct store *s, const char *sql);
/* Bind by `types` as in store_run, starting at parameter 1; resets the statement first. */
int store_bind(struct store_stmt *st, const char *types, ...);
/* STORE_ROW, STORE_DONE or a negative code. */
int store_step(struct store_stmt *st);
int64_t store_col_int(struct store_stmt *st, int col);
double store_col_double(struct store_stmt *st, int col);
/* Borrowed until the next step/reset/finalize; NULL for SQL NULL. */
const char *store_col_text(struct store_stmt *st, int col);
const void *store_col_blob(struct store_stmt *st, int col, size_t *len_out);
int store_col_is_null(struct store_stmt *st, int col);
int store_col_count(struct store_stmt *st);
const char *store_col_name(struct store_stmt *st, int col);
/* NULL is a no-op. */
void store_finalize(struct store_stmt *st);

int64_t store_last_insert_id(struct store *s);

/* Record the start of a stage invocation in stage_runs; *run_id_out identifies it. */
int store_run_begin(int64_t *run_id_out, struct store *s, const char *stage, int argc,
                    char **argv);
/* Record its end: exit status and a JSON object of counts (NULL for none). */
int store_run_end(struct store *s, int64_t run_id, int exit_status, const char *counts_json);

#endif
