/* Parquet's value encodings that need more than a memcpy: the RLE/bit-packed hybrid (used
 * for definition levels and dictionary indices), LSB-first bit packing, and the hash table
 * that builds a column chunk's dictionary. Kept apart from the file writer (parquet.c). */
#include "dataset/parquet_encode.h"

#include "common/xalloc.h"
#include "dataset/parquet.h"
#include "dataset/thrift.h"

#include <stdlib.h>
#include <string.h>

static uint32_t get(const void *v, size_t elem_bytes, size_t i)
{
    if (elem_bytes == 1)
        return ((const uint8_t *)v)[i];
    return ((const uint32_t *)v)[i];
}

/* Length of the run of equal values starting at i, counting at most `limit`. */
static size_t run_at(const void *v, size_t eb, size_t n, size_t i, size_t limit)
{
    uint32_t x = get(v, eb, i);
    size_t r = 1;
    while (i + r < n && r < limit && get(v, eb, i + r) == x)
        r++;
    return r;
}

static void put_rle_run(struct buf *out, uint32_t value, size_t count, int bw)
{
    thrift_put_uvarint(out, (uint64_t)count << 1);
    for (int byte = 0; byte < (bw + 7) / 8; byte++)
        buf_addch(out, (int)((value >> (8 * byte)) & 0xFF));
}

/* Bit-pack values [start, start + groups*8) (past n: zeros) LSB first. */
static void put_packed_run(struct buf *out, const void *v, size_t eb, size_t n, size_t start,
                           size_t groups, int bw)
{
    thrift_put_uvarint(out, ((uint64_t)groups << 1) | 1);
    uint64_t acc = 0;
    int nbits = 0;
    for (size_t i = start; i < start + groups * 8; i++) {
        uint64_t x = i < n ? get(v, eb, i) : 0;
        acc |= x << nbits;
        nbits += bw;
        while (nbits >= 8) {
            buf_addch(out, (int)(acc & 0xFF));
            acc >>= 8;
            nbits -= 8;
        }
    }
    if (nbits > 0)
        buf_addch(out, (int)(acc & 0xFF)); /* groups*8*bw is a multiple of 8: never reached */
}

void parquet_rle_hybrid(struct buf *out, const void *v, size_t elem_bytes, size_t n,
                        int bit_width)
{
    size_t i = 0;
    while (i < n) {
        size_t r = run_at(v, elem_bytes, n, i, SIZE_MAX);
        if (r >= 8) {
            put_rle_run(out, get(v, elem_bytes, i), r, bit_width);
            i += r;
            continue;
        }
        /* Bit-pack groups of 8 until a run of 8 or more begins at a group boundary. */
        size_t j = i, groups = 0;
        do {
            j += 8;
            groups++;
        } while (j < n && groups < 63 && run_at(v, elem_bytes, n, j, 8) < 8);
        put_packed_run(out, v, elem_bytes, n, i, groups, bit_width);
        i = j < n ? j : n;
    }
}

void parquet_pack_bools(struct buf *out, const uint8_t *v, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        int byte = 0;
        for (size_t k = 0; k < 8 && i + k < n; k++)
            byte |= (v[i + k] ? 1 : 0) << k;
        buf_addch(out, byte);
    }
}

int parquet_bit_width(uint32_t max_value)
{
    int bw = 0;
    while (bw < 32 && (max_value >> bw) != 0)
        bw++;
    return bw;
}

/* ---------------------------------------------------------------- dictionary */

static uint64_t hash_bytes(const void *p, size_t len)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < len; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

void parquet_dict_init(struct parquet_dict *d, int fixed_bytes)
{
    memset(d, 0, sizeof(*d));
    buf_init(&d->values, 0);
    d->fixed_bytes = fixed_bytes;
    d->on = 1;
}

void parquet_dict_release(struct parquet_dict *d)
{
    buf_release(&d->values);
    free(d->off);
    free(d->slots);
    free(d->idx);
    int fixed = d->fixed_bytes;
    memset(d, 0, sizeof(*d));
    buf_init(&d->values, 0);
    d->fixed_bytes = fixed;
}

void parquet_dict_reset(struct parquet_dict *d)
{
    parquet_dict_release(d);
    d->on = 1;
}

/* The value bytes of entry e (for byte arrays: after the 4-byte length). */
static const unsigned char *entry(const struct parquet_dict *d, uint32_t e, size_t *len)
{
    const unsigned char *p = (const unsigned char *)d->values.data + d->off[e];
    if (d->fixed_bytes) {
        *len = (size_t)d->fixed_bytes;
        return p;
    }
    uint32_t l;
    memcpy(&l, p, 4);
    *len = l;
    return p + 4;
}

static void rehash(struct parquet_dict *d)
{
    size_t n = d->nslots ? d->nslots * 2 : 1024;
    free(d->slots);
    d->slots = xcalloc(n, sizeof(*d->slots));
    d->nslots = n;
    for (uint32_t e = 0; e < d->n; e++) {
        size_t len;
        const unsigned char *p = entry(d, e, &len);
        size_t s = hash_bytes(p, len) & (n - 1);
        while (d->slots[s])
            s = (s + 1) & (n - 1);
        d->slots[s] = e + 1;
    }
}

int parquet_dict_add(struct parquet_dict *d, const void *data, size_t len)
{
    if (!d->on)
        return 0;
    if (len > PARQUET_DICT_MAX_BYTES / 4 || (size_t)(d->n + 1) * 2 > d->nslots) {
        if (len > PARQUET_DICT_MAX_BYTES / 4) {
            parquet_dict_release(d); /* values this long are not worth a dictionary */
            return 0;
        }
        rehash(d);
    }
    size_t s = hash_bytes(data, len) & (d->nslots - 1);
    for (uint32_t e; (e = d->slots[s]) != 0; s = (s + 1) & (d->nslots - 1)) {
        size_t elen;
        const unsigned char *p = entry(d, e - 1, &elen);
        if (elen == len && memcmp(p, data, len) == 0) {
            XGROW(d->idx, d->nidx + 1, d->idx_cap);
            d->idx[d->nidx++] = e - 1;
            return 0;
        }
    }
    if (d->n >= PARQUET_DICT_MAX_ENTRIES || d->values.len + len + 4 > PARQUET_DICT_MAX_BYTES) {
        parquet_dict_release(d); /* too many distinct values: PLAIN for this chunk */
        return 0;
    }
    XGROW(d->off, d->n + 1, d->off_cap);
    d->off[d->n] = (uint32_t)d->values.len;
    if (!d->fixed_bytes) {
        uint32_t l = (uint32_t)len;
        buf_add(&d->values, &l, 4);
    }
    buf_add(&d->values, data, len);
    d->slots[s] = ++d->n;
    XGROW(d->idx, d->nidx + 1, d->idx_cap);
    d->idx[d->nidx++] = d->n - 1;
    return 0;
}
