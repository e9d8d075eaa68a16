/* The hostile-program set against the sandbox as probes and builds get it (issue 13): connect to
 * 127.0.0.1 and to another address of this machine, write outside the scratch folder, start
 * 10,000 processes, print 1 GiB, leave a double-forked daemon sleeping forever, read the store,
 * read GITHUB_TOKEN. One line per attack and sandbox use says `# <use> <attack>: blocked|open -
 * <detail>`, then a test line (ok / not ok / skip when this machine cannot provide that
 * protection, e.g. not root). LSCAT_SANDBOX=fallback (as scripts/device-sandbox-hostile.sh and
 * sandbox_hostile_fallback.c set it) runs it without bubblewrap, as on the GPU nodes. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "execute/sandbox.h"
#include "store/store.h"
#include "tests/support/test.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define CANARY "canary-hostile-7f3a"

static const char evil_src[] =
    "#include <arpa/inet.h>\n#include <fcntl.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "#include <string.h>\n#include <sys/prctl.h>\n#include <sys/socket.h>\n#include <unistd.h>\n"
    "static int tcp(const char *ip, int port) {\n"
    "  int s = socket(AF_INET, SOCK_STREAM, 0);\n"
    "  struct sockaddr_in a; memset(&a, 0, sizeof a); a.sin_family = AF_INET;\n"
    "  a.sin_port = htons(port); inet_pton(AF_INET, ip, &a.sin_addr);\n"
    "  if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) { printf(\"connected\\n\"); return 0; }\n"
    "  perror(\"connect\"); return 5;\n}\n"
    "int main(int argc, char **argv) {\n"
    "  const char *w = argv[1];\n"
    "  if (!strcmp(w, \"connect\")) return tcp(argv[2], atoi(argv[3]));\n"
    "  if (!strcmp(w, \"write\")) { int ok = 0;\n"
    "    for (int i = 2; i < argc; i++) { FILE *f = fopen(argv[i], \"w\");\n"
    "      if (f && fputs(\"x\", f) >= 0 && fclose(f) == 0) { printf(\"wrote %s\\n\", argv[i]); ok = 1; } }\n"
    "    return ok ? 0 : 5; }\n"
    "  if (!strcmp(w, \"fork\")) { int n = 0;\n"
    "    for (int i = 0; i < 10000; i++) { pid_t p = fork(); if (p == 0) { sleep(120); _exit(0); }\n"
    "      if (p > 0) n++; }\n"
    "    printf(\"started %d\\n\", n); fflush(stdout); return n == 10000 ? 0 : 5; }\n"
    "  if (!strcmp(w, \"print\")) { static char b[1 << 20]; memset(b, 'x', sizeof b);\n"
    "    for (int i = 0; i < 1024; i++) if (fwrite(b, 1, sizeof b, stdout) != sizeof b) return 5;\n"
    "    return 0; }\n"
    "  if (!strcmp(w, \"daemon\")) { if (fork() == 0) { setsid(); if (fork() == 0) {\n"
    "      prctl(PR_SET_NAME, \"lscat-hostiled\"); for (;;) pause(); } _exit(0); }\n"
    "    sleep(1); return 0; }\n"
    "  if (!strcmp(w, \"read\")) { int fd = open(argv[2], O_RDONLY); char b[4096];\n"
    "    ssize_t n = fd >= 0 ? read(fd, b, sizeof b) : -1;\n"
    "    if (n <= 0) { perror(\"read\"); return 5; }\n"
    "    printf(\"read %zd bytes\\n\", n); fwrite(b, 1, (size_t)n, stdout); return 0; }\n"
    "  if (!strcmp(w, \"token\")) { const char *t = getenv(\"GITHUB_TOKEN\");\n"
    "    printf(\"GITHUB_TOKEN=%s\\n\", t ? t : \"(unset)\"); return t ? 0 : 5; }\n"
    "  return 2;\n}\n";

static char *dir; /* 0755: the program, the store (work folder, readable); scratch/ writable */
static const struct sandbox_caps *caps;
static int use_gpu; /* 1: as a probe (no Landlock), 0: as an nvcc build */
static int open_count;

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    dir = xasprintf("%s/lscat-hostile-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir))
        test_fail(__FILE__, __LINE__, "mkdtemp");
    chmod(dir, 0755);
    char *src = fs_join(dir, "evil.c"), *bin = fs_join(dir, "evil");
    test_write_file(src, evil_src, strlen(evil_src));
    const char *argv[] = { "cc", "-O1", "-o", bin, src, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.timeout_s = 120;
    if (proc_run(&r, &o) < 0 || r.exit_code != 0)
        test_fail(__FILE__, __LINE__, "cannot build the hostile program: %s", r.err.data);
    proc_result_release(&r);
    char *db = fs_join(dir, "lscat.db");
    struct store *s = NULL;
    if (store_open(&s, db, STORE_CREATE) < 0 ||
        store_exec(s, "CREATE TABLE secret(v TEXT); INSERT INTO secret VALUES ('" CANARY "')") < 0)
        test_fail(__FILE__, __LINE__, "store: %s", lscat_error_last());
    store_free(s);
    free(db);
    free(src);
    free(bin);
    setenv("GITHUB_TOKEN", CANARY, 1);
    caps = sandbox_detect(dir);
    struct buf b = BUF_INIT;
    sandbox_describe(&b, caps);
    printf("# sandbox: %s\n", b.data);
    buf_release(&b);
}

static struct proc_result run(const char *const *args, double timeout_s, int slot)
{
    char *bin = fs_join(dir, "evil"), *scratch = fs_join(dir, "scratch");
    const char *argv[16] = { bin };
    for (int i = 0; args[i] && i < 14; i++)
        argv[i + 1] = args[i];
    struct sandbox_options o = SANDBOX_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.scratch_dir = scratch;
    o.ro_dir = dir;
    o.slot = slot;
    o.gpu = use_gpu;
    o.timeout_s = timeout_s;
    o.out_cap_bytes = 64 << 10; /* as probes */
    o.file_bytes = 64 << 20;
    if (fs_mkdirs(scratch, 0755) < 0 || sandbox_run(&r, &o) < 0)
        test_fail(__FILE__, __LINE__, "sandbox_run: %s", lscat_error_last());
    free(bin);
    free(scratch);
    return r;
}

static const char *use(void)
{
    return use_gpu ? "probe" : "build";
}

/* The verdict line; an open attack fails the test where this machine could have contained it
 * (`can`), else the test is skipped saying why. */
static void verdict(const char *attack, int blocked, const char *detail, int can, const char *why)
{
    printf("# %s %s: %s - %s\n", use(), attack, blocked ? "blocked" : "open", detail);
    if (blocked)
        return;
    open_count++;
    if (!can)
        test_skip("open here: %s", why);
    test_fail(__FILE__, __LINE__, "%s %s is open: %s", use(), attack, detail);
}

/* What this machine's sandbox can contain (sandbox.h, struct sandbox_caps). */
static int can_network(void)
{
    return caps->bwrap || caps->netns || caps->landlock >= 4;
}

static int can_writes(void)
{
    return caps->bwrap ? 1 : caps->drop_uid && (use_gpu ? caps->mntns : caps->landlock > 0);
}

static void last_line(char *out, size_t cap, const struct proc_result *r)
{
    const char *s = r->err.len ? r->err.data : r->out.data;
    size_t n = strcspn(s, "\n");
    snprintf(out, cap, "exit %d%s: %.*s", r->exit_code, r->timed_out ? " (timed out)" : "",
             (int)(n > 160 ? 160 : n), s);
}

static int listener(int *port, uint32_t addr)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = addr;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 4) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0)
        test_fail(__FILE__, __LINE__, "cannot listen");
    *port = ntohs(a.sin_port);
    return s;
}

