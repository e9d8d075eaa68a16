/* CSV for people and spreadsheets: RFC 4180 quoting, numbers that round-trip, optional gzip
 * (zlib). Rows are assembled in one buffer and written out in large blocks, so the writer is
 * bound by formatting, not by system calls. */
#include "dataset/csv.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "dataset/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define FLUSH_BYTES (1u << 20)

struct csv_writer {
    char *path, *tmp;
    FILE *f;
    gzFile gz;
    struct buf b;
    int col;
    struct buf scratch;
};

static void sep(struct csv_writer *w)
{
    if (w->col++ > 0)
        buf_addch(&w->b, ',');
}

static int flush(struct csv_writer *w)
{
    if (w->b.len == 0)
        return 0;
    int ok;
    if (w->gz)
        ok = gzwrite(w->gz, w->b.data, (unsigned)w->b.len) == (int)w->b.len;
    else
        ok = fwrite(w->b.data, 1, w->b.len, w->f) == w->b.len;
    buf_reset(&w->b);
    if (!ok)
        return lscat_error_set("cannot write '%s': %s (disk full?)", w->tmp, strerror(errno));
    return 0;
}

int csv_writer_open(struct csv_writer **out, const char *path, const char *const *names,
                    int ncols, int gzip)
{
    *out = NULL;
    struct csv_writer *w = xcalloc(1, sizeof(*w));
    w->path = xstrdup(path);
    w->tmp = xasprintf("%s.tmp", path);
    buf_init(&w->b, FLUSH_BYTES + 4096);
    buf_init(&w->scratch, 0);
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        int rc = lscat_error_set("cannot create '%s': %s", w->tmp, strerror(errno));
        csv_writer_abort(w);
        return rc;
    }
    if (gzip) {
        w->gz = gzdopen(dup(fileno(w->f)), "wb6");
        if (!w->gz) {
            csv_writer_abort(w);
            return lscat_error_set("cannot start gzip on '%s'", path);
        }
        gzbuffer(w->gz, 1 << 18);
    }
    for (int i = 0; i < ncols; i++)
        csv_put_text(w, names[i], strlen(names[i]));
    if (csv_end_row(w) < 0) {
        csv_writer_abort(w);
        return LSCAT_ERR;
    }
    *out = w;
    return 0;
}

void csv_put_null(struct csv_writer *w)
{
    sep(w);
}

void csv_put_int(struct csv_writer *w, int64_t v)
{
    sep(w);
    char tmp[24];
    int n = sizeof(tmp);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v; /* no overflow on INT64_MIN */
    do {
        tmp[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--n] = '-';
    buf_add(&w->b, tmp + n, sizeof(tmp) - (size_t)n);
}

void csv_put_bool(struct csv_writer *w, int v)
{
    sep(w);
    buf_adds(&w->b, v ? "true" : "false");
}

void csv_put_double(struct csv_writer *w, double v)
{
    sep(w);
    char tmp[32];
    int n = text_double(tmp, v);
    buf_add(&w->b, tmp, (size_t)n);
}

void csv_put_text(struct csv_writer *w, const void *s, size_t len)
{
    sep(w);
    const char *p = s;
    int quote = len == 0;
    for (size_t i = 0; i < len && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
    if (!quote) {
        buf_add(&w->b, p, len);
        return;
    }
    buf_grow(&w->b, len + 2);
    buf_addch(&w->b, '"');
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '"') {
            buf_add(&w->b, p + start, i + 1 - start);
            buf_addch(&w->b, '"');
            start = i + 1;
        }
    }
    buf_add(&w->b, p + start, len - start);
    buf_addch(&w->b, '"');
}

void csv_put_base64(struct csv_writer *w, const void *data, size_t len)
{
    buf_reset(&w->scratch);
    text_base64(&w->scratch, data, len);
    csv_put_text(w, w->scratch.data, w->scratch.len);
}

int csv_end_row(struct csv_writer *w)
{
    buf_add(&w->b, "\r\n", 2);
    w->col = 0;
    return w->b.len >= FLUSH_BYTES ? flush(w) : 0;
}

int csv_writer_close(struct csv_writer *w)
{
    int rc = flush(w);
    if (w->gz) {
        if (gzclose(w->gz) != Z_OK && rc == 0)
            rc = lscat_error_set("cannot finish gzip stream '%s'", w->tmp);
        w->gz = NULL;
    }
    if (rc == 0 && (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0))
        rc = lscat_error_set("cannot write '%s': %s", w->tmp, strerror(errno));
    if (fclose(w->f) != 0 && rc == 0)
        rc = lscat_error_set("cannot write '%s': %s", w->tmp, strerror(errno));
    w->f = NULL;
    if (rc == 0 && rename(w->tmp, w->path) != 0)
        rc = lscat_error_set("cannot rename '%s': %s", w->tmp, strerror(errno));
    if (rc < 0)
        unlink(w->tmp);
    buf_release(&w->b);
    buf_release(&w->scratch);
    free(w->path);
    free(w->tmp);
    free(w);
    return rc;
}

void csv_writer_abort(struct csv_writer *w)
{
    if (!w)
        return;
    if (w->gz)
        gzclose(w->gz);
    if (w->f) {
        fclose(w->f);
        unlink(w->tmp);
    }
    buf_release(&w->b);
    buf_release(&w->scratch);
    free(w->path);
    free(w->tmp);
    free(w);
}
