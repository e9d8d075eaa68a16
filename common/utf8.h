/* UTF-8 validation, one definition for the whole project: JSON escaping (common/buf.c), the
 * export's lossless source text (dataset/text.c) and isolate's rewriting of bytes nvcc
 * rejects (isolate/srctext.c) must agree on what is valid. */
#ifndef LSCAT_UTF8_H
#define LSCAT_UTF8_H

#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at s, given n > 0 bytes left; 0 when it is not
 * one: a stray continuation byte, a truncated sequence, an overlong encoding, a surrogate or a
 * code point above U+10FFFF. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

#endif