static void connect_to(const char *attack, const char *ip, uint32_t bind_addr)
{
    int port = 0, s = listener(&port, bind_addr);
    char portbuf[16], detail[256];
    snprintf(portbuf, sizeof(portbuf), "%d", port);
    const char *args[] = { "connect", ip, portbuf, NULL };
    struct proc_result r = run(args, 60, 0);
    int conn = accept(s, NULL, NULL);
    close(s);
    if (conn >= 0)
        close(conn);
    last_line(detail, sizeof(detail), &r);
    verdict(attack, conn < 0 && r.exit_code != 0, detail, can_network(),
            "no bubblewrap, no network namespace (not root), Landlock < 4");
    proc_result_release(&r);
}

static void test_hostile__cannot_connect_to_127_0_0_1(void)
{
    connect_to("connect 127.0.0.1", "127.0.0.1", htonl(INADDR_LOOPBACK));
}

static void test_hostile__cannot_connect_to_another_address(void)
{
    struct ifaddrs *ifs = NULL, *i;
    char ip[INET_ADDRSTRLEN] = "";
    if (getifaddrs(&ifs) == 0)
        for (i = ifs; i && !ip[0]; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
                inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
    freeifaddrs(ifs);
    if (!ip[0])
        test_skip("this machine has no address besides 127.0.0.1");
    char attack[64];
    snprintf(attack, sizeof(attack), "connect %s", ip);
    connect_to(attack, ip, htonl(INADDR_ANY));
}

static void test_hostile__cannot_write_outside_the_scratch_folder(void)
{
    char *beside = fs_join(dir, "beside.txt");
    char tmp[64], vtmp[64], shm[64], detail[512] = "";
    snprintf(tmp, sizeof(tmp), "/tmp/lscat-hostile-%d", (int)getpid());
    snprintf(vtmp, sizeof(vtmp), "/var/tmp/lscat-hostile-%d", (int)getpid());
    snprintf(shm, sizeof(shm), "/dev/shm/lscat-hostile-%d", (int)getpid());
    const char *targets[] = { beside, tmp, vtmp, shm, NULL };
    const char *args[] = { "write", beside, tmp, vtmp, shm, NULL };
    struct proc_result r = run(args, 60, 0);
    int escaped = 0;
    for (int i = 0; targets[i]; i++) /* seen from outside: a private /tmp holds nothing here */
        if (fs_exists(targets[i])) {
            escaped = 1;
            snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "%s ", targets[i]);
            unlink(targets[i]);
        }
    if (!escaped)
        snprintf(detail, sizeof(detail), "none of %s, /tmp, /var/tmp, /dev/shm (child: exit %d)",
                 dir, r.exit_code);
    verdict("write outside the scratch folder", !escaped, detail, can_writes(),
            "no bubblewrap, and not root (no separate uid, no private /tmp) or no Landlock");
    proc_result_release(&r);
    free(beside);
}

