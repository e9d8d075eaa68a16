/* The SQLite store: open with refusal of foreign/corrupt/newer files, numbered migrations keyed
 * on PRAGMA user_version, WAL, foreign keys, and a small statement API that turns SQLite
 * result codes into lscat errors with the store's path in the message. */
#include "store/store.h"

#include "common/buf.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "schema/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 30000

struct store {
    sqlite3 *db;
    char *path;
    int version;
};

struct store_stmt {
    sqlite3_stmt *st;
    struct store *s;
};

static int sql_error(struct store *s, int rc, const char *what)
{
    int code = LSCAT_ERR;
    const char *hint = "";
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        code = LSCAT_EBUSY;
        hint = " (another lscat is writing to it? wait, or use --db to pick another store)";
    } else if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
        hint = " (the store is damaged: restore it from a copy, or use --db to start another)";
    } else if (rc == SQLITE_FULL) {
        hint = " (the disk is full)";
    } else if (rc == SQLITE_READONLY) {
        hint = " (no permission to write it?)";
    }
    const char *msg = s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    return lscat_error_setc(code, "%s '%s': %s%s", what, s ? s->path : "?", msg, hint);
}

const char *store_path(const struct store *s)
{
    return s->path;
}

int store_schema_version(struct store *s)
{
    return s->version;
}

int store_exec(struct store *s, const char *sql)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_error(s, rc, "store");
}

int store_begin(struct store *s)
{
    return store_exec(s, "BEGIN IMMEDIATE");
}

int store_commit(struct store *s)
{
    return store_exec(s, "COMMIT");
}

void store_rollback(struct store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_prepare(struct store_stmt **out, struct store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return sql_error(s, rc, "cannot prepare a statement on");
    }
    *out = xmalloc(sizeof(**out));
    (*out)->st = st;
    (*out)->s = s;
    return 0;
}

static int bindv(struct store_stmt *st, const char *types, va_list ap)
{
    sqlite3_reset(st->st);
    sqlite3_clear_bindings(st->st);
    int rc = SQLITE_OK;
    for (int i = 0; types && types[i] && rc == SQLITE_OK; i++) {
        int idx = i + 1;
        switch (types[i]) {
        case 't': {
            const char *v = va_arg(ap, const char *);
            rc = v ? sqlite3_bind_text(st->st, idx, v, -1, SQLITE_TRANSIENT)
                   : sqlite3_bind_null(st->st, idx);
            break;
        }
        case 'i': rc = sqlite3_bind_int64(st->st, idx, va_arg(ap, int64_t)); break;
        case 'I': rc = sqlite3_bind_int64(st->st, idx, va_arg(ap, int)); break;
        case 'd': rc = sqlite3_bind_double(st->st, idx, va_arg(ap, double)); break;
        case 'n': rc = sqlite3_bind_null(st->st, idx); break;
        case 'b': {
            const void *p = va_arg(ap, const void *);
            size_t n = va_arg(ap, size_t);
            rc = p ? sqlite3_bind_blob64(st->st, idx, p, n, SQLITE_TRANSIENT)
                   : sqlite3_bind_null(st->st, idx);
            break;
        }
        default:
            return lscat_error_set("store_bind: unknown type '%c'", types[i]);
        }
    }
    return rc == SQLITE_OK ? 0 : sql_error(st->s, rc, "cannot bind a value on");
}

int store_bind(struct store_stmt *st, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int rc = bindv(st, types, ap);
    va_end(ap);
    return rc;
}

int store_step(struct store_stmt *st)
{
    int rc = sqlite3_step(st->st);
    if (rc == SQLITE_ROW)
        return STORE_ROW;
    if (rc == SQLITE_DONE)
        return STORE_DONE;
    return sql_error(st->s, rc, "cannot run a statement on");
}

int64_t store_col_int(struct store_stmt *st, int col)
{
    return sqlite3_column_int64(st->st, col);
}

double store_col_double(struct store_stmt *st, int col)
{
    return sqlite3_column_double(st->st, col);
}

const char *store_col_text(struct store_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st->st, col);
}

const void *store_col_blob(struct store_stmt *st, int col, size_t *len_out)
{
    const void *p = sqlite3_column_blob(st->st, col);
    if (len_out)
        *len_out = (size_t)sqlite3_column_bytes(st->st, col);
    return p;
}

int store_col_is_null(struct store_stmt *st, int col)
{
    return sqlite3_column_type(st->st, col) == SQLITE_NULL;
}

int store_col_count(struct store_stmt *st)
{
    return sqlite3_column_count(st->st);
}

