/* The worker -> parent protocol of `lscat isolate`: the child that parsed a file writes framed
 * records on stdout; the parent reads them back. A record is a line "R <type> <nfields>"
 * followed by fields "<key> <len>\n<len bytes>\n", so any byte (NUL, invalid UTF-8) survives. */
#ifndef LSCAT_ISOLATE_RECORD_H
#define LSCAT_ISOLATE_RECORD_H

#include "common/buf.h"

#include <stddef.h>

#define RECORD_MAX_FIELDS 24

struct record_field {
    const char *key;   /* borrowed from the parsed input (NUL-terminated copy) */
    const char *value; /* NUL-terminated; may contain NULs before value_len */
    size_t value_len;
};

struct record {
    char type[32];
    int nfields;
    struct record_field f[RECORD_MAX_FIELDS];
};

/* Writing: record_begin(out, "kernel", 3) then exactly 3 record_field*() calls. */
void record_begin(struct buf *out, const char *type, int nfields);
void record_field(struct buf *out, const char *key, const char *value, size_t len);
void record_field_str(struct buf *out, const char *key, const char *value);
void record_field_int(struct buf *out, const char *key, long long value);

/* Reading: parse the next record from data[*pos..len) (data must be writable: keys and values
 * are NUL-terminated in place). Returns 1 with *out filled, 0 at the end, LSCAT_EINVALID when
 * the input is damaged (a worker killed mid-write). */
int record_next(struct record *out, char *data, size_t len, size_t *pos);
/* The value of `key`, or NULL. */
const struct record_field *record_get(const struct record *r, const char *key);
const char *record_str(const struct record *r, const char *key); /* "" when absent */
long long record_int(const struct record *r, const char *key);   /* 0 when absent */

#endif
