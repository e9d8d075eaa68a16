/* The driver interface of `lscat sweep`: what a user's driver file implements so that lscat can
 * run their kernel once per record of a BONSAI search space. Plain C (a driver is a .c file;
 * nvcc compiles it with the host compiler), included as "tune/sweep_driver.h" (lscat passes
 * -I<share dir>, where this header is installed).
 *
 * The driver defines one object, `lscat_sweep_driver`, with its callbacks. For each record,
 * in one process that runs many records of one compile-time tuple:
 *
 *     init(rec, &data)            allocate host/device memory for this record (data: yours)
 *     copy_in(rec, data, stream)  upload inputs
 *     launch(rec, data, stream)   enqueue the kernel on `stream` only; timed by lscat's
 *                                 timing core (warm-up, batches, CUDA graphs, median): called
 *                                 many times, so it must give the same result every time
 *     copy_out(rec, data, stream) download results
 *     test(rec, data)             check them: 0 = correct
 *     cleanup(rec, data)          free everything; may set output columns
 *                                 (lscat_sweep_set_output), e.g. Gflops from the time
 *
 * Every callback but launch and cleanup may be NULL. A callback returns 0 or an error code
 * (a cudaError_t, or any nonzero value): launch, copy and init errors are recorded as
 * Error=Launch, test failures as Error=Test; a crash of the process as Crash, a record running
 * past the timeout as Timeout. launch must return the launch's status (cudaGetLastError() after
 * `<<<...>>>`): a launch with too many threads per block fails there, not later.
 *
 * Compile-time parameters are also -D macros (-DBLOCK_SIZE=16); every parameter can be read by
 * name from the record. The kernel file (.cu) holds the kernel and an extern "C" function the
 * driver calls to launch it (C cannot write <<<...>>>). */
#ifndef LSCAT_TUNE_SWEEP_DRIVER_H
#define LSCAT_TUNE_SWEEP_DRIVER_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One record of the space (opaque; valid during the callbacks of that record). */
struct lscat_sweep_record;

/* The value of parameter `name` as an Integer, a Real or the text written in the space (any
 * type). A name the space does not have aborts the process with a message naming it (recorded
 * as Crash: a driver bug, not a slow configuration). */
long long lscat_sweep_int(const struct lscat_sweep_record *rec, const char *name);
double lscat_sweep_real(const struct lscat_sweep_record *rec, const char *name);
const char *lscat_sweep_string(const struct lscat_sweep_record *rec, const char *name);
/* The record's number in the space (1-based) */
int lscat_sweep_index(const struct lscat_sweep_record *rec);
/* The measured time of one launch in seconds (the statistic chosen with --statistic), for
 * cleanup; 0 before the measurement or when it failed. */
double lscat_sweep_time_s(const struct lscat_sweep_record *rec);
/* Set an output column declared in lscat_sweep_driver.outputs (others are ignored with a
 * warning on stderr). Columns never set stay empty in the output. */
void lscat_sweep_set_output(struct lscat_sweep_record *rec, const char *column, double value);

struct lscat_sweep_driver {
    const char *outputs; /* the output columns the driver sets, comma-separated ("Gflops");
                            NULL or "" for none */
    int (*init)(struct lscat_sweep_record *rec, void **data);
    int (*copy_in)(struct lscat_sweep_record *rec, void *data, cudaStream_t stream);
    int (*launch)(struct lscat_sweep_record *rec, void *data, cudaStream_t stream);
    int (*copy_out)(struct lscat_sweep_record *rec, void *data, cudaStream_t stream);
    int (*test)(struct lscat_sweep_record *rec, void *data);
    void (*cleanup)(struct lscat_sweep_record *rec, void *data);
};

/* Defined by the driver. */
extern const struct lscat_sweep_driver lscat_sweep_driver;

#ifdef __cplusplus
}
#endif
#endif
