/* The SpMV back end's MPI exchange, run by tests/e2e/mcts_mpi.sh under
 * `mpirun --oversubscribe -np 4`: sends, receives and waits of the packed x entries, then the
 * CPU product from the received entries against the CPU reference product. Every rank checks;
 * rank 0 reports (a failure on any rank fails the test). */
#include "common/error.h"
#include "common/xalloc.h"
#include "mcts/spmv/exchange.h"
#include "tests/support/test.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, ranks;

/* 1 on every rank when cond holds on every rank. */
static int all(int cond)
{
    int out = 0;
    MPI_Allreduce(&cond, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return out;
}

static void exchange_and_check(long n, int nnz)
{
    struct spmv_part p;
    struct spmv_exchange ex;
    CHECK(all(spmv_part_make(&p, n, nnz, rank, ranks, 42) == 0));
    CHECK(all(spmv_exchange_setup(&ex, &p, MPI_COMM_WORLD) == 0));
    double *xl = xmalloc(sizeof(double) * (size_t)p.nrows);
    double *xr = xcalloc((size_t)p.nremote + 1, sizeof(double));
    double *send = xmalloc(sizeof(double) * (size_t)(ex.nsend_total + 1));
    double *y = xmalloc(sizeof(double) * (size_t)p.nrows);
    double *ref = xmalloc(sizeof(double) * (size_t)p.nrows);
    for (int i = 0; i < p.nrows; i++)
        xl[i] = spmv_x(p.row0 + i);
    /* the DAG's order of one implementation: PostRecv, Pack, PostSend, WaitRecv, WaitSend */
    CHECK(all(spmv_exchange_post_recv(&ex, xr) == 0));
    spmv_exchange_pack_cpu(send, &ex, xl);
    CHECK(all(spmv_exchange_post_send(&ex, send) == 0));
    CHECK(all(spmv_exchange_wait_recv(&ex) == 0));
    CHECK(all(spmv_exchange_wait_send(&ex) == 0));
    int got_all = 1;
    for (int k = 0; k < p.nremote; k++)
        got_all &= xr[k] == spmv_x(p.remote_global[k]);
    CHECK(all(got_all));
    spmv_cpu_product(y, &p, xl, xr);
    spmv_reference(ref, &p);
    CHECK(all(spmv_max_rel_error(y, ref, p.nrows) == 0.0));
    /* a band of width n / ranks reaches the neighbours only, and every rank has some */
    CHECK(all(p.nremote > 0 && ex.nrecv >= 1 && ex.nrecv <= 2 && ex.nsend == ex.nrecv));
    CHECK(all(p.local.nnz + p.remote.nnz == p.nrows * nnz));
    free(xl), free(xr), free(send), free(y), free(ref);
    spmv_exchange_release(&ex);
    spmv_part_release(&p);
}

static void test_spmv_exchange__small_band_matrix_matches_the_reference(void)
{
    exchange_and_check(2000, 10);
}

static void test_spmv_exchange__150000_rows_match_the_reference(void)
{
    exchange_and_check(150000, 10);
}

static void test_spmv_exchange__needs_at_least_four_ranks_here(void)
{
    CHECK_INT(ranks, >=, 4);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (rank != 0 && !freopen("/dev/null", "w", stdout))
        return 3;
    TEST_RUN(test_spmv_exchange__needs_at_least_four_ranks_here);
    TEST_RUN(test_spmv_exchange__small_band_matrix_matches_the_reference);
    TEST_RUN(test_spmv_exchange__150000_rows_match_the_reference);
    int rc = test_done();
    MPI_Finalize();
    return rc;
}
