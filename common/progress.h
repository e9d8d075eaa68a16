/* A progress bar for long work: items done/total, rate and ETA, redrawn at most 10 times a
 * second, only when stderr is a terminal and logging is not quiet. When stderr is not a
 * terminal nothing is drawn and progress_free() logs one summary line instead (quiet logs
 * for nightly jobs). Thread-safe: workers may call progress_add() concurrently. */
#ifndef LSCAT_PROGRESS_H
#define LSCAT_PROGRESS_H

#include <stdint.h>

struct progress;

/* `label` is copied. total may be 0 when unknown (then no ETA is shown). */
struct progress *progress_new(const char *label, uint64_t total);
void progress_set_total(struct progress *p, uint64_t total);
void progress_add(struct progress *p, uint64_t n);
void progress_set(struct progress *p, uint64_t done);
/* Optional short status shown after the counts (e.g. "3 failed"); copied. */
void progress_note(struct progress *p, const char *note);
/* Clear the bar, log the summary line ("label: 10/10 in 2.1 s, 4.8/s"), free. NULL is a no-op. */
void progress_free(struct progress *p);

/* Format helpers, exposed for tests: seconds as "1h02m", "3m05s", "12.3s". */
void progress_format_duration(char *out, unsigned out_size, double seconds);

#endif
