/* Peak finding as SciPy 1.10's scipy.signal.find_peaks (local maxima, prominence and width
 * conditions), numpy's linear percentile, and class labels by peak finding (Tenzing's step:
 * times sorted, convolved with a step kernel, class boundaries where the jumps are).
 *
 *     struct learn_peaks_options po = LEARN_PEAKS_OPTIONS_INIT;
 *     po.prominence_min = 3.0;
 *     struct learn_peaks pk = LEARN_PEAKS_INIT;
 *     if (learn_find_peaks(&pk, x, n, &po) < 0) ...
 *     for (int i = 0; i < pk.n; i++) ... pk.index[i], pk.prominence[i]
 *     learn_peaks_release(&pk);
 */
#ifndef LSCAT_LEARN_PEAKS_H
#define LSCAT_LEARN_PEAKS_H

/* Conditions; NAN means "no condition" (SciPy's None). */
struct learn_peaks_options {
    double prominence_min; /* keep peaks with prominence >= this */
    double prominence_max; /* ... and <= this */
    double width_min;      /* keep peaks whose width at rel_height is >= this */
    double width_max;
    double rel_height;     /* where the width is measured (SciPy default 0.5) */
};
#define LEARN_PEAKS_OPTIONS_INIT                                                             \
    {                                                                                        \
        .prominence_min = __builtin_nan(""), .prominence_max = __builtin_nan(""),            \
        .width_min = __builtin_nan(""), .width_max = __builtin_nan(""), .rel_height = 0.5,   \
    }

/* The peaks found, in increasing index; arrays of n entries, owned by the struct. The
 * prominence fields are filled for every call (SciPy computes them only when asked, the values
 * are the same); width fields are filled when a width condition was given, else NULL. */
struct learn_peaks {
    int n;
    int *index;             /* peak positions (the middle of a flat top, rounded down) */
    int *left_edge, *right_edge; /* the flat top's first and last sample (plateau sizes) */
    double *prominence;
    int *left_base, *right_base;
    double *width;          /* NULL without a width condition */
    double *width_height;
    double *left_ip, *right_ip; /* interpolated intersection points */
};
#define LEARN_PEAKS_INIT { 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/* Find local maxima of x[0..n-1] (a sample, or a flat run of equal samples, with a lower
 * neighbour on each side; the ends never count), compute their prominences with an unbounded
 * window (SciPy's wlen=None), keep those meeting the prominence condition, then compute widths
 * and keep those meeting the width condition, as find_peaks does in that order. `out` must be
 * LEARN_PEAKS_INIT or released; fails (LSCAT_EINVALID) on a NaN in x or rel_height < 0. */
int learn_find_peaks(struct learn_peaks *out, const double *x, int n,
                     const struct learn_peaks_options *o);
void learn_peaks_release(struct learn_peaks *p);

/* numpy.percentile(x, q) with the default "linear" method (q in 0..100); x need not be
 * sorted and is not changed. NAN when n == 0. */
double learn_percentile(const double *x, int n, double q);

/* numpy.convolve(x, [+1]*r + [-1]*r, 'valid'): out[i] = sum(x[i+r .. i+2r-1]) - sum(x[i ..
 * i+r-1]) for i = 0..n-2r, i.e. the sum of the r samples after the boundary i+r minus the sum of
 * the r samples before it. On sorted times it is large where the times jump. Writes n - 2r + 1
 * values into *out (caller frees) and returns that count; 0 (and *out NULL) when n < 2r. Each
 * value is summed in long double, so it is the exact result rounded once. */
int learn_step_convolve(double **out, const double *x, int n, int r);

/* Class labels from times (Tenzing's rules step, as the authors' postprocess script). */
struct learn_label_options {
    double radius_fraction; /* kernel radius r = ceil(n * this) (default 0.005, at least 1) */
    double percentile;      /* prominence must reach this percentile of the convolution (98) */
    double width_min;       /* SciPy width condition on the convolution (the script: 1; NAN off) */
};
#define LEARN_LABEL_OPTIONS_INIT                                                             \
    { .radius_fraction = 0.005, .percentile = 98.0, .width_min = 1.0 }

struct learn_labels {
    int n;                 /* samples */
    int k;                 /* classes: boundaries + 1 */
    int *label;            /* label[i] of sample i (input order); 0 = fastest class */
    int *order;            /* order[j]: the sample at sorted position j (stable by time) */
    int *boundary;         /* k - 1 sorted positions where classes 1..k-1 start */
    double *lo, *hi;       /* class c holds times lo[c] .. hi[c] (first and last sorted time) */
    int radius;            /* the kernel radius used */
    double cutoff;         /* the prominence threshold used */
};
#define LEARN_LABELS_INIT { 0, 0, NULL, NULL, NULL, NULL, NULL, 0, 0.0 }

/* Sort the times (stable), convolve them with the step kernel of radius r, find peaks of the
 * convolution whose prominence is at least the chosen percentile of the convolution values
 * (and whose width passes width_min), and start a new class at each peak + r, the first sorted
 * position after the jump. Fewer than 2r samples give one class. Fails on n < 1 or a NaN. */
int learn_labels_by_peaks(struct learn_labels *out, const double *times, int n,
                          const struct learn_label_options *o);
void learn_labels_release(struct learn_labels *l);

#endif
