/* The x* allocation family: every allocation in lscat goes through here so that running out
 * of memory is one loud, immediate failure instead of a NULL dereference somewhere later. */
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die_oom(size_t size_bytes)
{
    fprintf(stderr, "lscat: fatal: out of memory (allocating %zu bytes)\n", size_bytes);
    abort();
}

void *xmalloc(size_t size_bytes)
{
    void *p = malloc(size_bytes ? size_bytes : 1);
    if (!p)
        die_oom(size_bytes);
    return p;
}

void *xcalloc(size_t count, size_t size_bytes)
{
    void *p = calloc(count ? count : 1, size_bytes ? size_bytes : 1);
    if (!p)
        die_oom(count * size_bytes);
    return p;
}

void *xrealloc(void *ptr, size_t size_bytes)
{
    void *p = realloc(ptr, size_bytes ? size_bytes : 1);
    if (!p)
        die_oom(size_bytes);
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0)
        die_oom(strlen(fmt));
    return p;
}
