/* Framed records between the parse worker (a child process) and the isolate driver. Length
 * prefixes rather than escaping keep the format trivial and byte-exact; a damaged tail (the
 * child was killed while writing) is detected and reported instead of misread. */
#include "common/record.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void record_begin(struct buf *out, const char *type, int nfields)
{
    buf_addf(out, "R %s %d\n", type, nfields);
}

void record_field(struct buf *out, const char *key, const char *value, size_t len)
{
    buf_addf(out, "%s %zu\n", key, len);
    buf_add(out, value, len);
    buf_addch(out, '\n');
}

void record_field_str(struct buf *out, const char *key, const char *value)
{
    record_field(out, key, value ? value : "", value ? strlen(value) : 0);
}

void record_field_int(struct buf *out, const char *key, long long value)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%lld", value);
    record_field(out, key, tmp, (size_t)n);
}

/* Reads one '\n'-terminated header line in place; returns its start or NULL. */
static char *take_line(char *data, size_t len, size_t *pos)
{
    char *start = data + *pos;
    char *nl = memchr(start, '\n', len - *pos);
    if (!nl)
        return NULL;
    *nl = '\0';
    *pos = (size_t)(nl - data) + 1;
    return start;
}

int record_next(struct record *out, char *data, size_t len, size_t *pos)
{
    memset(out, 0, sizeof *out);
    if (*pos >= len)
        return 0;
    char *line = take_line(data, len, pos);
    int n = 0;
    if (!line || sscanf(line, "R %31s %d", out->type, &n) != 2 || n < 0 || n > RECORD_MAX_FIELDS)
        return lscat_error_setc(LSCAT_EINVALID, "damaged worker output near byte %zu", *pos);
    for (int i = 0; i < n; i++) {
        char *h = take_line(data, len, pos);
        char *sp = h ? strrchr(h, ' ') : NULL;
        if (!sp)
            return lscat_error_setc(LSCAT_EINVALID, "damaged worker field in '%s' record", out->type);
        *sp = '\0';
        char *end = NULL;
        unsigned long long vlen = strtoull(sp + 1, &end, 10);
        if (*end || vlen + 1 > len - *pos)
            return lscat_error_setc(LSCAT_EINVALID, "truncated worker field '%s'", h);
        out->f[i].key = h;
        out->f[i].value = data + *pos;
        out->f[i].value_len = (size_t)vlen;
        data[*pos + vlen] = '\0';
        *pos += (size_t)vlen + 1;
    }
    out->nfields = n;
    return 1;
}

const struct record_field *record_get(const struct record *r, const char *key)
{
    for (int i = 0; i < r->nfields; i++)
        if (strcmp(r->f[i].key, key) == 0)
            return &r->f[i];
    return NULL;
}

const char *record_str(const struct record *r, const char *key)
{
    const struct record_field *f = record_get(r, key);
    return f ? f->value : "";
}

long long record_int(const struct record *r, const char *key)
{
    const struct record_field *f = record_get(r, key);
    return f ? strtoll(f->value, NULL, 10) : 0;
}
