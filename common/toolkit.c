/* The lookups of nvcc and of lscat's shared sources (tune/timing.cu, tune/sweep_host.cu, the
 * compat headers), once for execute/build.c and tune/usersweep_build.c, which each kept a copy
 * of the same search. */
#include "common/toolkit.h"

#include "common/fs.h"
#include "common/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *toolkit_find_nvcc(const char *given)
{
    if (given)
        return access(given, X_OK) == 0 ? xstrdup(given) : NULL;
    const char *home = getenv("CUDA_HOME");
    char *c = xasprintf("%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
    if (access(c, X_OK) == 0)
        return c;
    free(c);
    char *copy = xstrdup(getenv("PATH") ? getenv("PATH") : ""), *save = NULL, *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = fs_join(d, "nvcc");
        if (access(p, X_OK) == 0)
            found = p;
        else
            free(p);
    }
    free(copy);
    return found;
}

static int has_marker(const char *dir, const char *marker)
{
    char *p = fs_join(dir, marker);
    int ok = fs_exists(p);
    free(p);
    return ok;
}

char *toolkit_find_share(const char *marker, const char *source_dir)
{
    const char *env = getenv("LSCAT_SHARE_DIR");
    if (env && *env)
        return has_marker(env, marker) ? xstrdup(env) : NULL;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        char *d = xasprintf("%s/../share/lscat", exe);
        if (has_marker(d, marker))
            return d;
        free(d);
    }
    return source_dir && has_marker(source_dir, marker) ? xstrdup(source_dir) : NULL;
}
