/* Child processes with captured output, caps, rlimits and a wall-clock timeout that kills the
 * whole process group. Uses poll() over the pipes and wait4() for the exit status and usage. */
#include "common/proc.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_limit(int resource, rlim_t value)
{
    struct rlimit rl = { value, value };
    struct rlimit cur;
    if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && value > cur.rlim_max)
        rl.rlim_cur = rl.rlim_max = cur.rlim_max;
    setrlimit(resource, &rl);
}

static void apply_limits(const struct proc_limits *l)
{
    if (l->cpu_s > 0)
        set_limit(RLIMIT_CPU, (rlim_t)(l->cpu_s + 0.999));
    if (l->as_bytes)
        set_limit(RLIMIT_AS, l->as_bytes);
    if (l->file_bytes)
        set_limit(RLIMIT_FSIZE, l->file_bytes);
    if (l->nproc)
        set_limit(RLIMIT_NPROC, (rlim_t)l->nproc);
    if (l->nofile)
        set_limit(RLIMIT_NOFILE, (rlim_t)l->nofile);
    if (!l->core_dumps)
        set_limit(RLIMIT_CORE, 0);
}

/* In the child: src becomes descriptor `to`, open across exec (dup2 onto itself would keep
 * close-on-exec). */
static int move_fd(int src, int to)
{
    if (src == to)
        return fcntl(to, F_SETFD, 0);
    return dup2(src, to) < 0 ? -1 : 0;
}

/* In the child after a failed exec: say which program could not run and why, with
 * async-signal-safe calls only (write, no stdio), then exit 127 as a shell does. */
static void child_exec_failed(const char *prog, int err)
{
    static const char head[] = "lscat: cannot execute '";
    const char *why = err == ENOENT   ? "': no such file or not on PATH\n"
                      : err == EACCES ? "': permission denied\n"
                      : err == ENOEXEC ? "': not an executable format\n"
                                       : "': exec failed\n";
    (void)!write(2, head, sizeof(head) - 1);
    (void)!write(2, prog, strlen(prog));
    (void)!write(2, why, strlen(why));
    _exit(127);
}

/* In the child: never returns. Only async-signal-safe calls until exec. extra_fd: the write end
 * for o->extra_fd, or -1. */
static void child(const struct proc_options *o, int in_fd, int out_fd, int err_fd, int extra_fd)
{
    setpgid(0, 0);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (move_fd(in_fd, 0) < 0 || (out_fd >= 0 && move_fd(out_fd, 1) < 0) ||
        (err_fd >= 0 && move_fd(err_fd, 2) < 0) ||
        (extra_fd >= 0 && move_fd(extra_fd, o->extra_fd) < 0))
        _exit(127);
    if (o->cwd && chdir(o->cwd) < 0) {
        static const char msg[] = "lscat: cannot change to the working directory\n";
        (void)!write(2, msg, sizeof(msg) - 1);
        _exit(127);
    }
    apply_limits(&o->limits);
    if (o->child_setup && o->child_setup(o->child_setup_arg) != 0)
        _exit(127);
    char *const *argv = (char *const *)o->argv;
    char *const *env = o->env ? (char *const *)o->env : environ;
    if (strchr(o->argv[0], '/'))
        execve(o->argv[0], argv, env);
    else
        execvpe(o->argv[0], argv, env);
    child_exec_failed(o->argv[0], errno);
}

/* Read what is available from fd into b up to cap; returns 0 at EOF, 1 if still open. */
static int drain(int fd, struct buf *b, size_t cap, int *truncated)
{
    char tmp[65536];
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n < 0)
        return (errno == EINTR || errno == EAGAIN) ? 1 : 0;
    if (n == 0)
        return 0;
    size_t keep = (size_t)n;
    if (b->len + keep > cap) {
        keep = b->len < cap ? cap - b->len : 0;
        *truncated = 1;
    }
    buf_add(b, tmp, keep);
    return 1;
}

static void result_init(struct proc_result *r)
{
    memset(r, 0, sizeof(*r));
    buf_init(&r->out, 0);
    buf_init(&r->err, 0);
    r->exit_code = -1;
}

void proc_result_release(struct proc_result *r)
{
    buf_release(&r->out);
    buf_release(&r->err);
}

