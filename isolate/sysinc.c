/* The fallback include folders of isolate's parse (sysinc.h): asked once per run from the
 * tools that know them (`gcc -print-file-name=include`, `mpicc --showme:incdirs`) and handed to
 * every parse worker, which adds them with -idirafter so the tree's own headers still win. */
#include "isolate/sysinc.h"

#include "common/fs.h"
#include "common/proc.h"
#include "common/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LSCAT_SOURCE_DIR
#define LSCAT_SOURCE_DIR "."
#endif

static void add_dir(struct sysinc *s, const char *d, size_t n)
{
    char *p = xstrndup(d, n);
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->dirs[i], p) == 0)
            n = 0;
    if (n && fs_is_dir(p)) {
        XGROW(s->dirs, s->n + 1, s->cap);
        s->dirs[s->n++] = p;
        return;
    }
    free(p);
}

/* Run argv (a few seconds at most) and add every whitespace-separated word it prints. */
static void add_from_tool(struct sysinc *s, const char *const *argv)
{
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = argv;
    o.timeout_s = 30;
    o.out_cap_bytes = 1 << 16;
    if (proc_run(&r, &o) < 0)
        return;
    if (r.exit_code == 0 && r.out.data)
        for (const char *p = r.out.data; *p;) {
            size_t n = strcspn(p, " \t\r\n");
            if (n)
                add_dir(s, p, n);
            p += n + strspn(p + n, " \t\r\n");
        }
    proc_result_release(&r);
}

static int has_compat(const char *dir)
{
    char *p = fs_join(dir, "helper_cuda.h");
    int ok = fs_exists(p);
    free(p);
    return ok;
}

char *sysinc_compat_dir(void)
{
    const char *env = getenv("LSCAT_SHARE_DIR");
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *c[3] = { NULL, NULL, xasprintf("%s/isolate/compat", LSCAT_SOURCE_DIR) };
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        c[0] = xasprintf("%s/../share/lscat/isolate/compat", exe);
    }
    if (env && *env)
        c[1] = xasprintf("%s/isolate/compat", env);
    char *found = NULL;
    for (int i = 0; i < 3; i++) {
        if (!found && c[i] && has_compat(c[i]))
            found = realpath(c[i], NULL);
        free(c[i]);
    }
    return found;
}

void sysinc_init(struct sysinc *s)
{
    memset(s, 0, sizeof *s);
    static const char *const gcc[] = { "gcc", "-print-file-name=include", NULL };
    static const char *const mpi[] = { "mpicc", "--showme:incdirs", NULL };
    add_from_tool(s, gcc);
    add_from_tool(s, mpi);
    char *compat = sysinc_compat_dir();
    if (compat)
        add_dir(s, compat, strlen(compat));
    free(compat);
}

void sysinc_release(struct sysinc *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->dirs[i]);
    free(s->dirs);
    memset(s, 0, sizeof *s);
}
