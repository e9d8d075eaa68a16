/* The repair resolver backed by lscat-isolate's resolve service (`lscat isolate resolve
 * --serve`): a repository's definition of a missing name comes with its own closure, found by
 * libclang, while execute itself never links libclang (GPU nodes have none). One service child
 * per execute run, started on first use, spoken to under a mutex (repairs run in parallel build
 * threads), with a timeout per request; restarted when it hangs or dies. When it cannot be
 * found or started, or keeps failing, requests fall back to execute/reposearch.c's textual
 * search, and the log says so once. */
#ifndef LSCAT_EXECUTE_ISORESOLVE_H
#define LSCAT_EXECUTE_ISORESOLVE_H

#include "execute/repair.h"

struct isoresolve_options {
    const char *exe;          /* lscat-isolate to run; NULL: isoresolve_find_exe() */
    const char *cuda_home;    /* passed as --cuda-home; NULL: the service's default */
    double timeout_s;         /* per request (0: 120; the first, which loads libclang, gets 2x) */
    int max_starts;           /* starts before giving up for the run (0: 3) */
};

#define ISORESOLVE_OPTIONS_INIT { .exe = NULL, .cuda_home = NULL, .timeout_s = 0, \
                                  .max_starts = 0 }

struct isoresolve;

/* Nothing is started here. Caller frees with isoresolve_free (kills the child). */
struct isoresolve *isoresolve_new(const struct isoresolve_options *o);
void isoresolve_free(struct isoresolve *r);

/* The resolver to hand to repairs; borrowed from `r`. Each answer says which resolver served
 * it: "isolate" or "text" (the fallback). */
const struct repair_resolver *isoresolve_resolver(struct isoresolve *r);

/* Counts for logs and tests: requests answered by the service, by the textual fallback, and
 * how many times the service was started. */
void isoresolve_stats(const struct isoresolve *r, int *served, int *fallback, int *starts);

/* Where lscat-isolate is: with $LSCAT_BIN set, only there; else beside this program
 * (/proc/self/exe), else on PATH. Caller frees; NULL when not found. */
char *isoresolve_find_exe(void);

#endif
