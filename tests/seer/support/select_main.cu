/* The end-to-end check of seer_select() (run by tests/e2e/gpu_seer.sh on a GPU): for a few
 * generated CSR matrices uploaded to the GPU it calls seer_select() for 1 and 100,000
 * iterations and checks the choice is a kernel, equals what the exported trees decide on the
 * host, and, when the selector gathered, that the GPU features equal the CPU's. The same again
 * through seer_gather_async() (enqueued before an x upload; seer_select() must then read that
 * result, gathered = 2, exactly when the selector says gather), and with a gathering enqueued
 * for another matrix (seer_select() must gather its own, gathered = 1), and with one enqueued
 * for another matrix on another stream followed by one for this matrix on a second stream (the
 * second waits for the first, which shares the scratch; seer_select() reads the second's).
 * Built against a folder lscat seer train wrote: nvcc -I DIR select_main.cu DIR/libseer_select.a */
#include "seer_classes.h"
#include "seer_gathered.h"
#include "seer_known.h"
#include "seer_select.h"
#include "seer_selector.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

static int fails;

static void check(int ok, const char *what, int rows)
{
    if (!ok) {
        printf("FAIL %s (rows %d)\n", what, rows);
        fails++;
    }
}

/* Row lengths: a mix of short rows, empty rows and every 97th row long (half the columns, at
 * most 4,096 entries, so that nnz fits the int row pointers: uncapped, 2,000,000 rows had 2e10
 * entries, the row pointers wrapped and the mean row length read negative). */
static std::vector<int> make_row_ptr(int rows, int cols)
{
    std::vector<int> rp((size_t)rows + 1, 0);
    for (int r = 0; r < rows; r++) {
        int len = r % 97 == 0 ? (cols / 2 < 4096 ? cols / 2 : 4096) : r % 5 == 0 ? 0 : 1 + r % 7;
        rp[(size_t)r + 1] = rp[(size_t)r] + (len < cols ? len : cols);
    }
    return rp;
}

enum { SYNC, ASYNC, ASYNC_OTHER, ASYNC_TWO_STREAMS };

/* Select on a (rows x cols) matrix: plainly (SYNC), after seer_gather_async() on it and an x
 * upload (ASYNC), after seer_gather_async() on another matrix (ASYNC_OTHER), or after one on
 * another matrix on stream s1 and one on it on stream s2 (ASYNC_TWO_STREAMS, selecting on s2). */
