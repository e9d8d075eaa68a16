/* One GPU, one piece of timed work at a time, across processes: `lscat tune` takes a GPU
 * exclusively while it measures a kernel; `lscat execute`'s probe runs share it with each other
 * but never overlap a measurement. Two files per GPU under the lock folder (flock(2), so a
 * killed holder releases at once): "<uuid>.lock" (shared or exclusive) and "<uuid>.turn", a
 * turnstile taken briefly by everyone before the real lock, so a waiting measurement is not
 * starved by a stream of probes. */
#ifndef LSCAT_GPULOCK_H
#define LSCAT_GPULOCK_H

struct gpulock {
    int fd; /* -1 when not held */
};

/* The lock folder: $LSCAT_LOCK_DIR, else /tmp/lscat-locks (created, mode 1777 like /tmp, so
 * several users of one machine exclude each other). Returns a static string. */
const char *gpulock_dir(void);

/* Take the lock of GPU `uuid` (exclusive or shared). Waits, polling every few milliseconds,
 * until it is free, `*stop` becomes nonzero (returns LSCAT_EBUSY) or `timeout_s` passes (< 0:
 * no limit; returns LSCAT_ETIMEOUT). `waited_s` (may be NULL) gets the time spent waiting.
 * Returns 0 or a negative code with the error slot set. */
int gpulock_acquire(struct gpulock *out, const char *uuid, int exclusive,
                    const volatile int *stop, double timeout_s, double *waited_s);
/* Release (a no-op when not held). */
void gpulock_release(struct gpulock *l);

/* The context gate: a host makes CUDA contexts one at a time whatever the GPU, so processes
 * started together to make one each all finish late (4 on 4 H200s: all ready at 1.69 s, one
 * alone at 0.4 s; docs/tune.md "Runner"). Taken (`contexts` in the lock folder, across the
 * host's lscat processes) before starting a process that makes its context at once (a tune
 * runner, a sweep's host), released once it says it has it: the first GPU starts measuring
 * after one context, the next after two. Waited for at most 5 s: then the start goes on
 * without it (out->fd -1, no error left set). LSCAT_TUNE_CONTEXT_GATE=0: never taken.
 * `waited` (may be NULL) gets the wait; LSCAT_TUNE_TRACE gets a `gate_taken` line. */
void gpulock_context_gate(struct gpulock *out, double *waited);

/* lscat-mpi's chunk turn: when $LSCAT_GPU_BATON names a file, the first call takes an exclusive
 * flock on it (waiting, polling, until it is free or `*stop` is set: LSCAT_EBUSY) and the
 * process holds it until it exits (a killed process releases it at once); later calls return
 * at once. So a worker rank's next chunk does its start-up (process, runner, planning) while
 * the current one measures, and measures only once the current one is gone, instead of the two
 * taking turns kernel by kernel and finishing together. Without the variable: returns 0. */
int gpulock_baton(const volatile int *stop);
/* Hand the chunk turn on before the process ends (its measurements are over; what is left is
 * tearing down runners); later gpulock_baton calls return at once. */
void gpulock_baton_release(void);

#endif