/* Processes still alive whose name is `comm` (zombies excepted), or of uid `uid` (>= 0). */
static int alive(const char *comm, int uid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        char path[300], buf[256];
        snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        int u = -2, zombie = 0, named = 0;
        while (f && fgets(buf, sizeof(buf), f)) {
            if (!strncmp(buf, "Name:", 5) && comm && strstr(buf, comm))
                named = 1;
            if (!strncmp(buf, "Uid:", 4))
                u = atoi(buf + 4);
            if (!strncmp(buf, "State:", 6) && strchr(buf, 'Z'))
                zombie = 1;
        }
        if (f)
            fclose(f);
        n += !zombie && (named || (uid >= 0 && u == uid));
    }
    if (d)
        closedir(d);
    return n;
}

struct settle_args {
    const char *comm;
    int uid;
};

static int none_alive(void *arg)
{
    const struct settle_args *a = arg;
    return alive(a->comm, a->uid) == 0;
}

/* What is left of the run's processes once they are gone; where the sandbox is expected to
 * end them (`contained`), it waits for that however long a busy machine takes. */
static int settle(const char *comm, int uid, int contained)
{
    struct settle_args a = { comm, uid };
    if (contained)
        test_wait_until(none_alive, &a);
    return alive(comm, uid);
}

static void test_hostile__cannot_start_10000_processes(void)
{
    char detail[256];
    const char *args[] = { "fork", NULL };
    struct proc_result r = run(args, 60, 1);
    int left = settle(NULL, caps->drop_uid ? sandbox_slot_uid(1) : -1, caps->drop_uid);
    snprintf(detail, sizeof(detail), "%.*s; %d left after the run", (int)strcspn(r.out.data, "\n"),
             r.out.len ? r.out.data : "(no output)", caps->drop_uid ? left : 0);
    verdict("fork 10,000 processes", r.exit_code != 0 && (!caps->drop_uid || left == 0), detail,
            caps->drop_uid, "no separate uid (not root, or the work folder is not o+x)");
    proc_result_release(&r);
}

