/* The one growable byte buffer (git's strbuf, curl's dynbuf). `data` is never NULL and always
 * NUL-terminated, so a buf can be printed at any time. An optional cap bounds the size: adding
 * past it fails with LSCAT_ERR instead of growing (for untrusted input). */
#ifndef LSCAT_BUF_H
#define LSCAT_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
    char *data;
    size_t len;
    size_t alloc;     /* 0 while data points at the shared empty string */
    size_t cap_bytes; /* 0 = unbounded */
};

extern char buf_empty[];
#define BUF_INIT { buf_empty, 0, 0, 0 }

void buf_init(struct buf *b, size_t hint_bytes);
void buf_release(struct buf *b);
/* Hand the bytes to the caller (who frees them) and reset the buf. Never NULL. */
char *buf_detach(struct buf *b, size_t *len_out);
void buf_reset(struct buf *b);
/* Make room for `extra` more bytes. Returns LSCAT_ERR if that would pass the cap. */
int buf_grow(struct buf *b, size_t extra);
void buf_setlen(struct buf *b, size_t len);

int buf_add(struct buf *b, const void *data, size_t len);
int buf_adds(struct buf *b, const char *s);
int buf_addch(struct buf *b, int c);
int buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap);
/* Append `s` as a JSON string literal, quotes included. Invalid UTF-8 bytes become \u00XX
 * escapes of the byte (Latin-1 reading), so the output is always valid JSON. */
int buf_add_json_str(struct buf *b, const char *s, size_t len);
/* Remove trailing whitespace. */
void buf_rtrim(struct buf *b);

/* Read a whole file into `b` (appending). Fails if it is larger than b's cap. */
int buf_read_file(struct buf *b, const char *path);

#endif
