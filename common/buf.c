/* Growable byte buffer. Every string lscat builds (SQL, JSON, paths, child output) goes
 * through here so that size caps and NUL termination are handled in one place. */
#include "common/buf.h"

#include "common/error.h"
#include "common/utf8.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char buf_empty[1];

void buf_init(struct buf *b, size_t hint_bytes)
{
    b->data = buf_empty;
    b->len = 0;
    b->alloc = 0;
    b->cap_bytes = 0;
    if (hint_bytes)
        buf_grow(b, hint_bytes);
}

void buf_release(struct buf *b)
{
    if (b->alloc)
        free(b->data);
    size_t cap = b->cap_bytes;
    buf_init(b, 0);
    b->cap_bytes = cap;
}

char *buf_detach(struct buf *b, size_t *len_out)
{
    char *p = b->alloc ? b->data : xstrdup("");
    if (len_out)
        *len_out = b->len;
    size_t cap = b->cap_bytes;
    buf_init(b, 0);
    b->cap_bytes = cap;
    return p;
}

void buf_reset(struct buf *b)
{
    buf_setlen(b, 0);
}

int buf_grow(struct buf *b, size_t extra)
{
    if (b->cap_bytes && (extra > b->cap_bytes || b->len > b->cap_bytes - extra))
        return lscat_error_set("buffer limit of %zu bytes reached", b->cap_bytes);
    size_t need = b->len + extra + 1;
    if (need <= b->alloc)
        return 0;
    size_t n = b->alloc ? b->alloc : 64;
    while (n < need)
        n = n < ((size_t)1 << 40) ? n * 2 : need;
    if (b->alloc) {
        b->data = xrealloc(b->data, n);
    } else {
        b->data = xmalloc(n);
        b->data[0] = '\0';
    }
    b->alloc = n;
    return 0;
}

void buf_setlen(struct buf *b, size_t len)
{
    if (!b->alloc)
        return;
    b->len = len < b->alloc ? len : b->alloc - 1;
    b->data[b->len] = '\0';
}

int buf_add(struct buf *b, const void *data, size_t len)
{
    if (buf_grow(b, len) < 0)
        return LSCAT_ERR;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    if (b->alloc)
        b->data[b->len] = '\0';
    return 0;
}

int buf_adds(struct buf *b, const char *s)
{
    return buf_add(b, s, strlen(s));
}

int buf_addch(struct buf *b, int c)
{
    char ch = (char)c;
    return buf_add(b, &ch, 1);
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return lscat_error_set("bad format string '%s'", fmt);
    if (buf_grow(b, (size_t)n) < 0)
        return LSCAT_ERR;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vaddf(b, fmt, ap);
    va_end(ap);
    return rc;
}

int buf_add_json_str(struct buf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    if (buf_addch(b, '"') < 0)
        return LSCAT_ERR;
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        int rc = 0;
        size_t seq = utf8_seq_len(p + i, len - i);
        if (c == '"' || c == '\\') {
            char esc[2] = { '\\', (char)c };
            rc = buf_add(b, esc, 2);
        } else if (c == '\n') {
            rc = buf_add(b, "\\n", 2);
        } else if (c == '\t') {
            rc = buf_add(b, "\\t", 2);
        } else if (c == '\r') {
            rc = buf_add(b, "\\r", 2);
        } else if (c < 0x20 || c == 0x7F || seq == 0) {
            rc = buf_addf(b, "\\u%04x", c);
            seq = 1;
        } else {
            rc = buf_add(b, p + i, seq);
        }
        if (rc < 0)
            return LSCAT_ERR;
        i += seq ? seq : 1;
    }
    return buf_addch(b, '"');
}

void buf_rtrim(struct buf *b)
{
    while (b->len && (b->data[b->len - 1] == ' ' || b->data[b->len - 1] == '\n' ||
                      b->data[b->len - 1] == '\t' || b->data[b->len - 1] == '\r'))
        b->len--;
    if (b->alloc)
        b->data[b->len] = '\0';
}

int buf_read_file(struct buf *b, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return lscat_error_setc(errno == ENOENT ? LSCAT_ENOTFOUND : LSCAT_ERR,
                                "cannot open '%s': %s", path, strerror(errno));
    int rc = 0;
    for (;;) {
        size_t chunk = 65536;
        if (b->cap_bytes) {
            if (b->len >= b->cap_bytes) {
                char probe;
                ssize_t n = read(fd, &probe, 1);
                if (n > 0)
                    rc = lscat_error_set("'%s' is larger than the %zu-byte limit", path,
                                         b->cap_bytes);
                break;
            }
            if (chunk > b->cap_bytes - b->len)
                chunk = b->cap_bytes - b->len;
        }
        buf_grow(b, chunk);
        ssize_t n = read(fd, b->data + b->len, chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = lscat_error_set("cannot read '%s': %s", path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        b->len += (size_t)n;
        b->data[b->len] = '\0';
    }
    close(fd);
    return rc;
}