static void test_hostile__printing_1_gib_keeps_64_kib(void)
{
    char detail[256];
    const char *args[] = { "print", NULL };
    double t0 = fs_mono_s();
    struct proc_result r = run(args, 120, 2);
    snprintf(detail, sizeof(detail), "kept %zu bytes (truncated %d) in %.1f s, exit %d%s", r.out.len,
             r.out_truncated, fs_mono_s() - t0, r.exit_code, r.timed_out ? ", timed out" : "");
    verdict("print 1 GiB", r.out.len <= (64 << 10) && r.out_truncated, detail, 1, "");
    proc_result_release(&r);
}

static void test_hostile__a_double_forked_daemon_does_not_outlive_the_run(void)
{
    char detail[256];
    const char *args[] = { "daemon", NULL };
    struct proc_result r = run(args, 60, 3);
    int left = settle("lscat-hostiled", -1, caps->bwrap || caps->drop_uid);
    snprintf(detail, sizeof(detail), "%d daemon(s) alive after the run%s", left,
             left ? " (killed now by the test)" : "");
    if (left) { /* do not leave it behind */
        struct proc_result k;
        const char *kill_argv[] = { "pkill", "-x", "lscat-hostiled", NULL };
        struct proc_options o = PROC_OPTIONS_INIT;
        o.argv = kill_argv;
        if (proc_run(&k, &o) == 0)
            proc_result_release(&k);
    }
    verdict("double-forked daemon sleeping forever", left == 0, detail,
            caps->bwrap || caps->drop_uid, "no bubblewrap and no separate uid");
    proc_result_release(&r);
}

static void test_hostile__cannot_read_the_store(void)
{
    char *db = fs_join(dir, "lscat.db"), detail[256];
    const char *args[] = { "read", db, NULL };
    struct proc_result r = run(args, 60, 0);
    last_line(detail, sizeof(detail), &r);
    verdict("read the store", r.exit_code != 0 && !strstr(r.out.data, CANARY), detail,
            caps->drop_uid, "no separate uid: the program runs as the store's owner");
    proc_result_release(&r);
    free(db);
}

static void test_hostile__cannot_read_github_token(void)
{
    char detail[256];
    const char *args[] = { "token", NULL };
    struct proc_result r = run(args, 60, 0);
    last_line(detail, sizeof(detail), &r);
    verdict("read GITHUB_TOKEN", !strstr(r.out.data, CANARY), detail, 1, "");
    proc_result_release(&r);
}

static void run_all(void)
{
    static const struct { const char *name; void (*fn)(void); } tests[] = {
        { "cannot_connect_to_127_0_0_1", test_hostile__cannot_connect_to_127_0_0_1 },
        { "cannot_connect_to_another_address", test_hostile__cannot_connect_to_another_address },
        { "cannot_write_outside_the_scratch_folder",
          test_hostile__cannot_write_outside_the_scratch_folder },
        { "cannot_start_10000_processes", test_hostile__cannot_start_10000_processes },
        { "printing_1_gib_keeps_64_kib", test_hostile__printing_1_gib_keeps_64_kib },
        { "a_double_forked_daemon_does_not_outlive_the_run",
          test_hostile__a_double_forked_daemon_does_not_outlive_the_run },
        { "cannot_read_the_store", test_hostile__cannot_read_the_store },
        { "cannot_read_github_token", test_hostile__cannot_read_github_token },
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        char name[160];
        snprintf(name, sizeof(name), "sandbox_hostile__%s%s_%s", caps->bwrap ? "" : "fallback_",
                 use(), tests[i].name);
        test_run(name, tests[i].fn);
    }
}

int main(void)
{
#ifdef SANDBOX_FORCE_MODE
    setenv("LSCAT_SANDBOX", SANDBOX_FORCE_MODE, 1);
#endif
    setup();
    for (use_gpu = 1; use_gpu >= 0; use_gpu--)
        run_all();
    printf("# %d attack(s) open\n", open_count);
    if (!getenv("LSCAT_KEEP_TMP"))
        fs_remove_tree(dir);
    free(dir);
    return test_done();
}