const char *store_col_name(struct store_stmt *st, int col)
{
    return sqlite3_column_name(st->st, col);
}

void store_finalize(struct store_stmt *st)
{
    if (!st)
        return;
    sqlite3_finalize(st->st);
    free(st);
}

int64_t store_last_insert_id(struct store *s)
{
    return sqlite3_last_insert_rowid(s->db);
}

/* Prepare + bind + first step; the caller finalizes *out. */
static int run_v(struct store_stmt **out, struct store *s, const char *sql, const char *types,
                 va_list ap)
{
    int rc = store_prepare(out, s, sql);
    if (rc < 0)
        return rc;
    rc = bindv(*out, types, ap);
    if (rc < 0)
        return rc;
    return store_step(*out);
}

int store_run(struct store *s, const char *sql, const char *types, ...)
{
    struct store_stmt *st = NULL;
    va_list ap;
    va_start(ap, types);
    int rc = run_v(&st, s, sql, types, ap);
    va_end(ap);
    while (rc == STORE_ROW)
        rc = store_step(st);
    store_finalize(st);
    return rc < 0 ? rc : sqlite3_changes(s->db);
}

int store_query_int(int64_t *out, struct store *s, const char *sql, const char *types, ...)
{
    struct store_stmt *st = NULL;
    va_list ap;
    va_start(ap, types);
    int rc = run_v(&st, s, sql, types, ap);
    va_end(ap);
    *out = rc == STORE_ROW ? store_col_int(st, 0) : 0;
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

int store_query_text(char **out, struct store *s, const char *sql, const char *types, ...)
{
    struct store_stmt *st = NULL;
    va_list ap;
    va_start(ap, types);
    int rc = run_v(&st, s, sql, types, ap);
    va_end(ap);
    const char *t = rc == STORE_ROW ? store_col_text(st, 0) : NULL;
    *out = t ? xstrdup(t) : NULL;
    store_finalize(st);
    return rc < 0 ? rc : 0;
}

/* Check the first bytes ourselves before SQLite touches the file, so a foreign file is
 * refused without SQLite ever writing to it. */
/* The store is readable by its owner only (SQLite gives its -wal and -shm files the same
 * mode): the sandbox's unprivileged uids reach the work folder, and must not read the store. */
static int create_private(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST)
        return lscat_error_set("cannot create store '%s': %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return 0;
}

/* Stores made by an older lscat (0644): tightened when we own them. */
static void make_private(const char *path)
{
    static const char *const suffix[] = { "", "-wal", "-shm" };
    for (int i = 0; i < 3; i++) {
        char *p = xasprintf("%s%s", path, suffix[i]);
        struct stat st;
        if (stat(p, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 077))
            chmod(p, st.st_mode & 0700);
        free(p);
    }
}

/* Read-only checks on an existing database: ours, readable, not newer than us. */
static int check_identity(struct store *s)
{
    int64_t app_id = 0, version = 0, objects = 0;
    /* SQLite reads the header itself: this process must never open and close the store's file
     * on its own, since closing any descriptor of a file drops every POSIX lock the process
     * holds on it, those of its other connections included (another process may then take the
     * store for unused, checkpoint it and delete the WAL that this process still writes to). */
    sqlite3_stmt *probe = NULL;
    int src = sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master LIMIT 1", -1, &probe, NULL);
    if (src == SQLITE_OK)
        src = sqlite3_step(probe);
    sqlite3_finalize(probe);
    if (src == SQLITE_NOTADB)
        return lscat_error_setc(LSCAT_EINVALID,
                                "'%s' is not an lscat store: it is not an SQLite database "
                                "(left untouched; use --db to pick another path)",
                                s->path);
    int rc = store_query_int(&app_id, s, "PRAGMA application_id", NULL);
    if (!rc)
        rc = store_query_int(&version, s, "PRAGMA user_version", NULL);
    if (!rc)
        rc = store_query_int(&objects, s, "SELECT count(*) FROM sqlite_master", NULL);
    if (rc < 0)
        return lscat_error_wrap("'%s' cannot be read as an lscat store (left untouched)", s->path);
    if (app_id != STORE_APPLICATION_ID && (app_id != 0 || objects > 0))
        return lscat_error_setc(LSCAT_EINVALID,
                                "'%s' is an SQLite database but not an lscat store "
                                "(left untouched; use --db to pick another path)",
                                s->path);
    if (version > schema_version_latest)
        return lscat_error_setc(LSCAT_EVERSION,
                                "'%s' was written by a newer lscat (schema %lld; this lscat "
                                "knows up to %d): upgrade lscat, or use --db to pick another store",
                                s->path, (long long)version, schema_version_latest);
    s->version = (int)version;
    return 0;
}

static int migrate(struct store *s)
{
    for (int i = 0; i < schema_migration_count; i++) {
        const struct schema_migration *m = &schema_migrations[i];
        if (m->version <= s->version)
            continue;
        char pragma[96];
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d; PRAGMA application_id = %d;",
                 m->version, STORE_APPLICATION_ID);
        int rc = store_begin(s);
        if (!rc)
            rc = store_exec(s, m->sql);
        if (!rc)
            rc = store_exec(s, pragma);
        if (!rc)
            rc = store_commit(s);
        if (rc < 0) {
            store_rollback(s);
            return lscat_error_wrap("cannot apply schema migration %s", m->name);
        }
        s->version = m->version;
    }
    return 0;
}

