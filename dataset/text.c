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
