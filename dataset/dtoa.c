/* Shortest round-trip decimal form of a double, fast: Grisu2 (Florian Loitsch, "Printing
 * Floating-Point Numbers Quickly and Accurately with Integers", PLDI 2010), in the form of Milo
 * Yip's widely used implementation. Its output always reads back to the same double and is
 * the shortest in nearly every case. The table of cached powers of ten is computed exactly
 * with small big-integer arithmetic on first use instead of being pasted in. CSV exports
 * print millions of timings, and snprintf("%.17g") + strtod checks cost ~10x more. */
#include "dataset/text.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct diyfp {
    uint64_t f;
    int e;
};

#define NPOW 87 /* 10^-348, 10^-340, ..., 10^340 */
static uint64_t pow_f[NPOW];
static int pow_e[NPOW];
static pthread_once_t pow_once = PTHREAD_ONCE_INIT;

/* Big unsigned integers as little-endian 32-bit limbs. */
#define LIMBS 48
struct big {
    uint32_t d[LIMBS];
    int n;
};

static void big_mul_small(struct big *b, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < b->n; i++) {
        uint64_t x = (uint64_t)b->d[i] * m + carry;
        b->d[i] = (uint32_t)x;
        carry = x >> 32;
    }
    if (carry)
        b->d[b->n++] = (uint32_t)carry;
}

static void big_div_small(struct big *b, uint32_t m)
{
    uint64_t rem = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        uint64_t x = (rem << 32) | b->d[i];
        b->d[i] = (uint32_t)(x / m);
        rem = x % m;
    }
    while (b->n > 0 && b->d[b->n - 1] == 0)
        b->n--;
}

static int big_bits(const struct big *b)
{
    return b->n == 0 ? 0 : (b->n - 1) * 32 + (32 - __builtin_clz(b->d[b->n - 1]));
}

static int big_bit(const struct big *b, int i)
{
    return i < 0 ? 0 : (int)((b->d[i / 32] >> (i % 32)) & 1);
}

/* The top 64 bits of b, rounded to nearest (b has at least 66 bits); *shift = bits dropped. */
static uint64_t big_top64(const struct big *b, int *shift)
{
    int bits = big_bits(b);
    uint64_t f = 0;
    for (int i = bits - 1; i >= bits - 64; i--)
        f = (f << 1) | (uint64_t)big_bit(b, i);
    *shift = bits - 64;
    if (big_bit(b, bits - 65)) {
        if (++f == 0) {
            f = 1ULL << 63;
            (*shift)++;
        }
    }
    return f;
}

static void init_powers(void)
{
    for (int i = 0; i < NPOW; i++) {
        int k = -348 + 8 * i, shift;
        struct big b = { { 1 }, 1 };
        if (k >= 0) {
            for (int j = 0; j < k; j++)
                big_mul_small(&b, 10);
            if (big_bits(&b) < 66) { /* small powers: scale up so 64 bits can be taken */
                int up = 66 - big_bits(&b);
                for (int j = 0; j < up; j++)
                    big_mul_small(&b, 2);
                pow_f[i] = big_top64(&b, &shift);
                pow_e[i] = shift - up;
                continue;
            }
            pow_f[i] = big_top64(&b, &shift);
            pow_e[i] = shift;
        } else {
            /* floor(2^s / 10^-k), exactly, by repeated division (nested floors compose). */
            int s = (int)(-k * 3.33) + 70;
            memset(&b, 0, sizeof(b));
            b.n = s / 32 + 1;
            b.d[s / 32] = 1u << (s % 32);
            for (int j = 0; j < -k; j++)
                big_div_small(&b, 10);
            pow_f[i] = big_top64(&b, &shift);
            pow_e[i] = shift - s;
        }
    }
}

static struct diyfp mul(struct diyfp x, struct diyfp y)
{
    unsigned __int128 p = (unsigned __int128)x.f * y.f;
    uint64_t h = (uint64_t)(p >> 64), l = (uint64_t)p;
    if (l & (1ULL << 63))
        h++;
    return (struct diyfp){ h, x.e + y.e + 64 };
}

static struct diyfp normalize(struct diyfp x)
{
    int s = __builtin_clzll(x.f);
    return (struct diyfp){ x.f << s, x.e - s };
}

static void grisu_round(char *buf, int len, uint64_t delta, uint64_t rest, uint64_t ten_kappa,
                        uint64_t wp_w)
{
    while (rest < wp_w && delta - rest >= ten_kappa &&
           (rest + ten_kappa < wp_w || wp_w - rest > rest + ten_kappa - wp_w)) {
        buf[len - 1]--;
        rest += ten_kappa;
    }
}

static int count_digits(uint32_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

static const uint32_t pow10_32[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                     100000000, 1000000000 };

static const uint64_t pow10_64[] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
    1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL,
};