static void one(int rows, int cols, long long iterations, int how)
{
    std::vector<int> rp = make_row_ptr(rows, cols);
    std::vector<double> hx((size_t)cols, 1.0);
    int *d = 0, *other = 0, started = -1;
    double *dx = 0;
    cudaMalloc(&d, rp.size() * sizeof(int));
    cudaMalloc(&other, rp.size() * sizeof(int));
    cudaMalloc(&dx, hx.size() * sizeof(double));
    cudaMemcpy(d, rp.data(), rp.size() * sizeof(int), cudaMemcpyHostToDevice);
    std::vector<int> rp_other(rp.size()); /* rows of one entry: other features than d's */
    for (size_t r = 0; r < rp_other.size(); r++)
        rp_other[r] = (int)r;
    cudaMemcpy(other, rp_other.data(), rp.size() * sizeof(int), cudaMemcpyHostToDevice);
    cudaStream_t s1 = 0, s2 = 0;
    if (how == ASYNC_TWO_STREAMS) {
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
        int first = -1;
        check(seer_gather_async(&first, other, rows, cols, rp[(size_t)rows], iterations, s1) == 0,
              "seer_gather_async on the first stream returns 0", rows);
    }
    if (how != SYNC) {
        int e = seer_gather_async(&started, how == ASYNC_OTHER ? other : d, rows, cols,
                                  rp[(size_t)rows], iterations, s2);
        check(e == 0, "seer_gather_async returns 0", rows);
        cudaMemcpyAsync(dx, hx.data(), hx.size() * sizeof(double), cudaMemcpyHostToDevice, s2);
    }
    struct seer_choice c;
    int e = seer_select(&c, d, rows, cols, rp[(size_t)rows], iterations, s2);
    check(e == 0, "seer_select returns 0", rows);
    check(c.kernel >= 0 && c.kernel < SEER_KERNEL_COUNT && c.name != 0, "a kernel is chosen", rows);
    /* the known features: rows, cols, nnz, iterations, nnz/rows (the mean row length);
     * gathered adds the longest and shortest row and the row-length variance, then those
     * divided by the mean (the variance by its square) */
    double x[11] = { (double)rows, (double)cols, (double)rp[(size_t)rows], (double)iterations,
                     rows > 0 ? (double)rp[(size_t)rows] / rows : 0, 0, 0, 0, 0, 0, 0 };
    check(sizeof(c.features) == sizeof(x), "seer_choice holds the 11 features", rows);
    for (int i = 0; i < 5; i++)
        check(c.features[i] == x[i], "the known features as the trees read them", rows);
    int says = seer_selector_predict(x) == 1;
    if (how != SYNC)
        check(started == says, "seer_gather_async enqueues exactly when the selector says", rows);
    check(c.gathered == (!says ? 0 : how == ASYNC || how == ASYNC_TWO_STREAMS ? 2 : 1),
          "gathered = 2 reading the async result, 1 gathering here, 0 not at all", rows);
    if (c.gathered) {
        double mx = 0, mn = 1e300, sum = 0, ss = 0;
        for (int r = 0; r < rows; r++) {
            double len = rp[(size_t)r + 1] - rp[(size_t)r];
            mx = fmax(mx, len), mn = fmin(mn, len), sum += len;
        }
        double mean = sum / rows;
        for (int r = 0; r < rows; r++) {
            double dl = rp[(size_t)r + 1] - rp[(size_t)r] - mean;
            ss += dl * dl;
        }
        double want[6] = { mx, mn, ss / rows, mean > 0 ? mx / mean : 0, mean > 0 ? mn / mean : 0,
                           mean > 0 ? ss / rows / (mean * mean) : 0 };
        for (int i = 0; i < 6; i++) {
            int same = fabs(c.features[5 + i] - want[i]) <= 1e-9 * fabs(want[i]) + 1e-12;
            if (!same)
                printf("feature %d, mode %d: GPU %.17g, CPU %.17g\n", 5 + i, how,
                       c.features[5 + i], want[i]);
            check(same, "GPU features (and the scale-free ones) equal the CPU's", rows);
            x[5 + i] = c.features[5 + i];
        }
        check(c.kernel == seer_class_kernel[seer_gathered_predict(x)], "gathered tree's pick", rows);
    } else {
        check(seer_selector_predict(x) == 0, "selector said known", rows);
        check(c.kernel == seer_class_kernel[seer_known_predict(x)], "known tree's pick", rows);
    }
    printf("rows %d, %lld iterations, %s: %s%s\n", rows, iterations,
           how == SYNC ? "seer_select" : how == ASYNC ? "async first"
           : how == ASYNC_OTHER ? "async on another matrix" : "async on two streams",
           c.name, c.gathered == 2 ? " (gathered early)" : c.gathered ? " (gathered)" : "");
    cudaDeviceSynchronize();
    if (s1)
        cudaStreamDestroy(s1);
    if (s2)
        cudaStreamDestroy(s2);
    cudaFree(d);
    cudaFree(other);
    cudaFree(dx);
}

int main(void)
{
    int sizes[] = { 1, 1000, 150000, 2000000 };
    for (int how = SYNC; how <= ASYNC_TWO_STREAMS; how++)
        for (int i = 0; i < 4; i++) {
            one(sizes[i], sizes[i] > 1 ? sizes[i] : 1, 1, how);
            one(sizes[i], sizes[i] > 1 ? sizes[i] : 1, 100000, how);
        }
    printf("%s\n", fails ? "seer_select: FAILED" : "seer_select: all checks passed");
    return fails ? 1 : 0;
}
