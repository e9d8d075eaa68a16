/* The timing core's options as `lscat tune` and `lscat sweep` take them (--warmup, --samples,
 * --min-sample-ms, --target-rel-mad, --l2-flush, --no-graph): checked in one place and kept as
 * the argument tail every harness gets (tune/timing.h reads them there). */
#ifndef LSCAT_TUNE_TIMING_ARGS_H
#define LSCAT_TUNE_TIMING_ARGS_H

#define TUNE_TIMING_ARGS_MAX 12 /* six options, each with its value */

/* Embedded in a command's arguments; zero-initialised it is empty. argv is always
 * NULL-terminated and its strings are borrowed from the caller (argv of main). */
struct tune_timing_args {
    const char *argv[TUNE_TIMING_ARGS_MAX + 1];
    int n;
};

/* Check one option (`value` NULL for the flags --l2-flush and --no-graph) and keep it; given
 * again, the last value wins, so no number of repeats can overflow. Returns 0, or
 * LSCAT_EINVALID with the error set (an out-of-range value, an unknown flag). */
int tune_timing_args_add(struct tune_timing_args *t, const char *flag, const char *value);

#endif
