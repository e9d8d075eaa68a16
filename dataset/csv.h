/* A streaming CSV writer (RFC 4180): header row, fields separated by commas, rows ended by
 * CRLF, a field quoted (with quotes doubled) when it holds a comma, quote, CR or LF — or is
 * the empty string, so that an empty unquoted field always means null. Optional gzip (ISA-L)
 * or zstd, done with the hashing and writing in a second thread.
 * Written to "<path>.tmp" and renamed into place by csv_writer_close(). */
#ifndef LSCAT_CSV_H
#define LSCAT_CSV_H

#include <stddef.h>
#include <stdint.h>

struct csv_writer;

enum csv_compress { CSV_PLAIN = 0, CSV_GZIP, CSV_ZSTD };

/* Create the file and write the header row of `ncols` names. *out belongs to the caller. */
int csv_writer_open(struct csv_writer **out, const char *path, const char *const *names,
                    int ncols, enum csv_compress compress);
/* Fields of the current row, left to right. */
void csv_put_null(struct csv_writer *w);
void csv_put_int(struct csv_writer *w, int64_t v);
void csv_put_bool(struct csv_writer *w, int v);
/* The shortest decimal that reads back to exactly v (text_double). */
void csv_put_double(struct csv_writer *w, double v);
/* UTF-8 text (the caller repairs invalid UTF-8 first), quoted when needed. */
void csv_put_text(struct csv_writer *w, const void *s, size_t len);
/* Raw bytes as base64. */
void csv_put_base64(struct csv_writer *w, const void *data, size_t len);
/* End the row (CRLF); writes out the buffer when it is full. */
int csv_end_row(struct csv_writer *w);
/* The longest row written so far (bytes, CRLF included): what a reader's line limit needs. */
size_t csv_writer_max_row_bytes(const struct csv_writer *w);
/* Flush, fsync, rename into place, free. On failure the temporary file is removed. When
 * sha256_hex_out is given it receives the hex SHA-256 of the file (its compressed bytes, when
 * compressed), computed while writing. */
int csv_writer_close(struct csv_writer *w, char sha256_hex_out[65]);
/* Remove the temporary file and free. NULL is a no-op. */
void csv_writer_abort(struct csv_writer *w);

#endif
