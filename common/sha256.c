/* SHA-256 after FIPS 180-4; small and dependency-free so every program can hash content.
 * On x86 CPUs with the SHA extensions the blocks go through them (several times faster: the
 * dataset export hashes every byte it writes); elsewhere through the portable rounds. */
#include "common/sha256.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SHA256_X86 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void compress_portable(struct sha256 *c, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
    uint32_t e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g; g = f; f = e; e = d + t1;
        d = cc; cc = b; b = a; a = t1 + t2;
    }
    c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
    c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

#ifdef SHA256_X86
/* Rounds 4g..4g+3 and the message schedule, as Intel's SHA extensions reference lays them out:
 * m[] holds W in four vectors, used round-robin. */
__attribute__((target("sha,sse4.1"))) static void compress_shani(struct sha256 *c,
                                                                const unsigned char *p)
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&c->h[0]), 0xB1);
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&c->h[4]), 0x1B);
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);  /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);       /* CDGH */
    __m128i abef = s0, cdgh = s1, m[4];
#pragma GCC unroll 16
    for (int g = 0; g < 16; g++) {
        __m128i *cur = &m[g & 3], *prev = &m[(g + 3) & 3], *next = &m[(g + 1) & 3];
        if (g < 4)
            *cur = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), mask);
        __m128i msg = _mm_add_epi32(*cur, _mm_loadu_si128((const __m128i *)&K[4 * g]));
        s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
        if (g >= 3 && g <= 14) {
            *next = _mm_add_epi32(*next, _mm_alignr_epi8(*cur, *prev, 4));
            *next = _mm_sha256msg2_epu32(*next, *cur);
        }
        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
        if (g >= 1 && g <= 12)
            *prev = _mm_sha256msg1_epu32(*prev, *cur);
    }
    s0 = _mm_add_epi32(s0, abef);
    s1 = _mm_add_epi32(s1, cdgh);
    tmp = _mm_shuffle_epi32(s0, 0x1B);         /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);          /* DCHG */
    _mm_storeu_si128((__m128i *)&c->h[0], _mm_blend_epi16(tmp, s1, 0xF0)); /* DCBA */
    _mm_storeu_si128((__m128i *)&c->h[4], _mm_alignr_epi8(s1, tmp, 8));    /* HGFE */
}

static void compress(struct sha256 *c, const unsigned char *p)
{
    static int has_sha = -1; /* a benign race: every thread computes the same answer */
    if (has_sha < 0) {
        __builtin_cpu_init();
        has_sha = __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1");
    }
    if (has_sha)
        compress_shani(c, p);
    else
        compress_portable(c, p);
}
#else
#define compress compress_portable
#endif

void sha256_init(struct sha256 *c)
{
    static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(c->h, iv, sizeof(iv));
    c->len_bytes = 0;
    c->fill = 0;
}

void sha256_update(struct sha256 *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    c->len_bytes += len;
    if (c->fill) {
        size_t take = 64 - c->fill < len ? 64 - c->fill : len;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        len -= take;
        if (c->fill < 64)
            return;
        compress(c, c->block);
        c->fill = 0;
    }
    for (; len >= 64; p += 64, len -= 64)
        compress(c, p);
    memcpy(c->block, p, len);
    c->fill = len;
}

void sha256_final(struct sha256 *c, unsigned char digest[32])
{
    uint64_t bits = c->len_bytes * 8;
    unsigned char pad = 0x80;
    sha256_update(c, &pad, 1);
    unsigned char zero = 0;
    while (c->fill != 56)
        sha256_update(c, &zero, 1);
    unsigned char len_be[8];
    for (int i = 0; i < 8; i++)
        len_be[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(c, len_be, 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (unsigned char)(c->h[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
        digest[4 * i + 3] = (unsigned char)c->h[i];
    }
}

void sha256_to_hex(char out[65], const unsigned char digest[32])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[64] = '\0';
}

void sha256_hex(char out[65], const void *data, size_t len)
{
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    sha256_update(&c, data, len);
    sha256_final(&c, d);
    sha256_to_hex(out, d);
}
