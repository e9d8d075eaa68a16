/* The output CSV of `lscat sweep`: Record, the space's parameters, Status, Error, Time and the
 * driver's own columns, one row per record appended in a single write as soon as the record is
 * done. A killed sweep leaves complete rows (and at most one torn last line, cut on reopening),
 * so the next run skips exactly the records that have a row: none lost, none doubled. */
#include "tune/usersweep.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct usersweep_out {
    int fd;
    char *path;
    int ncolumns;               /* user columns */
    char **columns;
    const struct bonsai_space *space;
};

static void add_csv(struct buf *b, const char *v)
{
    if (!strpbrk(v, ",\"\r\n")) {
        buf_adds(b, v);
        return;
    }
    buf_addch(b, '"');
    for (; *v; v++) {
        if (*v == '"')
            buf_addch(b, '"');
        buf_addch(b, *v);
    }
    buf_addch(b, '"');
}

static void header_prefix(struct buf *b, const struct bonsai_space *s)
{
    buf_adds(b, "Record");
    for (int i = 0; i < s->nparams; i++) {
        buf_addch(b, ',');
        buf_adds(b, s->params[i].name);
    }
    buf_adds(b, ",Status,Error,Time");
}

/* Field k (0-based) of a CSV line, unquoted, into b; 0 when the line has it. */
static int csv_field(struct buf *b, const char *line, int k)
{
    buf_reset(b);
    const char *p = line;
    for (int i = 0;; i++) {
        int quoted = *p == '"';
        if (quoted)
            p++;
        while (*p && (quoted || *p != ',')) {
            if (quoted && *p == '"') {
                if (p[1] != '"') {
                    p++;
                    break;
                }
                p++;
            }
            if (i == k)
                buf_addch(b, *p);
            p++;
        }
        if (i == k)
            return 0;
        if (*p != ',')
            return -1;
        p++;
    }
}

static int scan_rows(char *done, double *best_s, const struct bonsai_space *s, char *rows,
                     int status_col)
{
    struct buf f = BUF_INIT;
    for (char *save = NULL, *l = strtok_r(rows, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (csv_field(&f, l, 0) < 0)
            continue;
        long idx = strtol(f.data, NULL, 10);
        if (idx >= 1 && idx <= s->nrecords)
            done[idx] = 1;
        if (csv_field(&f, l, status_col) == 0 && !strcmp(f.data, "Success") &&
            csv_field(&f, l, status_col + 2) == 0 && *f.data) {
            double t = strtod(f.data, NULL);
            if (t > 0 && (*best_s <= 0 || t < *best_s))
                *best_s = t;
        }
    }
    buf_release(&f);
    return 0;
}

int usersweep_out_scan(char *done, double *best_s, char **columns, const char *path,
                       const struct bonsai_space *s)
{
    struct buf b = BUF_INIT, want = BUF_INIT;
    *columns = NULL;
    int rc = 0;
    if (access(path, F_OK) != 0)
        goto done;
    if ((rc = buf_read_file(&b, path)) < 0) {
        rc = lscat_error_set("cannot read the output '%s' to resume it: %s", path,
                             lscat_error_last());
        goto done;
    }
    if (b.len == 0)
        goto done;
    size_t complete = b.len; /* a torn last line is not a row */
    while (complete > 0 && b.data[complete - 1] != '\n')
        complete--;
    buf_setlen(&b, complete);
    char *nl = strchr(b.data, '\n');
    if (!nl)
        goto done;
    *nl = '\0';
    header_prefix(&want, s);
    if (strncmp(b.data, want.data, want.len) != 0 || (b.data[want.len] && b.data[want.len] != ',')) {
        rc = lscat_error_setc(LSCAT_EINVALID, "'%s' holds another sweep's results (its header "
                              "is not '%s...'): choose another --out, or remove it to start "
                              "over", path, want.data);
        goto done;
    }
    *columns = xstrdup(b.data[want.len] ? b.data + want.len + 1 : "");
    rc = scan_rows(done, best_s, s, nl + 1, 1 + s->nparams);
done:
    buf_release(&b);
    buf_release(&want);
    return rc;
}

static void split_columns(struct usersweep_out *f, const char *columns)
{
    char *copy = xstrdup(columns ? columns : ""), *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        f->columns = xrealloc(f->columns, (size_t)(f->ncolumns + 1) * sizeof(char *));
        f->columns[f->ncolumns++] = xstrdup(t);
    }
    free(copy);
}

