/* The sandbox: bubblewrap when it works, else a network namespace and Landlock set up in the
 * child; always rlimits, an unprivileged uid when we are root (what it cannot reach is copied or
 * bound back for it), and the process-group timeout of common/proc.c. Detection runs once. */
#include "execute/sandbox.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_WRITE ((1ULL << 1) | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) | \
                     (1ULL << 8) | (1ULL << 9) | (1ULL << 10) | (1ULL << 11) | (1ULL << 12))
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_NET_TCP ((1ULL << 0) | (1ULL << 1)) /* bind and connect, ABI >= 4 */

struct ll_ruleset_attr { uint64_t handled_access_fs, handled_access_net; };
struct ll_path_beneath { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

static pthread_mutex_t detect_lock = PTHREAD_MUTEX_INITIALIZER;
static int detected;
static struct sandbox_caps caps;
static int uid_block;      /* this process's block of slot uids */
static char work_blocker[PATH_MAX]; /* caps.work_blocker points here */
static char work_real[PATH_MAX];    /* the work folder, resolved (caps.rebind_work) */

/* Take a block of uids no other lscat process holds (the lock lives as long as we do). */
static int take_uid_block(void)
{
    int start = (int)(getpid() % SANDBOX_UID_BLOCKS);
    for (int i = 0; i < SANDBOX_UID_BLOCKS; i++) {
        int b = (start + i) % SANDBOX_UID_BLOCKS;
        char path[64];
        snprintf(path, sizeof(path), "/tmp/lscat-sandbox-uids-%d.lock", b);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            return b; /* fd stays open: the lock is ours until exit */
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

int sandbox_slot_uid(int slot)
{
    return SANDBOX_UID_BASE + uid_block * SANDBOX_UID_SLOTS + slot % SANDBOX_UID_SLOTS;
}

/* What the child does between fork and exec (async-signal-safe calls only). */
struct child_ctx {
    int use_bwrap;
    int netns;
    int landlock;
    const char *scratch;
    int uid; /* -1: keep ours */
    int mntns;       /* without bwrap, as root: private world-writable folders (below) */
    int landlock_net; /* GPU probes without a network namespace: Landlock ABI (>= 4) for TCP only */
    int shared_under[4]; /* scratch lies under shared_dirs[i]: that one is re-bound read-only */
    int die_with_parent; /* SIGKILL when the thread that started it ends (long-lived children) */
    int own_fd;          /* > 0: this pipe becomes the slot uid's, so the child can reopen it
                          * (`--results /dev/fd/3` opens /proc/self/fd/3: the pipe's own mode) */
    const char *reach_blocker; /* with mntns: a folder the slot uid cannot enter, on the way */
    const char *reach_dir;     /* to this one (the work folder): see rebind_work() */
    const char *cwd;           /* entered again once the mounts are made (NULL: stay) */
    int nice;                  /* added to the niceness (sandbox_options.nice) */
};

/* The world-writable folders a dropped uid could still write to: inside the sandbox each is a
 * private tmpfs (gone with the run), or, when the scratch folder lies under it, the same folder
 * read-only with the scratch folder writable inside. */
static const char *const shared_dirs[] = { "/tmp", "/var/tmp", "/dev/shm", "/run/lock" };
#define NSHARED 4

/* Writes only under the scratch folder and to /dev/null (nothing else in /dev: /dev/shm is
 * world-writable); with ABI >= 4 no TCP bind/connect. net_only (GPU probes, which the CUDA
 * driver's file access rules out of the file rules): TCP only. */
static int landlock_child(const struct child_ctx *c, int net_only)
{
    int abi = net_only ? c->landlock_net : c->landlock;
    struct ll_ruleset_attr attr = { net_only ? 0 : LL_FS_WRITE, abi >= 4 ? LL_NET_TCP : 0 };
    size_t size = abi >= 4 ? sizeof(attr) : sizeof(uint64_t);
    int rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rfd < 0)
        return -1;
    const char *writable[] = { c->scratch, "/dev/null", NULL };
    const uint64_t rights[] = { LL_FS_WRITE, LL_FS_WRITE_FILE };
    for (int i = 0; !net_only && writable[i]; i++) {
        int fd = open(writable[i], O_PATH | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct ll_path_beneath pb = { rights[i], fd };
        syscall(SYS_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0);
        close(fd);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    int rc = (int)syscall(SYS_landlock_restrict_self, rfd, 0);
    close(rfd);
    return rc;
}

static int drop_uid(int uid)
{
    gid_t g = (gid_t)uid;
    if (setgroups(1, &g) != 0 || setgid(g) != 0 || setuid((uid_t)uid) != 0)
        return -1;
    return 0;
}

/* In a new mount namespace (root, before dropping the uid): the shared world-writable folders
 * become private (see shared_dirs). Async-signal-safe: syscalls only. */
static int private_shared_dirs(const struct child_ctx *c, int *reach_fd)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    /* in this namespace (a bind needs its source here), before anything hides it */
    if (c->reach_dir)
        *reach_fd = open(c->reach_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int rebound = 0;
    for (int i = 0; i < NSHARED; i++) {
        struct stat st;
        const char *d = shared_dirs[i];
        if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (!c->shared_under[i]) {
            if (mount("lscat-sandbox", d, "tmpfs", MS_NOSUID | MS_NODEV,
                      "size=64m,mode=1777") != 0)
                return -1;
            continue;
        }
        /* the scratch folder becomes a mount of its own, then d read-only around it */
        if (!rebound && mount(c->scratch, c->scratch, NULL, MS_BIND, NULL) != 0)
            return -1;
        rebound = 1;
        if (mount(d, d, NULL, MS_BIND | MS_REC, NULL) != 0 ||
            mount(NULL, d, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                  NULL) != 0)
            return -1;
    }
    return 0;
}

/* "/proc/self/fd/<fd>" without stdio (async-signal-safe). */
static void fd_path(char out[32], int fd)
{
    char digits[12];
    int n = 0;
    do
        digits[n++] = (char)('0' + fd % 10), fd /= 10;
    while (fd > 0 && n < 11);
    memcpy(out, "/proc/self/fd/", 14);
    for (int i = 0; i < n; i++)
        out[14 + i] = digits[n - 1 - i];
    out[14 + n] = '\0';
}

/* In the child's mount namespace (root, before the uid switch): the folder that shuts the slot
 * uid out becomes an empty tmpfs (0755) holding only the way down to the work folder, which is
 * bound back at its own path from `fd` (opened before anything was mounted). The rest of that
 * folder is hidden from the run; the work folder keeps its own modes. Syscalls only. */
static int rebind_work(const struct child_ctx *c, int fd)
{
    char path[PATH_MAX], src[32];
    size_t n = strlen(c->reach_dir), b = strlen(c->reach_blocker);
    if (fd < 0 || n >= sizeof(path) || b >= n ||
        mount("lscat-sandbox", c->reach_blocker, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=1m,mode=0755") != 0)
        return -1;
    memcpy(path, c->reach_dir, n + 1);
    for (size_t i = b + 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        path[i] = i < n ? '/' : '\0';
    }
    fd_path(src, fd);
    return mount(src, c->reach_dir, NULL, MS_BIND | MS_REC, NULL);
}

static int child_setup(void *arg)
{
    const struct child_ctx *c = arg;
    if (!c->use_bwrap) {
        int rfd = -1;
        if (c->netns && unshare(CLONE_NEWNET) != 0)
            return -1;
        if (c->mntns && private_shared_dirs(c, &rfd) != 0)
            return -1;
        if (c->mntns && c->reach_dir && rebind_work(c, rfd) != 0)
            return -1;
        if (rfd >= 0)
            close(rfd);
        /* the folder proc_run entered before the mounts would still be the unmounted view */
        if (c->mntns && c->cwd && chdir(c->cwd) != 0)
            return -1;
        if (c->landlock && landlock_child(c, 0) != 0)
            return -1;
        if (!c->landlock && c->landlock_net && landlock_child(c, 1) != 0)
            return -1;
    }
    /* before the uid change: a niceness only goes up, and the slot uid inherits it */
    errno = 0;
    if (c->nice && nice(c->nice) == -1 && errno != 0)
        return -1;
    if (c->uid >= 0 && c->own_fd > 0 && fchown(c->own_fd, (uid_t)c->uid, (gid_t)c->uid) != 0)
        return -1;
    if (c->uid >= 0 && drop_uid(c->uid) != 0)
        return -1;
    /* after the uid change, which clears it */
    if (c->die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return -1;
    return 0;
}

/* The first folder from the root on the way to `path` (itself included when it is a folder)
 * that a uid other than its owner cannot enter (no o+x), in blocker; "" when every one lets it
 * through. 0, or -1 when `path` does not exist. */
static int find_blocker(char blocker[PATH_MAX], const char *path)
{
    char real[PATH_MAX];
    struct stat st;
    blocker[0] = '\0';
    if (!realpath(path, real))
        return -1;
    if (stat("/", &st) == 0 && !(st.st_mode & S_IXOTH)) {
        snprintf(blocker, PATH_MAX, "/");
        return 0;
    }
    for (char *p = real + 1; !blocker[0]; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (stat(real, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH))
            snprintf(blocker, PATH_MAX, "%s", real);
        *p = c;
        if (!c)
            break;
    }
    return 0;
}

/* find_blocker as the slot uids see it: under the rebind (caps.rebind_work) the work folder
 * and what lies in it are open to them. */
static int find_blocker_seen(char blocker[PATH_MAX], const char *path)
{
    char real[PATH_MAX];
    int rc = find_blocker(blocker, path);
    size_t n = strlen(work_real);
    if (rc == 0 && blocker[0] && caps.rebind_work && realpath(path, real) &&
        !strncmp(real, work_real, n) && (real[n] == '/' || !real[n]) &&
        strlen(blocker) < n)
        blocker[0] = '\0';
    return rc;
}

char *sandbox_blocker(const char *path)
{
    char b[PATH_MAX];
    if (!sandbox_detect(NULL)->drop_uid || find_blocker_seen(b, path) != 0 || !b[0])
        return NULL;
    return xstrdup(b);
}

/* Can the slot uids read src_dir/rel[i] (and run it, where its owner can)? */
static int all_readable(const char *src_dir, const char *const *rel)
{
    int ok = 1;
    for (int i = 0; ok && rel[i]; i++) {
        char *p = fs_join(src_dir, rel[i]), b[PATH_MAX];
        struct stat st;
        ok = stat(p, &st) == 0 && find_blocker_seen(b, p) == 0 && !b[0] &&
             (st.st_mode & S_IROTH) && (!(st.st_mode & S_IXUSR) || (st.st_mode & S_IXOTH));
        free(p);
    }
    return ok;
}

/* The copy's name: sandbox-<16 hex of the names and contents>. */
static int share_hash(char hex[65], struct buf *data, const char *src_dir, const char *const *rel)
{
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    for (int i = 0; rel[i]; i++) {
        char *p = fs_join(src_dir, rel[i]);
        int rc = buf_read_file(&data[i], p);
        free(p);
        if (rc < 0)
            return rc;
        uint64_t n = data[i].len;
        sha256_update(&c, rel[i], strlen(rel[i]) + 1);
        sha256_update(&c, &n, sizeof(n));
        sha256_update(&c, data[i].data, data[i].len);
    }
    sha256_final(&c, d);
    sha256_to_hex(hex, d);
    return 0;
}

/* mkdir -p dir, every folder it makes (and dir) 0755 whatever the umask. */
static int mkdirs_open(const char *dir)
{
    int rc = fs_mkdirs(dir, 0755);
    if (rc == 0 && chmod(dir, 0755) != 0)
        rc = lscat_error_set("cannot chmod '%s': %s", dir, strerror(errno));
    return rc;
}

/* Write the files into tmp (folders 0755, files 0644 or 0755), then rename it to dir. */
static int write_share(const char *tmp, const char *dir, const char *src_dir,
                       const char *const *rel, const struct buf *data)
{
    int rc = mkdirs_open(tmp);
    for (int i = 0; rc == 0 && rel[i]; i++) {
        char *src = fs_join(src_dir, rel[i]), *dst = fs_join(tmp, rel[i]);
        char *parent = xstrdup(dst), *slash = strrchr(parent, '/');
        struct stat st;
        *slash = '\0';
        mode_t mode = stat(src, &st) == 0 && (st.st_mode & S_IXUSR) ? 0755 : 0644;
        rc = strcmp(parent, tmp) ? mkdirs_open(parent) : 0;
        int fd = rc == 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) : -1;
        if (rc == 0 && (fd < 0 || fchmod(fd, mode) != 0 ||
                        write(fd, data[i].data, data[i].len) != (ssize_t)data[i].len))
            rc = lscat_error_set("cannot write '%s': %s", dst, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(src), free(dst), free(parent);
    }
    if (rc == 0 && rename(tmp, dir) != 0 && !fs_is_dir(dir)) /* another run's copy is as good */
        rc = lscat_error_set("cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
    return rc;
}

int sandbox_share(char **out, const char *src_dir, const char *const *rel, const char *stage_root)
{
    size_t n = 0;
    while (rel[n])
        n++;
    *out = NULL;
    if (!sandbox_detect(NULL)->drop_uid || all_readable(src_dir, rel)) {
        *out = xstrdup(src_dir);
        return 0;
    }
    struct buf *data = xcalloc(n + 1, sizeof(*data));
    char hex[65], *dir = NULL, *tmp = NULL;
    int rc = share_hash(hex, data, src_dir, rel);
    if (rc < 0)
        goto done;
    hex[16] = '\0';
    dir = xasprintf("%s/sandbox-%s", stage_root, hex);
    tmp = xasprintf("%s.tmp.%ld", dir, (long)getpid());
    rc = mkdirs_open(stage_root);
    if (rc == 0 && !fs_is_dir(dir)) {
        fs_remove_tree(tmp);
        rc = write_share(tmp, dir, src_dir, rel, data);
        fs_remove_tree(tmp);
    }
    if (rc == 0)
        *out = dir, dir = NULL, rc = 1;
done:
    for (size_t i = 0; i < n; i++)
        buf_release(&data[i]);
    free(data);
    free(dir);
    free(tmp);
    return rc;
}

/* Which of shared_dirs hold the scratch folder (re-bound read-only around it, not replaced). */
static void set_shared_under(struct child_ctx *c, const char *scratch)
{
    for (int i = 0; i < NSHARED; i++) {
        size_t n = strlen(shared_dirs[i]);
        c->shared_under[i] = !strncmp(scratch, shared_dirs[i], n) &&
                             (scratch[n] == '/' || !scratch[n]);
    }
}

static int try_child(const char *const *argv, struct child_ctx *c);

/* Without bubblewrap, as root: a work folder behind a folder others cannot enter is bound back
 * for the slot uids in each child's mount namespace (rebind_work). Tried once: the slot uid
 * must then be able to enter it. */
static void detect_rebind(const char *work_dir)
{
    if (!realpath(work_dir, work_real) || !strcmp(work_blocker, "/") ||
        (uid_block = take_uid_block()) < 0)
        return;
    struct child_ctx r = { 0, 0, 0, work_real, sandbox_slot_uid(0), 1, 0, { 0 }, 0, 0,
                           work_blocker, work_real, NULL, 0 };
    set_shared_under(&r, work_real);
    const char *argv[] = { "test", "-x", work_real, NULL };
    caps.drop_uid = caps.rebind_work = try_child(argv, &r);
}

static int try_child(const char *const *argv, struct child_ctx *c)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.timeout_s = 20;
    o.child_setup = child_setup;
    o.child_setup_arg = c;
    int ok = proc_run(&r, &o) == 0 && !r.timed_out && !r.signal && r.exit_code == 0;
    proc_result_release(&r);
    return ok;
}

/* Without bubblewrap: what a child can set up alone (and, as root with a work folder behind a
 * closed folder, whether the rebind makes it reachable). */
static void detect_fallback(const char *work_dir)
{
    const char *true_argv[] = { "true", NULL };
    struct child_ctx n = { 0, 1, 0, "/", -1, 0, 0, { 0 }, 0, 0, NULL, NULL, NULL, 0 };
    caps.netns = caps.root && try_child(true_argv, &n);
    struct child_ctx m = { 0, 0, 0, "/", -1, 1, 0, { 0 }, 0, 0, NULL, NULL, NULL, 0 };
    caps.mntns = caps.root && try_child(true_argv, &m);
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    caps.landlock = abi > 0 ? (int)abi : 0;
    if (caps.landlock) {
        struct child_ctx l = { 0, 0, caps.landlock, "/tmp", -1, 0, 0, { 0 }, 0, 0, NULL, NULL,
                               NULL, 0 };
        if (!try_child(true_argv, &l))
            caps.landlock = 0;
    }
    if (caps.work_blocker && caps.mntns)
        detect_rebind(work_dir);
}

/* bubblewrap with a slot uid when it works. A work folder behind a closed folder: bubblewrap
 * could only run as root there, so the fallback with the rebind (slot uids) comes first. */
static void detect(const char *work_dir)
{
    const char *mode = getenv("LSCAT_SANDBOX");
    int want_bwrap = !mode || strcmp(mode, "fallback") != 0;
    int none = mode && strcmp(mode, "none") == 0, fallback_known = 0;
    caps.root = geteuid() == 0;
    struct child_ctx c = { 0, 0, 0, "/", -1, 0, 0, { 0 }, 0, 0, NULL, NULL, NULL, 0 };
    const char *true_argv[] = { "true", NULL };
    if (caps.root && !none && work_dir && find_blocker(work_blocker, work_dir) == 0 &&
        work_blocker[0])
        caps.work_blocker = work_blocker;
    if (caps.root && !none && work_dir && !caps.work_blocker &&
        (uid_block = take_uid_block()) >= 0) {
        c.uid = sandbox_slot_uid(0);
        caps.drop_uid = try_child(true_argv, &c);
    }
    if (caps.work_blocker && !none) {
        detect_fallback(work_dir);
        fallback_known = 1;
    }
    c.uid = caps.drop_uid ? sandbox_slot_uid(0) : -1;
    if (want_bwrap && !none && !caps.rebind_work) {
        const char *argv[] = { "bwrap", "--die-with-parent", "--unshare-net", "--unshare-pid",
                               "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                               "--", "true", NULL };
        c.use_bwrap = 1;
        caps.bwrap = try_child(argv, &c);
        c.use_bwrap = 0;
    }
    if (!caps.bwrap && !none && !fallback_known)
        detect_fallback(work_dir);
}

/* LSCAT_SANDBOX_DISABLE=landlock,uid,netns,bwrap: turn single protections off (diagnosis). */
static void apply_disable(void)
{
    const char *d = getenv("LSCAT_SANDBOX_DISABLE");
    if (!d)
        return;
    if (strstr(d, "landlock"))
        caps.landlock = 0;
    if (strstr(d, "uid"))
        caps.drop_uid = caps.rebind_work = 0;
    if (strstr(d, "netns"))
        caps.netns = 0;
    if (strstr(d, "bwrap"))
        caps.bwrap = 0;
    if (strstr(d, "mntns"))
        caps.mntns = 0;
    if (!caps.mntns && caps.rebind_work) /* it needs the mount namespace */
        caps.drop_uid = caps.rebind_work = 0;
}

const struct sandbox_caps *sandbox_detect(const char *work_dir)
{
    pthread_mutex_lock(&detect_lock);
    if (!detected) {
        detect(work_dir);
        apply_disable();
        detected = 1;
    }
    pthread_mutex_unlock(&detect_lock);
    return &caps;
}

/* The fallback's "in force" and "missing" parts (no bubblewrap). */
static void describe_fallback(struct buf *out, struct buf *missing, const struct sandbox_caps *c)
{
    if (c->rebind_work)
        buf_adds(out, "bubblewrap not used (under it the work folder, past a closed folder, "
                      "would need root);");
    else
        buf_adds(out, "no bubblewrap (install the 'bubblewrap' package);");
    buf_adds(missing, " read-only system view (system files are protected by permissions only),"
                      " pid namespace (other processes are visible)");
    if (c->netns)
        buf_adds(out, " network namespace");
    else if (c->landlock >= 4)
        buf_adds(out, " TCP connect/bind blocked by Landlock"),
            buf_adds(missing, ", network isolation beyond TCP (UDP, raw)");
    else
        buf_adds(missing, ", network isolation");
    if (c->landlock)
        buf_addf(out, ", build writes confined by Landlock ABI %d (probes: CUDA fails under "
                      "its file rules)", c->landlock);
    else
        buf_adds(missing, ", write confinement of builds");
    if (c->mntns)
        buf_adds(out, ", private /tmp, /var/tmp, /dev/shm, /run/lock");
    if (c->rebind_work)
        buf_addf(out, ", the work folder bound back past '%s' (others cannot enter it; the "
                 "rest of it is hidden from the runs)", c->work_blocker);
    if (!c->drop_uid)
        buf_adds(missing, ", write confinement of GPU probes");
    else if (!c->mntns)
        buf_adds(missing, ", private /tmp and /dev/shm (probes can write there)");
}

int sandbox_describe(struct buf *out, const struct sandbox_caps *c)
{
    struct buf missing = BUF_INIT;
    if (c->bwrap)
        buf_adds(out, "bubblewrap: no network, read-only system, private /tmp, one writable "
                      "folder, GPU device files");
    else
        describe_fallback(out, &missing, c);
    buf_adds(out, c->drop_uid ? ", unprivileged per-slot uid (cannot read the store)" : "");
    buf_adds(out, ", rlimits (cpu, file size, processes), wall-clock timeout, allow-listed "
                  "environment");
    if (!c->drop_uid)
        buf_adds(&missing, missing.len ? ", " : " ");
    if (!c->drop_uid && c->root && c->work_blocker)
        buf_addf(&missing, "a separate uid and the process limit: the sandbox's uids cannot "
                 "enter '%s' (no search permission for others) on the way to the work folder, "
                 "so untrusted code runs as root (run 'chmod o+x %s', or choose a --work "
                 "folder others can reach)", c->work_blocker, c->work_blocker);
    else if (!c->drop_uid && c->root)
        buf_adds(&missing, "process limit (root ignores RLIMIT_NPROC; make the work folder o+x)");
    else if (!c->drop_uid)
        buf_adds(&missing, "a separate uid (probes run as you: they can read the store and "
                           "leave daemons behind)");
    int any = missing.len > 0;
    if (any)
        buf_addf(out, "; MISSING:%s", missing.data);
    buf_release(&missing);
    return any;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void push(char ***v, size_t *n, size_t *cap, const char *s)
{
    XGROW(*v, *n + 2, *cap);
    (*v)[(*n)++] = xstrdup(s);
    (*v)[*n] = NULL;
}

static char **bwrap_argv(const struct sandbox_options *o, const char *cwd)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    const char *fixed[] = { "bwrap", "--die-with-parent", "--unshare-net", "--unshare-pid",
                            "--unshare-ipc", "--unshare-uts", "--ro-bind", "/", "/", "--dev",
                            "/dev", "--proc", "/proc", "--tmpfs", "/tmp", NULL };
    for (int i = 0; fixed[i]; i++)
        push(&v, &n, &cap, fixed[i]);
    /* The work folder stays readable even when it is under /tmp. */
    const char *ros[] = { o->ro_dir, o->ro_dir2 };
    for (int k = 0; k < 2; k++) {
        if (!ros[k])
            continue;
        const char *ro[] = { "--ro-bind", ros[k], ros[k], NULL };
        for (int i = 0; ro[i]; i++)
            push(&v, &n, &cap, ro[i]);
    }
    if (o->gpu) {
        glob_t g;
        if (glob("/dev/nvidia*", 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++) {
                const char *d[] = { "--dev-bind", g.gl_pathv[i], g.gl_pathv[i], NULL };
                for (int j = 0; d[j]; j++)
                    push(&v, &n, &cap, d[j]);
            }
        }
        globfree(&g);
    }
    const char *tail[] = { "--bind", o->scratch_dir, o->scratch_dir, "--chdir", cwd, "--", NULL };
    for (int i = 0; tail[i]; i++)
        push(&v, &n, &cap, tail[i]);
    for (int i = 0; o->argv[i]; i++)
        push(&v, &n, &cap, o->argv[i]);
    return v;
}

static int prepare_scratch(const char *scratch, int uid)
{
    char *tmp = fs_join(scratch, "tmp");
    int rc = fs_mkdirs(tmp, 0755);
    if (rc == 0 && uid >= 0 && (chown(scratch, (uid_t)uid, (gid_t)uid) != 0 ||
                                chown(tmp, (uid_t)uid, (gid_t)uid) != 0))
        rc = lscat_error_set("cannot hand '%s' to the sandbox uid %d: %s", scratch, uid,
                             strerror(errno));
    free(tmp);
    return rc;
}

/* Kill every process of the slot's uid: what escaped the process group (setsid) dies too. */
static void reap_slot(int uid)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (drop_uid(uid) == 0)
            kill(-1, SIGKILL); /* as that uid: reaches exactly its processes */
        _exit(0);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

/* What sandbox_run and sandbox_spawn share: the child's set-up, its environment, its argv. */
struct launch {
    struct child_ctx ctx;
    char **env, **argv;
    struct proc_options po;
};

static int launch_init(struct launch *l, const struct sandbox_options *o)
{
    const struct sandbox_caps *c = sandbox_detect(NULL);
    /* The CUDA driver fails under Landlock ("OS call failed", measured on the H100 hosts):
     * GPU runs rely on the network namespace and the unprivileged uid instead. */
    struct child_ctx ctx = { c->bwrap, c->netns, o->gpu ? 0 : c->landlock, o->scratch_dir,
                             c->drop_uid ? sandbox_slot_uid(o->slot) : -1, c->mntns,
                             o->gpu && !c->netns && c->landlock >= 4 ? c->landlock : 0, { 0 },
                             o->die_with_parent, 0, NULL, NULL, NULL, o->nice };
    set_shared_under(&ctx, o->scratch_dir);
    const char *cwd = o->cwd ? o->cwd : o->scratch_dir;
    if (c->rebind_work && !c->bwrap)
        ctx.reach_blocker = work_blocker, ctx.reach_dir = work_real;
    ctx.cwd = cwd;
    l->ctx = ctx;
    l->env = proc_env_untrusted(o->scratch_dir, o->extra_env);
    l->argv = c->bwrap ? bwrap_argv(o, cwd) : NULL;
    struct proc_options po = PROC_OPTIONS_INIT;
    po.argv = l->argv ? (const char *const *)l->argv : o->argv;
    po.env = (const char *const *)l->env;
    po.cwd = cwd;
    po.stdin_data = o->stdin_data;
    po.stdin_len = o->stdin_len;
    po.out_cap_bytes = o->out_cap_bytes;
    po.timeout_s = o->timeout_s;
    po.limits.cpu_s = o->cpu_s;
    po.limits.file_bytes = o->file_bytes ? o->file_bytes : ((size_t)1 << 30);
    po.limits.nproc = o->nproc ? o->nproc : (ctx.uid >= 0 ? 256 : 4096);
    po.child_setup = child_setup;
    l->po = po; /* child_setup_arg points into l: set by the caller once l stays put */
    return prepare_scratch(o->scratch_dir, ctx.uid);
}

static void launch_release(struct launch *l)
{
    proc_env_free(l->env);
    free_strv(l->argv);
}

int sandbox_run(struct proc_result *out, const struct sandbox_options *o)
{
    struct launch l;
    int rc = launch_init(&l, o);
    if (rc < 0) {
        memset(out, 0, sizeof(*out));
        buf_init(&out->out, 0);
        buf_init(&out->err, 0);
        goto done;
    }
    l.po.child_setup_arg = &l.ctx;
    rc = proc_run(out, &l.po);
    if (l.ctx.uid >= 0)
        reap_slot(l.ctx.uid);
done:
    launch_release(&l);
    return rc;
}

int sandbox_spawn(struct proc_child *out, const struct sandbox_options *o, int extra_fd)
{
    struct launch l;
    out->pid = -1;
    out->in_fd = out->out_fd = out->extra_fd = -1;
    int rc = launch_init(&l, o);
    if (rc == 0) {
        l.po.stdin_data = NULL; /* a pipe: requests go there */
        l.po.extra_fd = extra_fd;
        l.po.stderr_to_out = 1;
        l.ctx.own_fd = extra_fd;
        l.po.child_setup_arg = &l.ctx;
        rc = proc_spawn(out, &l.po);
    }
    launch_release(&l);
    return rc;
}

void sandbox_reap_slot(int slot)
{
    if (sandbox_detect(NULL)->drop_uid)
        reap_slot(sandbox_slot_uid(slot));
}

/* The value of a "Key:" line of /proc/<pid>/status (Uid: its real uid), or -1. */
static long proc_status(const char *pid, const char *key)
{
    char path[64], line[256];
    long v = -1;
    size_t n = strlen(key);
    snprintf(path, sizeof(path), "/proc/%s/status", pid);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n)) {
            v = strtol(line + n, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

static long proc_uid(const char *pid)
{
    return proc_status(pid, "Uid:");
}

/* Whether pid is `keep` or, with `tree`, one of its descendants. */
static int kept(pid_t pid, pid_t keep, int tree)
{
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        if (pid == keep)
            return 1;
        if (!tree)
            return 0;
        char s[24];
        snprintf(s, sizeof s, "%d", (int)pid);
        pid = (pid_t)proc_status(s, "PPid:");
    }
    return 0;
}

/* Whether /proc/<pid> (as text) is a zombie: the state after the command's ')' in stat. */
static int proc_zombie(const char *pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] == 'Z';
}

/* One pass over /proc: SIGKILL every process whose uid is in [lo, hi], but `keep` (with `tree`,
 * its descendants too; 0: none) and, with `live`, zombies (they only wait to be reaped). Returns
 * how many were signalled. */
static int kill_uids(long lo, long hi, pid_t keep, int tree, int live)
{
    int n = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        long uid = pid > 0 ? proc_uid(e->d_name) : -1;
        if (uid < lo || uid > hi || (keep > 0 && kept(pid, keep, tree)) ||
            (live && proc_zombie(e->d_name)))
            continue;
        n += kill(pid, SIGKILL) == 0;
    }
    if (d)
        closedir(d);
    return n;
}

static int sweep(int slot, pid_t keep, int tree)
{
    /* Under bubblewrap `keep` is bwrap, the runner its grandchild, and leftovers live in its
     * pid namespace (they die with it): nothing to tell apart from outside. */
    if (!sandbox_detect(NULL)->drop_uid || sandbox_detect(NULL)->bwrap)
        return 0;
    long uid = sandbox_slot_uid(slot);
    int killed = 0, found = 1;
    for (int round = 0; round < 8 && found; round++) { /* what forks while we look, next round */
        found = kill_uids(uid, uid, keep, tree, 0);
        killed += found;
    }
    return killed;
}

int sandbox_wait_slots(double max_s)
{
    const struct sandbox_caps *c = sandbox_detect(NULL);
    if (!c->drop_uid || c->bwrap || uid_block < 0)
        return 0;
    long lo = sandbox_slot_uid(0), hi = lo + SANDBOX_UID_SLOTS - 1;
    double t0 = fs_mono_s();
    for (;;) {
        int left = kill_uids(lo, hi, 0, 0, 1);
        if (!left || fs_mono_s() - t0 >= max_s)
            return left;
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

int sandbox_sweep_slot(int slot, pid_t keep)
{
    return sweep(slot, keep, 0);
}

int sandbox_sweep_slot_tree(int slot, pid_t keep)
{
    return sweep(slot, keep, 1);
}
