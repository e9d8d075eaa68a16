/* CSV for people and spreadsheets: RFC 4180 quoting, numbers that round-trip, optional gzip
 * (ISA-L's igzip, several times faster than zlib, loaded at run time so GPU nodes without it
 * still export: zlib level 1 there) or zstd. Rows are assembled in one buffer and
 * handed out in 1 MiB blocks to a second thread that compresses, hashes (SHA-256, for
 * SHA256SUMS) and writes them while the next block is formatted, so the export never reads its
 * own multi-gigabyte output back. */
#include "dataset/csv.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "dataset/text.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define FLUSH_BYTES (1u << 20)
#define GZIP_LEVEL 1 /* ISA-L's levels are 0-3; 1 is its fast default (bench/dataset.sh) */
#define ZSTD_LEVEL 3

struct csv_writer {
    char *path, *tmp;
    FILE *f;
    enum csv_compress compress;
    struct isal_zstream *gz;  /* gzip through ISA-L ... */
    uint8_t *gz_level_buf;
    z_stream *zl;             /* ... or through zlib where ISA-L is not installed */
    ZSTD_CCtx *zs;
    struct buf out;      /* compressed bytes of one block (writer thread, then close) */
    struct buf b;
    size_t row_start;    /* offset of the current row in b */
    size_t max_row;      /* longest row so far, in bytes (CRLF included) */
    int col;
    struct buf scratch;
    /* the writer thread */
    int threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct buf pending;  /* the block the thread hashes and writes */
    int has_pending, stop, write_errno;
    struct sha256 hash;
};

/* Hash and write bytes as they go into the file; returns 0 or an errno. */
static int emit(struct csv_writer *w, const void *p, size_t n)
{
    sha256_update(&w->hash, p, n);
    if (n && fwrite(p, 1, n, w->f) != n)
        return errno ? errno : EIO;
    return 0;
}

/* ISA-L's deflate, from libisal.so.2 when it is installed (NULL functions otherwise). */
static struct {
    int tried;
    void (*init)(struct isal_zstream *);
    int (*deflate)(struct isal_zstream *);
} isal;

static int isal_load(void)
{
    if (getenv("LSCAT_NO_ISAL")) /* the zlib path, for tests */
        return 0;
    if (!isal.tried) { /* once: the library stays loaded */
        void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
        if (h) {
            *(void **)&isal.init = dlsym(h, "isal_deflate_init");
            *(void **)&isal.deflate = dlsym(h, "isal_deflate");
        }
        isal.tried = 1;
    }
    return isal.init && isal.deflate;
}

static int zlib_block(struct csv_writer *w, const void *p, size_t n, int last)
{
    z_stream *z = w->zl;
    z->next_in = (Bytef *)p;
    z->avail_in = (uInt)n;
    buf_grow(&w->out, FLUSH_BYTES + 65536);
    int rc;
    do {
        z->next_out = (Bytef *)w->out.data;
        z->avail_out = FLUSH_BYTES + 65536;
        rc = deflate(z, last ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR)
            return EIO;
        int err = emit(w, w->out.data, FLUSH_BYTES + 65536 - z->avail_out);
        if (err)
            return err;
    } while (z->avail_out == 0 || (last && rc != Z_STREAM_END));
    return 0;
}

static int gzip_block(struct csv_writer *w, const void *p, size_t n, int last)
{
    if (w->zl)
        return zlib_block(w, p, n, last);
    struct isal_zstream *z = w->gz;
    z->next_in = (uint8_t *)p;
    z->avail_in = (uint32_t)n;
    z->end_of_stream = last;
    buf_grow(&w->out, FLUSH_BYTES + 65536);
    do {
        z->next_out = (uint8_t *)w->out.data;
        z->avail_out = (uint32_t)(FLUSH_BYTES + 65536);
        if (isal.deflate(z) != COMP_OK)
            return EIO;
        int err = emit(w, w->out.data, FLUSH_BYTES + 65536 - z->avail_out);
        if (err)
            return err;
    } while (z->avail_in > 0 || (last && z->internal_state.state != ZSTATE_END));
    return 0;
}

static int zstd_block(struct csv_writer *w, const void *p, size_t n, int last)
{
    ZSTD_inBuffer in = { p, n, 0 };
    size_t cap = ZSTD_CStreamOutSize(), left;
    buf_grow(&w->out, cap);
    do {
        ZSTD_outBuffer o = { w->out.data, cap, 0 };
        left = ZSTD_compressStream2(w->zs, &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left))
            return EIO;
        int err = emit(w, w->out.data, o.pos);
        if (err)
            return err;
    } while (last ? left != 0 : in.pos < in.size);
    return 0;
}

/* One block of CSV text (last: the end of the stream) into the file, as configured. */
static int put_block(struct csv_writer *w, const void *p, size_t n, int last)
{
    if (w->compress == CSV_GZIP)
        return gzip_block(w, p, n, last);
    if (w->compress == CSV_ZSTD)
        return zstd_block(w, p, n, last);
    return emit(w, p, n);
}

