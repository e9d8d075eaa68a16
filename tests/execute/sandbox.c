/* The sandbox against misbehaving programs (built here with cc): network, writes outside the
 * scratch folder, a fork bomb, a process group that outlives its timeout. Each check skips,
 * saying why, when this machine cannot provide that protection. sandbox_fallback.c runs the
 * same tests without bubblewrap. */
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "execute/sandbox.h"
#include "tests/support/test.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;          /* 0755, holds the programs; scratch/ inside is the writable one */
static const struct sandbox_caps *caps;

static const char evil_src[] =
    "#include <arpa/inet.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <sys/socket.h>\n#include <unistd.h>\n"
    "int main(int argc, char **argv) {\n"
    "  if (!strcmp(argv[1], \"connect\")) {\n"
    "    int s = socket(AF_INET, SOCK_STREAM, 0);\n"
    "    struct sockaddr_in a; memset(&a, 0, sizeof a); a.sin_family = AF_INET;\n"
    "    a.sin_port = htons(atoi(argv[2])); inet_pton(AF_INET, \"127.0.0.1\", &a.sin_addr);\n"
    "    return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 5;\n"
    "  }\n"
    "  if (!strcmp(argv[1], \"write\")) {\n"
    "    FILE *f = fopen(argv[2], \"w\");\n"
    "    return f && fputs(\"x\", f) >= 0 && fclose(f) == 0 ? 0 : 5;\n"
    "  }\n"
    "  if (!strcmp(argv[1], \"forkbomb\")) for (;;) fork();\n"
    "  if (!strcmp(argv[1], \"linger\")) { if (fork() == 0) { setsid(); } sleep(3600); }\n"
    "  return 2;\n}\n";

static void setup(void)
{
    if (dir)
        return;
    const char *base = getenv("TMPDIR");
    dir = xasprintf("%s/lscat-sbx-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir))
        test_fail(__FILE__, __LINE__, "mkdtemp");
    chmod(dir, 0755);
    char *src = fs_join(dir, "evil.c"), *bin = fs_join(dir, "evil");
    test_write_file(src, evil_src, strlen(evil_src));
    const char *argv[] = { "cc", "-O1", "-o", bin, src, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.timeout_s = 60;
    CHECK_OK(proc_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 0);
    proc_result_release(&r);
    free(src);
    free(bin);
    caps = sandbox_detect(dir);
}

/* A run of argv in slot: scratch (made here) its folder, the test folder read-only. */
static struct sandbox_options options(const char **argv, const char *scratch, int slot)
{
    struct sandbox_options o = SANDBOX_OPTIONS_INIT;
    o.argv = argv;
    o.scratch_dir = scratch;
    o.ro_dir = dir;
    o.slot = slot;
    CHECK_OK(fs_mkdirs(scratch, 0755));
    return o;
}

static struct proc_result run(const char *what, const char *arg, double timeout_s, int slot)
{
    char *bin = fs_join(dir, "evil"), *scratch = fs_join(dir, "scratch");
    const char *argv[] = { bin, what, arg, NULL };
    struct sandbox_options o = options(argv, scratch, slot);
    struct proc_result r;
    o.timeout_s = timeout_s;
    CHECK_OK(sandbox_run(&r, &o));
    free(bin);
    free(scratch);
    return r;
}

static void test_sandbox__says_what_is_in_force(void)
{
    setup();
    struct buf b = BUF_INIT;
    int missing = sandbox_describe(&b, caps);
    CHECK_CONTAINS(b.data, "rlimits");
    if (!caps->bwrap)
        CHECK(missing);
    if (missing)
        CHECK_CONTAINS(b.data, "MISSING:");
    printf("# sandbox: %s\n", b.data);
    buf_release(&b);
}

static void test_sandbox__blocks_the_network(void)
{
    setup();
    if (!caps->bwrap && !caps->netns && caps->landlock < 4)
        test_skip("no network isolation on this machine (no bwrap, no netns, Landlock < 4)");
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 4) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&a, &len) == 0);
    char port[16];
    snprintf(port, sizeof(port), "%d", ntohs(a.sin_port));
    struct proc_result r = run("connect", port, 20, 0);
    int conn = accept(s, NULL, NULL);
    close(s);
    if (conn >= 0)
        close(conn);
    CHECK_INT(r.exit_code, ==, 5);
    CHECK_INT(conn, <, 0);
    proc_result_release(&r);
}

static void test_sandbox__confines_writes_to_the_scratch_folder(void)
{
    setup();
    if (!caps->bwrap && !caps->landlock && !caps->drop_uid)
        test_skip("no write confinement on this machine (no bwrap, no Landlock, not root)");
    char *inside = fs_join(dir, "scratch/inside.txt"), *outside = fs_join(dir, "outside.txt");
    struct proc_result r = run("write", inside, 20, 0);
    CHECK_INT(r.exit_code, ==, 0);
    CHECK(fs_exists(inside));
    proc_result_release(&r);
    r = run("write", outside, 20, 0);
    CHECK_INT(r.exit_code, ==, 5);
    CHECK(!fs_exists(outside));
    proc_result_release(&r);
    free(inside);
    free(outside);
}