struct pipes { int in[2], out[2], err[2]; };

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int open_pipes(struct pipes *p, const struct proc_options *o)
{
    p->in[0] = p->in[1] = p->out[0] = p->out[1] = p->err[0] = p->err[1] = -1;
    if (pipe2(p->err, O_CLOEXEC) < 0)
        return lscat_error_set("cannot create a pipe: %s", strerror(errno));
    if (o->stdout_path) {
        p->out[1] = open(o->stdout_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (p->out[1] < 0)
            return lscat_error_set("cannot create '%s': %s", o->stdout_path, strerror(errno));
    } else if (pipe2(p->out, O_CLOEXEC) < 0) {
        return lscat_error_set("cannot create a pipe: %s", strerror(errno));
    }
    if (o->stdin_data) {
        if (pipe2(p->in, O_CLOEXEC) < 0)
            return lscat_error_set("cannot create a pipe: %s", strerror(errno));
    } else {
        p->in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (p->in[0] < 0)
            return lscat_error_set("cannot open /dev/null: %s", strerror(errno));
    }
    return 0;
}

static void close_pipes(struct pipes *p)
{
    int *all[] = { &p->in[0], &p->in[1], &p->out[0], &p->out[1], &p->err[0], &p->err[1] };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        close_fd(all[i]);
}

/* The parent's loop: feed stdin, collect output, watch the clock, reap the child. */
static void supervise(struct proc_result *r, const struct proc_options *o, pid_t pid,
                      struct pipes *p, double start)
{
    size_t cap = o->out_cap_bytes ? o->out_cap_bytes : (1u << 20);
    size_t in_off = 0;
    int exited = 0, status = 0;
    double exited_at = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    if (p->in[1] >= 0)
        fcntl(p->in[1], F_SETFL, O_NONBLOCK);
    for (;;) {
        struct pollfd fds[3];
        int nfds = 0, i_out = -1, i_err = -1, i_in = -1;
        if (p->out[0] >= 0) { i_out = nfds; fds[nfds++] = (struct pollfd){ p->out[0], POLLIN, 0 }; }
        if (p->err[0] >= 0) { i_err = nfds; fds[nfds++] = (struct pollfd){ p->err[0], POLLIN, 0 }; }
        if (p->in[1] >= 0) { i_in = nfds; fds[nfds++] = (struct pollfd){ p->in[1], POLLOUT, 0 }; }
        if (!exited) {
            pid_t w = wait4(pid, &status, WNOHANG, &ru);
            if (w == pid) {
                exited = 1;
                exited_at = mono_s();
                kill(-pid, SIGKILL); /* leftovers of the group must not hold our pipes */
            }
        }
        if (exited && (nfds == 0 || mono_s() - exited_at > 1.0))
            break; /* after 1 s, whoever escaped the group keeps the pipes to itself */
        int wait_ms = exited ? 100 : 20;
        if (o->timeout_s > 0 && !exited) {
            double left = start + o->timeout_s - mono_s();
            if (left <= 0) {
                r->timed_out = 1;
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                wait4(pid, &status, 0, &ru);
                exited = 1;
                exited_at = mono_s();
                continue;
            }
            if (left * 1000 < wait_ms)
                wait_ms = (int)(left * 1000) + 1;
        }
        int n = poll(fds, (nfds_t)nfds, wait_ms);
        if (n < 0 && errno != EINTR)
            break;
        if (n == 0 && exited) /* group killed, pipes idle: a stray holder outside the group */
            break;
        if (i_out >= 0 && fds[i_out].revents && !drain(p->out[0], &r->out, cap, &r->out_truncated))
            close_fd(&p->out[0]);
        if (i_err >= 0 && fds[i_err].revents && !drain(p->err[0], &r->err, cap, &r->err_truncated))
            close_fd(&p->err[0]);
        if (i_in >= 0 && fds[i_in].revents) {
            const char *d = o->stdin_data;
            ssize_t w = write(p->in[1], d + in_off, o->stdin_len - in_off);
            if (w > 0)
                in_off += (size_t)w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off >= o->stdin_len)
                close_fd(&p->in[1]);
        }
    }
    if (WIFSIGNALED(status)) {
        r->signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        r->exit_code = WEXITSTATUS(status);
    }
    r->max_rss_kb = ru.ru_maxrss;
    r->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
}

