/* Internal to the Parquet writer: bit packing and the per-column-chunk dictionary builder.
 * (parquet_rle_hybrid, the public encoder, is declared in parquet.h.) */
#ifndef LSCAT_PARQUET_ENCODE_H
#define LSCAT_PARQUET_ENCODE_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

/* A dictionary gives up (the chunk falls back to PLAIN) past these. */
#define PARQUET_DICT_MAX_ENTRIES 65536
#define PARQUET_DICT_MAX_BYTES (1u << 20)

/* Distinct values in PLAIN encoding (the dictionary page), a hash table over them, and one
 * index per value added. `on` drops to 0 when the dictionary gave up; adds are then no-ops. */
struct parquet_dict {
    int on;
    int fixed_bytes;     /* 4 or 8 for INT32/INT64/DOUBLE; 0 for byte arrays */
    struct buf values;   /* the dictionary page's PLAIN bytes */
    uint32_t *off;       /* offset of each entry in values */
    size_t off_cap;
    uint32_t n;          /* distinct entries */
    uint32_t *slots;     /* open addressing: entry + 1, 0 = empty */
    size_t nslots;
    uint32_t *idx;       /* dictionary index of every value added */
    size_t nidx, idx_cap;
};

void parquet_dict_init(struct parquet_dict *d, int fixed_bytes);
void parquet_dict_release(struct parquet_dict *d);
/* Empty it and switch it back on (start of a row group). */
void parquet_dict_reset(struct parquet_dict *d);
/* Add one value (its PLAIN bytes without length prefix for byte arrays). Never fails. */
int parquet_dict_add(struct parquet_dict *d, const void *data, size_t len);

/* PLAIN booleans: bit-packed, LSB first. */
void parquet_pack_bools(struct buf *out, const uint8_t *v, size_t n);
/* Bits needed for values 0..max_value (0 for 0). */
int parquet_bit_width(uint32_t max_value);

#endif