/* Processes of the given uid still alive (zombies excepted). */
static int processes_of(int uid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        char path[300], buf[256];
        snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        int u = -1, zombie = 0;
        while (f && fgets(buf, sizeof(buf), f)) {
            if (!strncmp(buf, "Uid:", 4))
                u = atoi(buf + 4);
            if (!strncmp(buf, "State:", 6) && strchr(buf, 'Z'))
                zombie = 1;
        }
        if (f)
            fclose(f);
        n += u == uid && !zombie;
    }
    if (d)
        closedir(d);
    return n;
}

static int none_of_uid(void *uid)
{
    return processes_of(*(int *)uid) == 0;
}

static void test_sandbox__stops_a_fork_bomb(void)
{
    setup();
    if (caps->root && !caps->drop_uid)
        test_skip("root without an unprivileged uid: RLIMIT_NPROC would not hold");
    int uid = sandbox_slot_uid(3);
    struct proc_result r = run("forkbomb", "", 2, 3); /* a fork bomb never ends */
    CHECK(r.timed_out);
    proc_result_release(&r);
    if (caps->drop_uid) {
        test_wait_until(none_of_uid, &uid);
        CHECK_INT(processes_of(uid), ==, 0);
    }
}

static void test_sandbox__timeout_kills_what_the_program_started(void)
{
    setup();
    int uid = sandbox_slot_uid(4);
    double t0 = fs_mono_s();
    struct proc_result r = run("linger", "", 1, 4); /* it sleeps an hour */
    CHECK(r.timed_out);
    CHECK(fs_mono_s() - t0 < 1800); /* the sleeper holding the pipes was not waited for */
    proc_result_release(&r);
    if (caps->drop_uid) { /* setsid escapes the group, not the pid namespace nor the slot uid */
        test_wait_until(none_of_uid, &uid);
        CHECK_INT(processes_of(uid), ==, 0);
    }
}

static int some_of_uid(void *uid)
{
    return processes_of(*(int *)uid) > 0;
}

/* The end of a run (execute's pool) waits for what its slots still run: killed, and gone when
 * it returns, so that no runner outlives lscat with a GPU context. */
static void test_sandbox__the_end_of_a_run_leaves_no_process_of_its_slots(void)
{
    setup();
    if (!caps->drop_uid || caps->bwrap)
        test_skip("no per-slot uids here (root without bubblewrap: sandbox_fallback runs this)");
    char *scratch = fs_join(dir, "scratch-wait");
    const char *argv[] = { "sleep", "600", NULL };
    struct sandbox_options o = options(argv, scratch, 6);
    struct proc_child ch;
    CHECK_OK(sandbox_spawn(&ch, &o, 0));
    int uid = sandbox_slot_uid(6);
    test_wait_until(some_of_uid, &uid);
    CHECK_INT(sandbox_wait_slots(600), ==, 0); /* a sleep dies at once: never the 600 s */
    CHECK_INT(processes_of(uid), ==, 0);
    proc_child_kill(&ch); /* reaps it */
    free(scratch);
}

/* execute's builds beside probes run niced (--build-nice): the program and what it starts
 * get the niceness added, whatever uid the sandbox gives them. */
static void test_sandbox__a_nice_run_and_its_children_are_niced(void)
{
    setup();
    char *scratch = fs_join(dir, "scratch");
    /* the shell's child (the second nice) reports: what the program starts inherits it */
    const char *argv[] = { "sh", "-c", "nice; sh -c nice", NULL };
    struct sandbox_options o = options(argv, scratch, 5);
    struct proc_result r;
    o.timeout_s = 600;
    o.nice = 7;
    CHECK_OK(sandbox_run(&r, &o));
    CHECK_INT(r.exit_code, ==, 0);
    errno = 0;
    int own = getpriority(PRIO_PROCESS, 0), want = own + 7 > 19 ? 19 : own + 7;
    char expect[32];
    snprintf(expect, sizeof expect, "%d\n%d\n", want, want);
    CHECK_STR(r.out.data, expect);
    proc_result_release(&r);
    o.nice = 0; /* the default leaves it as it is */
    CHECK_OK(sandbox_run(&r, &o));
    snprintf(expect, sizeof expect, "%d\n%d\n", own, own);
    CHECK_STR(r.out.data, expect);
    proc_result_release(&r);
    free(scratch);
}

int main(void)
{
#ifdef SANDBOX_FORCE_MODE
    setenv("LSCAT_SANDBOX", SANDBOX_FORCE_MODE, 1);
#endif
    TEST_RUN(test_sandbox__says_what_is_in_force);
    TEST_RUN(test_sandbox__blocks_the_network);
    TEST_RUN(test_sandbox__confines_writes_to_the_scratch_folder);
    TEST_RUN(test_sandbox__stops_a_fork_bomb);
    TEST_RUN(test_sandbox__timeout_kills_what_the_program_started);
    TEST_RUN(test_sandbox__the_end_of_a_run_leaves_no_process_of_its_slots);
    TEST_RUN(test_sandbox__a_nice_run_and_its_children_are_niced);
    if (dir && !getenv("LSCAT_KEEP_TMP"))
        fs_remove_tree(dir);
    free(dir);
    return test_done();
}