int proc_run(struct proc_result *r, const struct proc_options *o)
{
    result_init(r);
    if (!o->argv || !o->argv[0])
        return lscat_error_set("proc_run: no program given");
    struct pipes p;
    int rc = open_pipes(&p, o);
    if (rc < 0) {
        close_pipes(&p);
        return rc;
    }
    /* A child writing to a closed stdin pipe must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    double start = mono_s();
    pid_t pid = fork();
    if (pid < 0) {
        close_pipes(&p);
        return lscat_error_set("cannot start '%s': %s", o->argv[0], strerror(errno));
    }
    if (pid == 0)
        child(o, p.in[0], p.out[1], p.err[1], -1);
    setpgid(pid, pid); /* both sides set it, so kill(-pid) works at once */
    close_fd(&p.in[0]);
    close_fd(&p.out[1]);
    close_fd(&p.err[1]);
    supervise(r, o, pid, &p, start);
    close_pipes(&p);
    r->elapsed_s = mono_s() - start;
    return 0;
}

void proc_describe(struct buf *out, const struct proc_result *r, const struct proc_options *o)
{
    if (r->timed_out)
        buf_addf(out, "timeout after %.1f s", o ? o->timeout_s : r->elapsed_s);
    else if (r->signal)
        buf_addf(out, "signal %d (%s)", r->signal, strsignal(r->signal));
    else
        buf_addf(out, "exit %d", r->exit_code);
}

/* A memory file holding len bytes of data, read from its start: a stdin that never blocks. */
static int memfd_with(const void *data, size_t len)
{
    int fd = memfd_create("lscat-stdin", MFD_CLOEXEC);
    size_t off = 0;
    while (fd >= 0 && off < len) {
        ssize_t w = write(fd, (const char *)data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close_fd(&fd);
            break;
        }
        off += (size_t)w;
    }
    if (fd >= 0 && lseek(fd, 0, SEEK_SET) < 0)
        close_fd(&fd);
    return fd;
}

/* proc_spawn's descriptors: pipes as pipe2 gives them ([0] read, [1] write); in[1] is -1 when
 * stdin is a memory file (in[0]); err is the child's stderr when it is not the stdout pipe. */
struct spawn_fds { int in[2], out[2], extra[2], err; };

static void spawn_fds_close(struct spawn_fds *f)
{
    int *all[] = { &f->in[0], &f->in[1], &f->out[0], &f->out[1], &f->extra[0], &f->extra[1],
                   &f->err };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        close_fd(all[i]);
}

static int spawn_fds_open(struct spawn_fds *f, const struct proc_options *o)
{
    f->in[0] = f->in[1] = f->out[0] = f->out[1] = f->extra[0] = f->extra[1] = f->err = -1;
    if (o->stdin_data)
        f->in[0] = memfd_with(o->stdin_data, o->stdin_len);
    if ((o->stdin_data ? f->in[0] < 0 : pipe2(f->in, O_CLOEXEC) < 0) ||
        (!o->inherit_output && pipe2(f->out, O_CLOEXEC) < 0) ||
        (o->extra_fd > 0 && pipe2(f->extra, O_CLOEXEC) < 0))
        return lscat_error_set("cannot set up pipes for '%s': %s", o->argv[0], strerror(errno));
    if (!o->stderr_to_out && !o->inherit_output &&
        (f->err = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
        return lscat_error_set("cannot open /dev/null: %s", strerror(errno));
    return 0;
}

int proc_spawn(struct proc_child *out, const struct proc_options *o)
{
    struct spawn_fds f;
    int rc = 0;
    out->pid = -1;
    out->in_fd = out->out_fd = out->extra_fd = -1;
    if (!o->argv || !o->argv[0])
        return lscat_error_set("proc_spawn: no program given");
    if (o->extra_fd > 0 && o->extra_fd < 3)
        return lscat_error_set("proc_spawn: extra_fd %d is one of stdin/stdout/stderr",
                               o->extra_fd);
    if ((rc = spawn_fds_open(&f, o)) < 0)
        goto done;
    signal(SIGPIPE, SIG_IGN); /* a dead child's stdin must not kill us */
    pid_t pid = fork();
    if (pid < 0) {
        rc = lscat_error_set("cannot start '%s': %s", o->argv[0], strerror(errno));
        goto done;
    }
    if (pid == 0)
        child(o, f.in[0], f.out[1], o->stderr_to_out ? f.out[1] : f.err, f.extra[1]);
    setpgid(pid, pid);
    out->pid = pid;
    out->in_fd = f.in[1];
    out->out_fd = f.out[0];
    out->extra_fd = f.extra[0];
    f.in[1] = f.out[0] = f.extra[0] = -1;
done:
    spawn_fds_close(&f);
    return rc;
}

/* proc_spawn_lasting: requests to one detached thread that lives as long as the process. */
struct spawn_req {
    struct proc_child *out;
    const struct proc_options *o;
    int rc, done;
    char err[512];
};
static pthread_mutex_t spawner_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawner_cv = PTHREAD_COND_INITIALIZER;
static struct spawn_req *spawner_req;
static int spawner_up;

static void *spawner_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&spawner_mu);
    for (;;) {
        while (!spawner_req || spawner_req->done)
            pthread_cond_wait(&spawner_cv, &spawner_mu);
        struct spawn_req *r = spawner_req;
        pthread_mutex_unlock(&spawner_mu);
        r->rc = proc_spawn(r->out, r->o);
        if (r->rc < 0)
            snprintf(r->err, sizeof(r->err), "%s", lscat_error_last());
        pthread_mutex_lock(&spawner_mu);
        r->done = 1;
        pthread_cond_broadcast(&spawner_cv);
    }
    return NULL;
}

