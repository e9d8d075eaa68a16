/* Streaming decompression of GH Archive hours: gzip (all members) through ISA-L's igzip when
 * built with it (the fast path: scanning is bound by inflate speed), zlib otherwise, or plain
 * bytes. Constant memory: one input buffer, the caller owns the output buffer. */
#ifndef LSCAT_HARVEST_INFLATE_H
#define LSCAT_HARVEST_INFLATE_H

#include <stddef.h>
#include <stdint.h>

struct inflate_stream;

enum inflate_mode { INFLATE_AUTO = 0, INFLATE_GZIP = 1, INFLATE_PLAIN = 2 };

/* Read from `fd` (not closed by the stream). INFLATE_AUTO treats the input as gzip when it
 * starts with the gzip magic and as plain bytes otherwise. *out belongs to the caller. */
int inflate_stream_new(struct inflate_stream **out, int fd, enum inflate_mode mode);
void inflate_stream_free(struct inflate_stream *s);

/* Fill up to `cap` bytes of `dst`. Returns the number of bytes (0 at the clean end of the
 * input) or LSCAT_EINVALID with a message ("truncated gzip", "corrupt deflate data",
 * "not gzip", "crc mismatch") or LSCAT_ERR on a read error. */
long inflate_stream_read(struct inflate_stream *s, char *dst, size_t cap);

/* Bytes consumed from the fd so far. */
uint64_t inflate_stream_bytes_in(const struct inflate_stream *s);
/* "isa-l" or "zlib": the inflater compiled in. */
const char *inflate_backend(void);

#endif
