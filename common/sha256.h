/* SHA-256 (FIPS 180-4). Content hashes name stored files and isolated kernels, so that forks
 * and copies are stored and measured once. */
#ifndef LSCAT_SHA256_H
#define LSCAT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t len_bytes;
    unsigned char block[64];
    size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, unsigned char digest[32]);
/* One call: the hex digest (64 chars + NUL) of data. */
void sha256_hex(char out[65], const void *data, size_t len);
/* Hex of a finished digest. */
void sha256_to_hex(char out[65], const unsigned char digest[32]);

#endif