int proc_spawn_lasting(struct proc_child *out, const struct proc_options *o)
{
    pthread_mutex_lock(&spawner_mu);
    if (!spawner_up) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        spawner_up = pthread_create(&t, &attr, spawner_main, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!spawner_up) { /* out of threads: this thread's lifetime it is */
            pthread_mutex_unlock(&spawner_mu);
            return proc_spawn(out, o);
        }
    }
    while (spawner_req) /* one request at a time */
        pthread_cond_wait(&spawner_cv, &spawner_mu);
    struct spawn_req r = { .out = out, .o = o };
    spawner_req = &r;
    pthread_cond_broadcast(&spawner_cv);
    while (!r.done)
        pthread_cond_wait(&spawner_cv, &spawner_mu);
    spawner_req = NULL;
    pthread_cond_broadcast(&spawner_cv);
    pthread_mutex_unlock(&spawner_mu);
    if (r.rc < 0)
        lscat_error_set("%s", r.err);
    return r.rc;
}

void proc_child_kill(struct proc_child *c)
{
    close_fd(&c->in_fd);
    close_fd(&c->out_fd);
    close_fd(&c->extra_fd);
    if (c->pid > 0) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
    }
    c->pid = -1;
}

/* ------------------------------------------------------------------ the allow-list */

static const char *const env_exact[] = { "PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH",
                                         "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                                         "LIBRARY_PATH", "ASAN_OPTIONS", "LSAN_OPTIONS",
                                         "UBSAN_OPTIONS", NULL };
static const char *const env_prefix[] = { "LC_", "CUDA_", "NVCC_", "LSCAT_", NULL };

int proc_env_allowed(const char *entry)
{
    size_t n = strcspn(entry, "=");
    for (int i = 0; env_exact[i]; i++)
        if (strlen(env_exact[i]) == n && strncmp(entry, env_exact[i], n) == 0)
            return 1;
    for (int i = 0; env_prefix[i]; i++)
        if (n > strlen(env_prefix[i]) && strncmp(entry, env_prefix[i], strlen(env_prefix[i])) == 0)
            return 1;
    return 0;
}

/* Does `extra` set the variable of `entry`? Then extra's value wins. */
static int overridden(const char *entry, const char *const *extra)
{
    size_t n = strcspn(entry, "=");
    for (size_t i = 0; extra && extra[i]; i++)
        if (strncmp(extra[i], entry, n) == 0 && extra[i][n] == '=')
            return 1;
    return 0;
}

char **proc_env_untrusted(const char *home, const char *const *extra)
{
    size_t n = 0, ne = 0, k = 0;
    while (environ[n])
        n++;
    while (extra && extra[ne])
        ne++;
    char **env = xcalloc(n + ne + 3, sizeof(*env));
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        int home_var = !strncmp(e, "HOME=", 5) || !strncmp(e, "TMPDIR=", 7);
        if ((home_var ? !home : proc_env_allowed(e)) && !overridden(e, extra))
            env[k++] = xstrdup(e);
    }
    if (home) {
        env[k++] = xasprintf("HOME=%s", home);
        env[k++] = xasprintf("TMPDIR=%s/tmp", home);
    }
    for (size_t i = 0; i < ne; i++)
        env[k++] = xstrdup(extra[i]);
    return env;
}

void proc_env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}
