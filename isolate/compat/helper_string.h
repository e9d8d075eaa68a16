/* lscat's own stand-in for the CUDA samples' helper_string.h (command-line helpers), written
 * from its documented interface, not copied; used only when a repository lacks the header. */
#ifndef LSCAT_COMPAT_HELPER_STRING_H
#define LSCAT_COMPAT_HELPER_STRING_H

#include <stdlib.h>
#include <string.h>

/* "-name" or "--name" or "-name=value" among argv. */
static inline const char *lscat_compat_find_arg(int argc, const char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc && argv; i++) {
        const char *a = argv[i];
        while (*a == '-')
            a++;
        if (strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '='))
            return a + n;
    }
    return NULL;
}

static inline bool checkCmdLineFlag(int argc, const char **argv, const char *name)
{
    return lscat_compat_find_arg(argc, argv, name) != NULL;
}

static inline int getCmdLineArgumentInt(int argc, const char **argv, const char *name)
{
    const char *v = lscat_compat_find_arg(argc, argv, name);
    return v && *v == '=' ? atoi(v + 1) : 0;
}

static inline float getCmdLineArgumentFloat(int argc, const char **argv, const char *name)
{
    const char *v = lscat_compat_find_arg(argc, argv, name);
    return v && *v == '=' ? (float)atof(v + 1) : 0.0f;
}

static inline bool getCmdLineArgumentString(int argc, const char **argv, const char *name,
                                            char **value)
{
    const char *v = lscat_compat_find_arg(argc, argv, name);
    if (!v || *v != '=')
        return false;
    *value = (char *)v + 1;
    return true;
}

#endif
