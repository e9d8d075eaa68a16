/* Streaming gzip decompression for GH Archive hours. ISA-L's igzip inflates about 5x faster
 * than zlib on this kind of data, so it is the default; zlib is the fallback where ISA-L is
 * missing. Concatenated gzip members are decompressed one after the other (like gzip -d). */
#include "harvest/inflate.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef LSCAT_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

enum { IN_CAP = 1 << 20 };

struct inflate_stream {
    int fd;
    int plain;
    int eof;          /* the fd is exhausted */
    int member_done;  /* the current gzip member ended; another may follow */
    int started;      /* at least one member was started */
    uint64_t bytes_in;
    unsigned char *in;
    size_t in_len, in_pos;
#ifdef LSCAT_HAVE_ISAL
    struct inflate_state st;
#else
    z_stream z;
#endif
};

const char *inflate_backend(void)
{
#ifdef LSCAT_HAVE_ISAL
    return "isa-l";
#else
    return "zlib";
#endif
}

static int refill(struct inflate_stream *s)
{
    if (s->in_pos < s->in_len || s->eof)
        return 0;
    ssize_t n;
    do
        n = read(s->fd, s->in, IN_CAP);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return lscat_error_set("read error: %s", strerror(errno));
    s->in_len = (size_t)n;
    s->in_pos = 0;
    s->bytes_in += (uint64_t)n;
    if (n == 0)
        s->eof = 1;
    return 0;
}

static void member_start(struct inflate_stream *s)
{
#ifdef LSCAT_HAVE_ISAL
    isal_inflate_init(&s->st);
    s->st.crc_flag = ISAL_GZIP;
#else
    inflateReset(&s->z);
#endif
    s->member_done = 0;
    s->started = 1;
}

int inflate_stream_new(struct inflate_stream **out, int fd, enum inflate_mode mode)
{
    struct inflate_stream *s = xcalloc(1, sizeof(*s));
    s->fd = fd;
    s->in = xmalloc(IN_CAP);
#ifndef LSCAT_HAVE_ISAL
    if (inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK) {
        free(s->in);
        free(s);
        return lscat_error_set("zlib: cannot initialise inflate");
    }
#endif
    if (refill(s) < 0) {
        inflate_stream_free(s);
        return LSCAT_ERR;
    }
    int magic = s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b;
    if (mode == INFLATE_PLAIN || (mode == INFLATE_AUTO && !magic && s->in_len > 0))
        s->plain = 1;
    else if (mode == INFLATE_GZIP && s->in_len > 0 && !magic) {
        inflate_stream_free(s);
        return lscat_error_setc(LSCAT_EINVALID, "not gzip (first bytes are not 1f 8b)");
    }
    s->member_done = 1; /* the first read starts a member */
    *out = s;
    return 0;
}

void inflate_stream_free(struct inflate_stream *s)
{
    if (!s)
        return;
#ifndef LSCAT_HAVE_ISAL
    inflateEnd(&s->z);
#endif
    free(s->in);
    free(s);
}

uint64_t inflate_stream_bytes_in(const struct inflate_stream *s)
{
    return s->bytes_in;
}

static long read_plain(struct inflate_stream *s, char *dst, size_t cap)
{
    if (s->in_pos < s->in_len) {
        size_t n = s->in_len - s->in_pos < cap ? s->in_len - s->in_pos : cap;
        memcpy(dst, s->in + s->in_pos, n);
        s->in_pos += n;
        return (long)n;
    }
    if (s->eof)
        return 0;
    ssize_t n;
    do
        n = read(s->fd, dst, cap);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return lscat_error_set("read error: %s", strerror(errno));
    s->bytes_in += (uint64_t)n;
    if (n == 0)
        s->eof = 1;
    return n;
}

/* Between members: start the next one if gzip bytes follow. Returns 1 when one started, 0 at
 * the end of the input (trailing zero padding is accepted, like gzip). */
static int next_member(struct inflate_stream *s)
{
    if (refill(s) < 0)
        return LSCAT_ERR;
    if (s->in_pos >= s->in_len) {
        if (!s->started)
            return lscat_error_setc(LSCAT_EINVALID, "empty file");
        return 0;
    }
    if (s->in[s->in_pos] != 0x1f) {
        if (!s->started)
            return lscat_error_setc(LSCAT_EINVALID, "not gzip");
        for (size_t i = s->in_pos; i < s->in_len; i++)
            if (s->in[i])
                return lscat_error_setc(LSCAT_EINVALID, "trailing garbage after gzip data");
        s->in_pos = s->in_len;
        return next_member(s);
    }
    member_start(s);
    return 1;
}

#ifdef LSCAT_HAVE_ISAL
static int inflate_step(struct inflate_stream *s, char *dst, size_t cap, size_t *produced)
{
    s->st.next_in = s->in + s->in_pos;
    s->st.avail_in = (uint32_t)(s->in_len - s->in_pos);
    s->st.next_out = (uint8_t *)dst;
    s->st.avail_out = (uint32_t)cap;
    int rc = isal_inflate(&s->st);
    s->in_pos = s->in_len - s->st.avail_in;
    *produced = cap - s->st.avail_out;
    if (rc == ISAL_INCORRECT_CHECKSUM)
        return lscat_error_setc(LSCAT_EINVALID, "gzip crc mismatch (corrupt file)");
    if (rc == ISAL_INVALID_WRAPPER || rc == ISAL_UNSUPPORTED_METHOD)
        return lscat_error_setc(LSCAT_EINVALID, "invalid gzip header");
    if (rc < 0)
        return lscat_error_setc(LSCAT_EINVALID, "corrupt deflate data (isa-l code %d)", rc);
    if (s->st.block_state == ISAL_BLOCK_FINISH)
        s->member_done = 1;
    return 0;
}
#else
static int inflate_step(struct inflate_stream *s, char *dst, size_t cap, size_t *produced)
{
    s->z.next_in = s->in + s->in_pos;
    s->z.avail_in = (uInt)(s->in_len - s->in_pos);
    s->z.next_out = (Bytef *)dst;
    s->z.avail_out = (uInt)cap;
    int rc = inflate(&s->z, Z_NO_FLUSH);
    s->in_pos = s->in_len - s->z.avail_in;
    *produced = cap - s->z.avail_out;
    if (rc == Z_STREAM_END)
        s->member_done = 1;
    else if (rc == Z_DATA_ERROR)
        return lscat_error_setc(LSCAT_EINVALID, "corrupt gzip data (%s)",
                                s->z.msg ? s->z.msg : "zlib");
    else if (rc != Z_OK && rc != Z_BUF_ERROR)
        return lscat_error_setc(LSCAT_EINVALID, "zlib inflate error %d", rc);
    return 0;
}
#endif

long inflate_stream_read(struct inflate_stream *s, char *dst, size_t cap)
{
    if (s->plain)
        return read_plain(s, dst, cap);
    if (cap > (1u << 30))
        cap = 1u << 30;
    for (;;) {
        if (s->member_done) {
            int rc = next_member(s);
            if (rc <= 0)
                return rc;
        }
        if (refill(s) < 0)
            return LSCAT_ERR;
        /* step even without input: the inflater may still hold output from the last bytes */
        size_t produced = 0;
        if (inflate_step(s, dst, cap, &produced) < 0)
            return LSCAT_EINVALID;
        if (produced > 0)
            return (long)produced;
        if (!s->member_done && s->in_pos >= s->in_len && s->eof)
            return lscat_error_setc(LSCAT_EINVALID, "truncated gzip (input ends inside a member)");
    }
}