/* Cut whatever follows the last newline (a row torn by a kill). */
static int cut_torn_line(int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return lscat_error_set("cannot stat '%s': %s", path, strerror(errno));
    off_t end = st.st_size;
    char c = 0;
    while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n')
        end--;
    if (end != st.st_size && ftruncate(fd, end) != 0)
        return lscat_error_set("cannot cut the torn last line of '%s': %s", path,
                               strerror(errno));
    return (int)(end > 0);
}

static int write_all(int fd, const char *data, size_t len, const char *path)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return lscat_error_set("cannot write '%s': %s", path, strerror(errno));
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int usersweep_out_open(struct usersweep_out **out, const char *path,
                       const struct bonsai_space *s, const char *columns)
{
    struct usersweep_out *f = xcalloc(1, sizeof(*f));
    struct buf h = BUF_INIT;
    f->path = xstrdup(path);
    f->space = s;
    split_columns(f, columns);
    f->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int rc = f->fd < 0 ? lscat_error_set("cannot open the output '%s': %s (check the folder "
                                         "exists and is writable)", path, strerror(errno))
                       : cut_torn_line(f->fd, path);
    if (rc == 0) { /* empty: write the header */
        header_prefix(&h, s);
        for (int i = 0; i < f->ncolumns; i++)
            buf_addf(&h, ",%s", f->columns[i]);
        buf_addch(&h, '\n');
        rc = write_all(f->fd, h.data, h.len, path);
    }
    buf_release(&h);
    if (rc < 0) {
        usersweep_out_close(f);
        f = NULL;
    }
    *out = f;
    return rc < 0 ? rc : 0;
}

static const char *output_value(struct buf *tmp, const char *outputs, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = outputs; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > n && !strncmp(p, name, n) && p[n] == '=') {
            buf_reset(tmp);
            buf_add(tmp, p + n + 1, len - n - 1);
            return tmp->data;
        }
        p = end ? end + 1 : p + len;
    }
    return "";
}

int usersweep_out_write(struct usersweep_out *f, const struct bonsai_record *r,
                        const struct usersweep_row *row)
{
    struct buf b = BUF_INIT, tmp = BUF_INIT;
    buf_addf(&b, "%d", r->index);
    for (int i = 0; i < f->space->nparams; i++) {
        buf_addch(&b, ',');
        add_csv(&b, r->values[i]);
    }
    buf_addf(&b, ",%s,%s,", row->status, row->error);
    if (row->time_s >= 0)
        buf_addf(&b, "%.9g", row->time_s);
    for (int i = 0; i < f->ncolumns; i++) {
        buf_addch(&b, ',');
        add_csv(&b, output_value(&tmp, row->outputs, f->columns[i]));
    }
    buf_addch(&b, '\n');
    int rc = write_all(f->fd, b.data, b.len, f->path);
    buf_release(&b);
    buf_release(&tmp);
    return rc;
}

static int same_columns(const struct usersweep_out *f, char **names, int n)
{
    if (n != f->ncolumns)
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], f->columns[i]))
            return 0;
    return 1;
}

int usersweep_out_append_row(struct usersweep_out *f, const char *line, const char *columns)
{
    struct usersweep_out theirs = { .ncolumns = 0 };
    struct buf b = BUF_INIT, field = BUF_INIT;
    split_columns(&theirs, columns);
    int fixed = f->space->nparams + 4; /* Record, the parameters, Status, Error, Time */
    if (same_columns(f, theirs.columns, theirs.ncolumns)) {
        buf_adds(&b, line);
    } else {
        for (int k = 0; k < fixed; k++) {
            if (k)
                buf_addch(&b, ',');
            add_csv(&b, csv_field(&field, line, k) == 0 ? field.data : "");
        }
        for (int i = 0; i < f->ncolumns; i++) {
            int j = 0;
            while (j < theirs.ncolumns && strcmp(theirs.columns[j], f->columns[i]))
                j++;
            buf_addch(&b, ',');
            if (j < theirs.ncolumns && csv_field(&field, line, fixed + j) == 0)
                add_csv(&b, field.data);
        }
    }
    buf_addch(&b, '\n');
    int rc = write_all(f->fd, b.data, b.len, f->path);
    for (int i = 0; i < theirs.ncolumns; i++)
        free(theirs.columns[i]);
    free(theirs.columns);
    buf_release(&b);
    buf_release(&field);
    return rc;
}

int usersweep_out_close(struct usersweep_out *f)
{
    if (!f)
        return 0;
    int rc = 0;
    if (f->fd >= 0 && (fsync(f->fd) != 0 || close(f->fd) != 0))
        rc = lscat_error_set("cannot finish writing '%s': %s", f->path, strerror(errno));
    for (int i = 0; i < f->ncolumns; i++)
        free(f->columns[i]);
    free(f->columns);
    free(f->path);
    free(f);
    return rc;
}
