/* Text helpers for the writers: kernels' source files come from untrusted repositories and
 * are not always UTF-8; numbers in CSV must read back to the same double. */
#include "dataset/text.h"

#include "common/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int text_utf8_valid(const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t i = 0;
    while (i < len) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t l = utf8_seq_len(p + i, len - i);
        if (!l)
            return 0;
        i += l;
    }
    return 1;
}

void text_utf8_repair(struct buf *out, const void *s, size_t len)
{
    const unsigned char *p = s;
    size_t i = 0;
    while (i < len) {
        size_t l = utf8_seq_len(p + i, len - i);
        if (l) {
            buf_add(out, p + i, l);
            i += l;
        } else {
            buf_addch(out, 0xC0 | (p[i] >> 6));
            buf_addch(out, 0x80 | (p[i] & 0x3F));
            i++;
        }
    }
}

void text_base64(struct buf *out, const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    buf_grow(out, (len + 2) / 3 * 4);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        char q[4] = { tab[(v >> 18) & 63], tab[(v >> 12) & 63],
                      i + 1 < len ? tab[(v >> 6) & 63] : '=', i + 2 < len ? tab[v & 63] : '=' };
        buf_add(out, q, 4);
    }
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* `n` decimal digits at *p (advanced), or -1. */
static int digits(const char **p, const char *end, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (*p >= end || **p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

/* The zone suffix at p: Z, +HH:MM, -HHMM or nothing; its offset east of UTC in seconds. */
static int zone_offset(int64_t *out, const char *p, const char *end)
{
    *out = 0;
    if (p == end || (*p == 'Z' && p + 1 == end))
        return 0;
    if (*p != '+' && *p != '-')
        return -1;
    int sign = *p++ == '-' ? -1 : 1;
    int h = digits(&p, end, 2);
    if (p < end && *p == ':')
        p++;
    int m = digits(&p, end, 2);
    if (h < 0 || m < 0 || h > 23 || m > 59 || p != end)
        return -1;
    *out = sign * (h * 3600 + m * 60);
    return 0;
}

static int time_of_day(int64_t *us, const char **pp, const char *end)
{
    const char *p = *pp;
    int h = digits(&p, end, 2), mi = -1, sec = 0, frac = 0;
    if (p < end && *p == ':')
        p++, mi = digits(&p, end, 2);
    if (mi >= 0 && p < end && *p == ':') {
        p++;
        sec = digits(&p, end, 2);
        if (p < end && (*p == '.' || *p == ',')) {
            int nd = 0;
            for (p++; p < end && *p >= '0' && *p <= '9'; p++, nd++)
                if (nd < 6)
                    frac = frac * 10 + (*p - '0');
            if (nd == 0)
                return -1;
            for (; nd < 6; nd++)
                frac *= 10;
        }
    }
    if (h < 0 || mi < 0 || sec < 0 || h > 23 || mi > 59 || sec > 60)
        return -1;
    *us = ((int64_t)h * 3600 + mi * 60 + sec) * 1000000 + frac;
    *pp = p;
    return 0;
}

int text_timestamp_us(int64_t *out, const char *s, size_t len)
{
    const char *p = s, *end = s + len;
    int y = digits(&p, end, 4), mo, d;
    if (y < 0 || p >= end || *p++ != '-' || (mo = digits(&p, end, 2)) < 1 || mo > 12 ||
        p >= end || *p++ != '-' || (d = digits(&p, end, 2)) < 1 || d > 31)
        return -1;
    int64_t us = 0, off = 0;
    if (p < end && (*p == 'T' || *p == ' ')) {
        p++;
        if (time_of_day(&us, &p, end) < 0)
            return -1;
    }
    if (zone_offset(&off, p, end) < 0)
        return -1;
    *out = days_from_civil(y, mo, d) * 86400000000LL + us - off * 1000000;
    return 0;
}

void text_comma_json(struct buf *out, const char *s, size_t len)
{
    buf_addch(out, '[');
    for (size_t i = 0, start = 0; len && i <= len; i++) {
        if (i < len && s[i] != ',')
            continue;
        if (start)
            buf_addch(out, ',');
        buf_add_json_str(out, s + start, i - start);
        start = i + 1;
    }
    buf_addch(out, ']');
}
