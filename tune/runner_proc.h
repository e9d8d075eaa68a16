/* Internal to tune/ (implemented in tune/runner_proc.c): a child process driven over pipes (a
 * harness, or lscat-runner) and the judgement of its results, shared by the two ways a kernel
 * runs (tune/runner.c, tune/runner_host.c call down into it). Not for other modules: use
 * tune/runner.h. */
#ifndef LSCAT_TUNE_RUNNER_PROC_H
#define LSCAT_TUNE_RUNNER_PROC_H

#include "common/buf.h"
#include "tune/runner.h"

#include <sys/types.h>

#define TAIL_BYTES 2048

/* A running harness: pid (= its process group), pipes, partial line, output tail. */
struct runner_proc {
    pid_t pid;
    int res_fd, out_fd;
    int gate_fd;           /* prestarted: its stdin's write end, -1 once configurations went */
    struct buf line;
    char tail[TAIL_BYTES];
    size_t tail_len;
    int status;  /* wait status once reaped */
    int reaped;
    int ready;             /* lscat-runner: said "@ready" */
    double started_s;      /* fs_mono_s() when it was started */
    int done_rc;           /* lscat-runner: the last "@done" code, -1 = none yet */
    char done_msg[256];
};

/* How one process (or one kernel in lscat-runner) ended. */
enum { RUNNER_DONE = 0, RUNNER_FAILED = 1, RUNNER_GIVE_UP = 2, RUNNER_STOPPED = 3,
       RUNNER_FALLBACK = 4, RUNNER_DEVICE_LOST = 5 };

/* The poll timeout until deadline (fs_mono_s): at most 100 ms. */
int runner_poll_ms(double deadline);

/* "w h bx by bz\n" per configuration: a harness's stdin. */
void runner_format_configs(struct buf *b, const struct tune_config *c, int n);
/* Start argv[0] (through common/proc, in its own process group, killed when the starting
 * thread dies): stdin a memory file holding input, or with input NULL a pipe whose write end
 * is ch->gate_fd; fd 3 (results) and stdout+stderr are non-blocking pipes to us. On failure
 * *ch is still to be released. */
int runner_proc_start(struct runner_proc *ch, const char *const *argv, const char *const *env,
                      const struct buf *input);
/* The harness's arguments after argv[0]; returns their count. */
int runner_harness_args(const char **argv, int max, char dev[16], const struct runner_options *o,
                        int occupancy);
/* Read what is there; 0 at EOF. */
int runner_proc_drain(int fd, struct runner_proc *ch, int is_results);
/* 1 when it has exited: reaped, its group killed, the rest of its output read; else 0. */
int runner_proc_exited(struct runner_proc *ch);
void runner_proc_reap_later(struct runner_proc *ch);
/* Kill its process group and reap it (unless already reaped). */
void runner_proc_kill(struct runner_proc *ch);
/* Kill its process group (reaping it unless already reaped), close its pipes. */
void runner_proc_release(struct runner_proc *ch);
void runner_proc_tail(char *out, size_t size, const struct runner_proc *ch);
/* Record cfg with status crashed/timeout/skipped and a message, without a line from the
 * harness. */
int runner_record_failure(const struct runner_callbacks *cb, struct runner_summary *out,
                          const struct tune_config *cfg, const char *status, const char *msg);
/* Record cfg as timed out ("no result within N s: killed"; first: its startup time counted). */
int runner_record_timeout(const struct runner_callbacks *cb, struct runner_summary *out,
                          const struct runner_options *o, const struct tune_config *cfg,
                          int first);
/* The deadline of configuration `next` (docs/tune.md "Long kernels"): timeout_s, or more
 * when the kernel's slowest ok median so far, extrapolated to next's size, says warm-up,
 * calibration and the (budgeted) samples need longer (counted in deadline_extended; at most
 * 4 x timeout_s). */
double runner_config_timeout(struct runner_summary *out, const struct tune_config *next,
                             double timeout_s);
/* Handle the complete lines received; stops after lscat-runner's "@done". Returns 0,
 * RUNNER_GIVE_UP (protocol breach) or <0 (callback). */
int runner_take_lines(struct runner_proc *ch, struct runner_summary *out,
                      const struct tune_config *cfgs, int n, int *i,
                      const struct runner_callbacks *cb, double *deadline, double timeout_s);
/* What the process's end (ch->status) means for the configuration in flight. */
int runner_judge_exit(struct runner_proc *ch, struct runner_summary *out,
                      const struct tune_config *cfgs, int n, int *i,
                      const struct runner_callbacks *cb);

#endif