static void *writer_main(void *arg)
{
    struct csv_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->has_pending && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->has_pending)
            break;
        pthread_mutex_unlock(&w->mu);
        int err = put_block(w, w->pending.data, w->pending.len, 0);
        pthread_mutex_lock(&w->mu);
        if (err && !w->write_errno)
            w->write_errno = err;
        buf_reset(&w->pending);
        w->has_pending = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Hand the filled buffer to the writer thread (after it finished the previous one). */
static int hand_over(struct csv_writer *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->has_pending)
        pthread_cond_wait(&w->cv, &w->mu);
    int err = w->write_errno;
    struct buf t = w->pending;
    w->pending = w->b;
    w->b = t;
    w->has_pending = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (err)
        return lscat_error_set("cannot write '%s': %s (disk full?)", w->tmp, strerror(err));
    return 0;
}

/* Stop the thread after its last block; returns its write error, if any. */
static int stop_thread(struct csv_writer *w)
{
    if (!w->threaded)
        return 0;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    w->threaded = 0;
    if (w->write_errno)
        return lscat_error_set("cannot write '%s': %s (disk full?)", w->tmp,
                               strerror(w->write_errno));
    return 0;
}

static void sep(struct csv_writer *w)
{
    if (w->col++ > 0)
        buf_addch(&w->b, ',');
}

static int flush(struct csv_writer *w)
{
    if (w->b.len == 0)
        return 0;
    return hand_over(w);
}

static int start_compression(struct csv_writer *w)
{
    if (w->compress == CSV_GZIP && !isal_load()) {
        w->zl = xcalloc(1, sizeof(*w->zl));
        if (deflateInit2(w->zl, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(w->zl);
            w->zl = NULL;
            return lscat_error_set("cannot start gzip for '%s'", w->path);
        }
    } else if (w->compress == CSV_GZIP) {
        w->gz = xcalloc(1, sizeof(*w->gz));
        isal.init(w->gz);
        w->gz->level = GZIP_LEVEL;
        w->gz->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
        w->gz->level_buf = w->gz_level_buf = xmalloc(ISAL_DEF_LVL1_DEFAULT);
        w->gz->gzip_flag = IGZIP_GZIP;
    } else if (w->compress == CSV_ZSTD) {
        w->zs = ZSTD_createCCtx();
        if (!w->zs || ZSTD_isError(ZSTD_CCtx_setParameter(w->zs, ZSTD_c_compressionLevel,
                                                          ZSTD_LEVEL)))
            return lscat_error_set("cannot start zstd for '%s'", w->path);
    }
    return 0;
}

static void free_writer(struct csv_writer *w)
{
    free(w->gz);
    free(w->gz_level_buf);
    if (w->zl)
        deflateEnd(w->zl);
    free(w->zl);
    ZSTD_freeCCtx(w->zs);
    buf_release(&w->out);
    buf_release(&w->b);
    buf_release(&w->pending);
    buf_release(&w->scratch);
    free(w->path);
    free(w->tmp);
    free(w);
}

int csv_writer_open(struct csv_writer **out, const char *path, const char *const *names,
                    int ncols, enum csv_compress compress)
{
    *out = NULL;
    struct csv_writer *w = xcalloc(1, sizeof(*w));
    w->path = xstrdup(path);
    w->tmp = xasprintf("%s.tmp", path);
    buf_init(&w->b, FLUSH_BYTES + 4096);
    buf_init(&w->pending, FLUSH_BYTES + 4096);
    buf_init(&w->scratch, 0);
    buf_init(&w->out, 0);
    sha256_init(&w->hash);
    w->compress = compress;
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        int rc = lscat_error_set("cannot create '%s': %s", w->tmp, strerror(errno));
        csv_writer_abort(w);
        return rc;
    }
    if (start_compression(w) < 0) {
        csv_writer_abort(w);
        return LSCAT_ERR;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
        csv_writer_abort(w);
        return lscat_error_set("cannot start the writer thread for '%s'", path);
    }
    w->threaded = 1;
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
    if (w->b.len - w->row_start > w->max_row)
        w->max_row = w->b.len - w->row_start;
    int rc = w->b.len >= FLUSH_BYTES ? flush(w) : 0;
    w->row_start = w->b.len;
    return rc;
}

size_t csv_writer_max_row_bytes(const struct csv_writer *w)
{
    return w->max_row;
}

int csv_writer_close(struct csv_writer *w, char sha256_hex_out[65])
{
    int rc = flush(w);
    int trc = stop_thread(w);
    if (rc == 0)
        rc = trc;
    int err = rc == 0 && w->compress ? put_block(w, NULL, 0, 1) : 0; /* end the stream */
    if (err)
        rc = lscat_error_set("cannot write '%s': %s", w->tmp, strerror(err));
    if (sha256_hex_out) {
        unsigned char d[32];
        sha256_final(&w->hash, d);
        sha256_to_hex(sha256_hex_out, d);
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
    free_writer(w);
    return rc;
}

void csv_writer_abort(struct csv_writer *w)
{
    if (!w)
        return;
    stop_thread(w);
    if (w->f) {
        fclose(w->f);
        unlink(w->tmp);
    }
    free_writer(w);
}
