/* Tests of learn/peaks.c against SciPy 1.10 and numpy (tests/learn/support/scipy_peaks.py):
 * peaks, prominences, bases and widths on random and plateau signals, percentiles, the step
 * convolution, and the Tenzing authors' labelling of their own SpMV measurements. */
#include "tests/learn/support/ref.h"

#include "learn/peaks.h"

#include <math.h>
#include <string.h>

static int close_to(double a, double b, double tol)
{
    return fabs(a - b) <= tol * (1.0 + fabs(b));
}

static void test_learn_peaks__finds_the_middle_of_a_flat_top(void)
{
    double x[] = { 0, 2, 2, 2, 2, 0, 1, 1, 3 };
    struct learn_peaks_options o = LEARN_PEAKS_OPTIONS_INIT;
    struct learn_peaks p = LEARN_PEAKS_INIT;
    CHECK_OK(learn_find_peaks(&p, x, 9, &o));
    CHECK_INT(p.n, ==, 1); /* the rising plateau 1,1 -> 3 and the last sample are no peaks */
    CHECK_INT(p.index[0], ==, 2);
    CHECK_INT(p.left_edge[0], ==, 1);
    CHECK_INT(p.right_edge[0], ==, 4);
    CHECK(p.prominence[0] == 2.0);
    learn_peaks_release(&p);
}

static void test_learn_peaks__prominence_is_measured_from_the_higher_base(void)
{
    double x[] = { 0, 5, 3, 4, 1 };
    struct learn_peaks_options o = LEARN_PEAKS_OPTIONS_INIT;
    o.prominence_min = 1.5;
    struct learn_peaks p = LEARN_PEAKS_INIT;
    CHECK_OK(learn_find_peaks(&p, x, 5, &o));
    CHECK_INT(p.n, ==, 1); /* 4 rises only 1 above the 3 between it and the higher 5 */
    CHECK_INT(p.index[0], ==, 1);
    CHECK(p.prominence[0] == 4.0); /* 5 over the higher of its bases, 0 left and 1 right */
    CHECK_INT(p.left_base[0], ==, 0);
    CHECK_INT(p.right_base[0], ==, 4);
    learn_peaks_release(&p);
}

static json_t *ref;

static json_t *load_ref(void)
{
    if (ref)
        return ref;
    ref = ref_run("scipy_peaks.py", "import scipy.signal",
                  test_data("tenzing/spmv_coverage_1n_4r_150000.csv"));
    return ref;
}

static void check_peaks_case(json_t *c, int at)
{
    json_t *jo = json_object_get(c, "options");
    int n = (int)json_array_size(json_object_get(c, "x"));
    double *x = ref_doubles(json_object_get(c, "x"));
    struct learn_peaks_options o = LEARN_PEAKS_OPTIONS_INIT;
    if (json_object_get(jo, "prominence"))
        o.prominence_min = json_number_value(json_object_get(jo, "prominence"));
    if (json_object_get(jo, "width"))
        o.width_min = json_number_value(json_object_get(jo, "width"));
    struct learn_peaks p = LEARN_PEAKS_INIT;
    CHECK_OK(learn_find_peaks(&p, x, n, &o));
    json_t *peaks = json_object_get(c, "peaks"), *widths = json_object_get(c, "widths");
    int bad = p.n != (int)json_array_size(peaks);
    for (int i = 0; !bad && i < p.n; i++) {
        bad |= p.index[i] != json_integer_value(json_array_get(peaks, (size_t)i));
        bad |= p.left_base[i] != json_integer_value(
                                     json_array_get(json_object_get(c, "left_bases"), (size_t)i));
        bad |= p.right_base[i] != json_integer_value(
                                      json_array_get(json_object_get(c, "right_bases"), (size_t)i));
        bad |= !close_to(p.prominence[i], json_number_value(json_array_get(
                                               json_object_get(c, "prominences"), (size_t)i)), 1e-12);
        if (widths)
            bad |= !close_to(p.width[i], json_number_value(json_array_get(widths, (size_t)i)), 1e-9);
    }
    int found = p.n;
    learn_peaks_release(&p);
    free(x);
    if (bad)
        test_fail(__FILE__, __LINE__, "signal %d (%s, n %d): %d peaks, scipy %zu, or their "
                  "positions/bases/prominences/widths differ", at,
                  json_string_value(json_object_get(c, "kind")), n, found, json_array_size(peaks));
}

static void test_learn_peaks__agree_with_scipy_on_random_and_plateau_signals(void)
{
    json_t *cases = json_object_get(load_ref(), "peaks");
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(cases); i++) {
        check_peaks_case(json_array_get(cases, i), (int)i);
        total += json_array_size(json_object_get(json_array_get(cases, i), "peaks"));
    }
    fprintf(stderr, "# %zu signals, %zu peaks equal scipy's\n", json_array_size(cases), total);
    CHECK_INT(json_array_size(cases), >=, 300);
    CHECK_INT(total, >, 1000);
}

