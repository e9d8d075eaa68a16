/* The scale-free row-length features Seer's gathered tree also reads, derived on the host from
 * the gathered ones after the feature kernel (no GPU work): the one definition shared by lscat
 * seer train (seer/train.c) and the exported seer_select() runtime, so both compute them with
 * the same arithmetic. Plain C, no dependencies; exported beside seer_select.cu. */
#ifndef SEER_DERIVED_H
#define SEER_DERIVED_H

/* Features of the gathered tree: rows, cols, nnz, iterations, nnz / rows (the mean row length),
 * the longest and shortest row length, the population variance of row lengths, then the
 * derived ones below. */
#define SEER_FEATURE_COUNT 11

/* x[0..7] as above -> x[8] = longest row / mean, x[9] = shortest row / mean, x[10] = variance /
 * mean^2 (the squared coefficient of variation); all 0 when the mean is 0. Scale-free: "a few
 * rows far longer than the mean" reads the same at every matrix size. */
static inline void seer_derive_features(double *x)
{
    double mean = x[4];
    x[8] = mean > 0 ? x[5] / mean : 0;
    x[9] = mean > 0 ? x[6] / mean : 0;
    x[10] = mean > 0 ? x[7] / (mean * mean) : 0;
}

#endif
