/* Seeded generators of sparse matrices for Seer's benchmark, so that the regime the collection
 * lacks (hundreds of thousands to millions of rows, where gathering features pays) is covered.
 * A matrix is named by its spec, "family:key=value,...", and the spec with every parameter
 * spelled out (defaults included) is recorded with each matrix: the same spec gives the same
 * matrix, bit for bit, on every machine.
 *
 * Families and their parameters (rows is required; cols defaults to rows; seed to 1):
 *   banded     bw      half bandwidth: row i holds columns i-bw .. i+bw (default 2)
 *   uniform    avg     row lengths uniform in [avg/2, 3avg/2], columns uniform (default 8)
 *   powerlaw   avg, alpha   row lengths Pareto(alpha) scaled to mean avg, capped at cols
 *                      (defaults 8, 2.0)
 *   blockdiag  block   dense blocks of block x block on the diagonal (default 16)
 *   longrows   avg, long, count   uniform rows of about avg entries plus `count` rows of
 *                      `long` entries (defaults 8, cols/2, 4)
 *   emptyrows  avg, empty   a share `empty` (0..1) of rows is empty, the rest uniform
 *                      (defaults 8, 0.5)
 * Values are uniform in (-1, 1). */
#ifndef LSCAT_SEER_GEN_H
#define LSCAT_SEER_GEN_H

#include "seer/csr.h"

#include <stddef.h>

struct seer_gen_spec {
    char family[16];
    long long rows, cols;
    double avg, alpha, empty;
    long long bw, block, long_len, count;
    unsigned long long seed;
};

/* Parse "family:key=value,..." (LSCAT_EINVALID naming the bad part). */
int seer_gen_parse(struct seer_gen_spec *out, const char *spec);
/* The canonical spec (every parameter of the family, fixed order) into buf. */
void seer_gen_format(char *buf, size_t size, const struct seer_gen_spec *s);
/* Generate the matrix (caller releases). Refuses more than INT_MAX non-zeros. */
int seer_gen(struct seer_csr *out, const struct seer_gen_spec *s);

/* The built-in set of specs named by --generate families: every family at several sizes from
 * 1,000 to 4,000,000 rows (NULL-terminated, static). */
const char *const *seer_gen_families(void);

/* The built-in set named by --generate families-large: SEER_GEN_LARGE_COUNT specs of 100,000 to
 * about 6,300,000 rows, at most 16,000,000 non-zeros besides the long rows (at most 8,000,000),
 * the six families in turn (so a bench stopped early still covers each), one in five
 * rectangular; sizes and parameters drawn from a fixed seed with integer arithmetic only: spec i
 * is the same string on every machine. Writes spec i into buf. */
#define SEER_GEN_LARGE_COUNT 240
int seer_gen_large_spec(char *buf, size_t size, int i);

#endif