static void test_learn_percentile__agrees_with_numpy(void)
{
    json_t *cases = json_object_get(load_ref(), "percentiles");
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i);
        double *x = ref_doubles(json_object_get(c, "x"));
        double v = learn_percentile(x, (int)json_array_size(json_object_get(c, "x")),
                                    json_number_value(json_object_get(c, "q")));
        double want = json_number_value(json_object_get(c, "value"));
        free(x);
        if (v != want)
            test_fail(__FILE__, __LINE__, "percentile case %zu: %.17g, numpy %.17g", i, v, want);
    }
    CHECK_INT(json_array_size(cases), ==, 100);
}

static void test_learn_step_convolve__agrees_with_numpy_convolve(void)
{
    json_t *cases = json_object_get(load_ref(), "convolutions");
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i), *want = json_object_get(c, "res");
        double *x = ref_doubles(json_object_get(c, "x")), *res = NULL;
        int m = learn_step_convolve(&res, x, (int)json_array_size(json_object_get(c, "x")),
                                    (int)json_integer_value(json_object_get(c, "r")));
        CHECK_INT(m, ==, json_array_size(want));
        for (int j = 0; j < m; j++)
            CHECK(fabs(res[j] - json_number_value(json_array_get(want, (size_t)j))) <= 1e-12);
        free(x);
        free(res);
    }
}

/* The authors' labels (postprocess.py: 10th-percentile times, first 50/100/200/400/all rows,
 * percentiles 97/97/99/98/98) on their own measurement file. */
static void test_learn_labels__reproduce_the_tenzing_authors_classes_on_their_file(void)
{
    json_t *tz = json_object_get(load_ref(), "tenzing");
    CHECK_INT(json_array_size(tz), ==, 5);
    for (size_t i = 0; i < json_array_size(tz); i++) {
        json_t *c = json_array_get(tz, i), *bd = json_object_get(c, "boundaries");
        int n = (int)json_integer_value(json_object_get(c, "n"));
        double *t = ref_doubles(json_object_get(c, "times"));
        struct learn_label_options o = LEARN_LABEL_OPTIONS_INIT;
        o.percentile = json_number_value(json_object_get(c, "percentile"));
        struct learn_labels l = LEARN_LABELS_INIT;
        CHECK_OK(learn_labels_by_peaks(&l, t, n, &o));
        CHECK_INT(l.radius, ==, json_integer_value(json_object_get(c, "radius")));
        CHECK(close_to(l.cutoff, json_number_value(json_object_get(c, "cutoff")), 1e-9));
        CHECK_INT(l.k - 1, ==, json_array_size(bd));
        for (int b = 0; b < l.k - 1; b++)
            CHECK_INT(l.boundary[b], ==, json_integer_value(json_array_get(bd, (size_t)b)));
        for (int j = 1; j < n; j++) /* labels follow the sorted times */
            CHECK(l.label[l.order[j]] >= l.label[l.order[j - 1]]);
        CHECK(l.lo[0] <= l.hi[0] && (l.k < 2 || l.hi[0] <= l.lo[1]));
        fprintf(stderr, "# first %d rows: %d classes, boundaries as the authors'\n", n, l.k);
        learn_labels_release(&l);
        free(t);
    }
}

static void test_learn_labels__one_class_when_there_are_too_few_times(void)
{
    double t[] = { 3.0 };
    struct learn_label_options o = LEARN_LABEL_OPTIONS_INIT;
    struct learn_labels l = LEARN_LABELS_INIT;
    CHECK_OK(learn_labels_by_peaks(&l, t, 1, &o));
    CHECK_INT(l.k, ==, 1);
    CHECK_INT(l.label[0], ==, 0);
    CHECK(l.lo[0] == 3.0 && l.hi[0] == 3.0);
    learn_labels_release(&l);
}

int main(void)
{
    TEST_RUN(test_learn_peaks__finds_the_middle_of_a_flat_top);
    TEST_RUN(test_learn_peaks__prominence_is_measured_from_the_higher_base);
    TEST_RUN(test_learn_peaks__agree_with_scipy_on_random_and_plateau_signals);
    TEST_RUN(test_learn_percentile__agrees_with_numpy);
    TEST_RUN(test_learn_step_convolve__agrees_with_numpy_convolve);
    TEST_RUN(test_learn_labels__reproduce_the_tenzing_authors_classes_on_their_file);
    TEST_RUN(test_learn_labels__one_class_when_there_are_too_few_times);
    json_decref(ref);
    return test_done();
}
