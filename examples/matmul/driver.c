/* The driver of the matmul example for `lscat sweep`: per record, allocate n x n matrices,
 * upload them, let lscat time matmul_launch, download C, check it against a CPU reference on
 * a sample of entries, and report Gflops. The callbacks are documented in
 * tune/sweep_driver.h. */
#include "tune/sweep_driver.h"

#include <math.h>
#include <stdlib.h>

int matmul_launch(const float *a, const float *b, float *c, int n, cudaStream_t stream);

struct matmul {
    int n;
    size_t bytes;
    float *ha, *hb, *hc;
    float *da, *db, *dc;
};

/* Small multiples of 1/4: every product and sum is exact in float. */
static float value(int i, int j, int salt)
{
    return (float)(((i * 7 + j * 3 + salt) % 9) - 4) * 0.25f;
}

static int init(struct lscat_sweep_record *rec, void **data)
{
    struct matmul *m = calloc(1, sizeof(*m));
    *data = m;
    if (!m)
        return 1;
    m->n = (int)lscat_sweep_int(rec, "N");
    m->bytes = (size_t)m->n * (size_t)m->n * sizeof(float);
    m->ha = malloc(m->bytes), m->hb = malloc(m->bytes), m->hc = malloc(m->bytes);
    if (!m->ha || !m->hb || !m->hc)
        return 2;
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++) {
            m->ha[i * m->n + j] = value(i, j, 1);
            m->hb[i * m->n + j] = value(i, j, 5);
        }
    int rc = cudaMalloc((void **)&m->da, m->bytes);
    if (rc == 0)
        rc = cudaMalloc((void **)&m->db, m->bytes);
    if (rc == 0)
        rc = cudaMalloc((void **)&m->dc, m->bytes);
    return rc;
}

static int copy_in(struct lscat_sweep_record *rec, void *data, cudaStream_t stream)
{
    struct matmul *m = data;
    (void)rec;
    int rc = cudaMemcpyAsync(m->da, m->ha, m->bytes, cudaMemcpyHostToDevice, stream);
    return rc ? rc : cudaMemcpyAsync(m->db, m->hb, m->bytes, cudaMemcpyHostToDevice, stream);
}

static int launch(struct lscat_sweep_record *rec, void *data, cudaStream_t stream)
{
    struct matmul *m = data;
    (void)rec;
    return matmul_launch(m->da, m->db, m->dc, m->n, stream);
}

static int copy_out(struct lscat_sweep_record *rec, void *data, cudaStream_t stream)
{
    struct matmul *m = data;
    (void)rec;
    return cudaMemcpyAsync(m->hc, m->dc, m->bytes, cudaMemcpyDeviceToHost, stream);
}

/* 1,000 entries spread over C against a CPU dot product. */
static int test(struct lscat_sweep_record *rec, void *data)
{
    struct matmul *m = data;
    (void)rec;
    for (int s = 0; s < 1000; s++) {
        int i = (int)((s * 7919L) % m->n), j = (int)((s * 104729L) % m->n);
        double want = 0;
        for (int k = 0; k < m->n; k++)
            want += (double)m->ha[i * m->n + k] * m->hb[k * m->n + j];
        if (fabs(want - m->hc[i * m->n + j]) > 1e-3)
            return 1;
    }
    return 0;
}

static void cleanup(struct lscat_sweep_record *rec, void *data)
{
    struct matmul *m = data;
    double t = lscat_sweep_time_s(rec);
    if (!m)
        return;
    if (t > 0)
        lscat_sweep_set_output(rec, "Gflops", 2.0 * m->n * m->n * (double)m->n / t * 1e-9);
    cudaFree(m->da);
    cudaFree(m->db);
    cudaFree(m->dc);
    free(m->ha);
    free(m->hb);
    free(m->hc);
    free(m);
}

const struct lscat_sweep_driver lscat_sweep_driver = {
    .outputs = "Gflops",
    .init = init,
    .copy_in = copy_in,
    .launch = launch,
    .copy_out = copy_out,
    .test = test,
    .cleanup = cleanup,
};
