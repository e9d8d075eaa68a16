/* Small text helpers shared by the dataset writers: UTF-8 validation and lossless-readable
 * repair, base64, and the shortest decimal form of a double that reads back exactly. */
#ifndef LSCAT_DATASET_TEXT_H
#define LSCAT_DATASET_TEXT_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

/* 1 when `s` (len bytes) is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF). */
int text_utf8_valid(const void *s, size_t len);
/* Append `s` to `out` as UTF-8: valid sequences are copied, every byte of an invalid one
 * becomes the character U+0080..U+00FF of that byte's value (its Latin-1 reading), so the
 * text stays readable; the exact bytes are kept elsewhere (kernels.source_raw). */
void text_utf8_repair(struct buf *out, const void *s, size_t len);
/* Append standard base64 (RFC 4648, with padding). */
void text_base64(struct buf *out, const void *data, size_t len);
/* Parse an ISO-8601 time (`2026-11-21T08:00:00Z`; also `YYYY-MM-DD`, a space for the `T`,
 * fractional seconds up to microseconds, no zone = UTC, `Z` or `+HH:MM`/`-HHMM`) into
 * microseconds since 1970-01-01T00:00:00Z. Returns 0, or -1 when `s` (len bytes) is not one. */
int text_timestamp_us(int64_t *out, const char *s, size_t len);
/* Append the comma-separated words of `s` as a JSON array of strings ("" gives []). */
void text_comma_json(struct buf *out, const char *s, size_t len);
/* Write the shortest decimal that strtod reads back to exactly `v` (Grisu2, dtoa.c; %g-like
 * layout: "1000", "0.1", "1.5e+300") into out, NUL-terminated, at most 32 bytes; "nan",
 * "inf", "-inf" for the specials. Thread-safe. Returns the length. */
int text_double(char out[32], double v);

#endif