static void digit_gen(struct diyfp w, struct diyfp mp, uint64_t delta, char *buf, int *len,
                      int *k)
{
    struct diyfp one = { 1ULL << -mp.e, mp.e };
    uint64_t wp_w = mp.f - w.f;
    uint32_t p1 = (uint32_t)(mp.f >> -one.e);
    uint64_t p2 = mp.f & (one.f - 1);
    int kappa = count_digits(p1);
    *len = 0;
    while (kappa > 0) {
        uint32_t d = p1 / pow10_32[kappa - 1];
        p1 %= pow10_32[kappa - 1];
        if (d || *len)
            buf[(*len)++] = (char)('0' + d);
        kappa--;
        uint64_t tmp = ((uint64_t)p1 << -one.e) + p2;
        if (tmp <= delta) {
            *k += kappa;
            grisu_round(buf, *len, delta, tmp, (uint64_t)pow10_32[kappa] << -one.e, wp_w);
            return;
        }
    }
    for (;;) {
        p2 *= 10;
        delta *= 10;
        char d = (char)(p2 >> -one.e);
        if (d || *len)
            buf[(*len)++] = (char)('0' + d);
        p2 &= one.f - 1;
        kappa--;
        if (p2 < delta) {
            *k += kappa;
            int index = -kappa;
            grisu_round(buf, *len, delta, p2, one.f, wp_w * (index < 20 ? pow10_64[index] : 0));
            return;
        }
    }
}

/* Digits of v > 0 (finite) into buf, *len of them; v = digits x 10^*k. */
static void grisu2(double v, char *buf, int *len, int *k)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    int be = (int)((u >> 52) & 0x7FF);
    uint64_t sig = u & 0x000FFFFFFFFFFFFFULL;
    struct diyfp x = be ? (struct diyfp){ sig | (1ULL << 52), be - 1075 }
                        : (struct diyfp){ sig, -1074 };
    /* boundaries m- and m+ */
    struct diyfp pl = { (x.f << 1) + 1, x.e - 1 };
    while (!(pl.f & (1ULL << 53))) {
        pl.f <<= 1;
        pl.e--;
    }
    pl.f <<= 10;
    pl.e -= 10;
    struct diyfp mi = (x.f == (1ULL << 52)) ? (struct diyfp){ (x.f << 2) - 1, x.e - 2 }
                                             : (struct diyfp){ (x.f << 1) - 1, x.e - 1 };
    mi.f <<= mi.e - pl.e;
    mi.e = pl.e;
    /* cached power c = 10^-k with the product's exponent in [-60, -32] */
    double dk = (-61 - pl.e) * 0.30102999566398114 + 347;
    int ki = (int)dk;
    if (dk - ki > 0.0)
        ki++;
    int index = (ki >> 3) + 1;
    *k = -(-348 + index * 8);
    struct diyfp c = { pow_f[index], pow_e[index] };
    struct diyfp w = mul(normalize(x), c);
    struct diyfp wp = mul(pl, c), wm = mul(mi, c);
    wm.f++;
    wp.f--;
    digit_gen(w, wp, wp.f - wm.f, buf, len, k);
}

static int put_exp(char *p, int e)
{
    int n = 0;
    p[n++] = 'e';
    p[n++] = e < 0 ? '-' : '+';
    if (e < 0)
        e = -e;
    if (e >= 100)
        p[n++] = (char)('0' + e / 100);
    p[n++] = (char)('0' + e / 10 % 10);
    p[n++] = (char)('0' + e % 10);
    return n;
}

int text_double(char out[32], double v)
{
    if (isnan(v))
        return snprintf(out, 32, "nan");
    if (isinf(v))
        return snprintf(out, 32, v > 0 ? "inf" : "-inf");
    int n = 0;
    if (signbit(v)) {
        out[n++] = '-';
        v = -v;
    }
    if (v == 0) {
        out[n++] = '0';
        out[n] = '\0';
        return n;
    }
    pthread_once(&pow_once, init_powers);
    char d[24];
    int len, k;
    grisu2(v, d, &len, &k);
    int point = len + k; /* digits before the decimal point */
    if (point > 0 && point <= 17) {
        if (k >= 0) { /* integer: digits then zeros */
            memcpy(out + n, d, (size_t)len);
            n += len;
            for (int i = 0; i < k; i++)
                out[n++] = '0';
        } else {
            memcpy(out + n, d, (size_t)point);
            n += point;
            out[n++] = '.';
            memcpy(out + n, d + point, (size_t)(len - point));
            n += len - point;
        }
    } else if (point <= 0 && point > -5) { /* 0.000ddd */
        out[n++] = '0';
        out[n++] = '.';
        for (int i = 0; i < -point; i++)
            out[n++] = '0';
        memcpy(out + n, d, (size_t)len);
        n += len;
    } else { /* d.ddde+XX */
        out[n++] = d[0];
        if (len > 1) {
            out[n++] = '.';
            memcpy(out + n, d + 1, (size_t)(len - 1));
            n += len - 1;
        }
        n += put_exp(out + n, point - 1);
    }
    out[n] = '\0';
    return n;
}