static int configure(struct store *s, unsigned flags)
{
    sqlite3_extended_result_codes(s->db, 0);
    int rc = store_exec(s, "PRAGMA foreign_keys = ON");
    if (rc || (flags & STORE_READONLY))
        return rc;
    /* WAL: readers never block the writer; synchronous=NORMAL is durable against a killed
     * process (the WAL is replayed); only a power loss may drop the last commits. */
    rc = store_exec(s, "PRAGMA journal_mode = WAL");
    if (!rc)
        rc = store_exec(s, "PRAGMA synchronous = NORMAL");
    return rc;
}

int store_open(struct store **out, const char *path, unsigned flags)
{
    *out = NULL;
    struct store *s = xcalloc(1, sizeof(*s));
    s->path = xstrdup(path);
    int rc = 0;
    int exists = fs_exists(path);
    int oflags = (flags & STORE_READONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if (!exists) {
        if (!(flags & STORE_CREATE) || (flags & STORE_READONLY)) {
            rc = lscat_error_setc(LSCAT_ENOTFOUND,
                                  "no store at '%s' (run a stage to create it, or pass --db)",
                                  path);
            goto done;
        }
        if ((rc = fs_mkdirs_parent(path)) < 0 || (rc = create_private(path)) < 0)
            goto done;
        oflags |= SQLITE_OPEN_CREATE;
    } else if (!(flags & STORE_READONLY)) {
        make_private(path);
    }
    int src = sqlite3_open_v2(path, &s->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
    if (src != SQLITE_OK) {
        rc = sql_error(s, src, "cannot open store");
        goto done;
    }
    /* Before the first statement: a store another process is writing (or recovering, or
     * checkpointing as it closes) is waited for from the start, never "database is locked". */
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if ((rc = check_identity(s)) < 0)
        goto done;
    if ((rc = configure(s, flags)) < 0)
        goto done;
    if (s->version < schema_version_latest) {
        if (flags & STORE_READONLY) {
            rc = lscat_error_set("store '%s' has schema %d and needs migrating to %d: open it "
                                 "once without read-only mode",
                                 path, s->version, schema_version_latest);
            goto done;
        }
        rc = migrate(s);
    }
done:
    if (rc < 0) {
        store_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    if (s->db)
        sqlite3_close_v2(s->db);
    free(s->path);
    free(s);
}

int store_run_begin(int64_t *run_id_out, struct store *s, const char *stage, int argc,
                    char **argv)
{
    struct buf args = BUF_INIT;
    char now[32], host[256] = "";
    buf_addch(&args, '[');
    for (int i = 1; i < argc; i++) {
        if (i > 1)
            buf_addch(&args, ',');
        buf_add_json_str(&args, argv[i], strlen(argv[i]));
    }
    buf_addch(&args, ']');
    fs_utc_now(now);
    gethostname(host, sizeof(host) - 1);
    int rc = store_run(s,
                       "INSERT INTO stage_runs(stage, args, host, pid, lscat_version, started_at)"
                       " VALUES (?, ?, ?, ?, ?, ?)",
                       "tttItt", stage, args.data, host, (int)getpid(), LSCAT_VERSION, now);
    buf_release(&args);
    if (rc < 0)
        return lscat_error_wrap("cannot record the start of '%s'", stage);
    *run_id_out = store_last_insert_id(s);
    return 0;
}

int store_run_end(struct store *s, int64_t run_id, int exit_status, const char *counts_json)
{
    char now[32];
    fs_utc_now(now);
    int rc = store_run(s, "UPDATE stage_runs SET ended_at = ?, exit_status = ?, counts = ?"
                          " WHERE id = ?",
                       "tIti", now, exit_status, counts_json, (int64_t)run_id);
    return rc < 0 ? rc : 0;
}
