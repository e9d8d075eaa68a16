/* Allocation that never returns NULL: out of memory aborts with a message (git, redis), so
 * callers need no NULL checks. */
#ifndef LSCAT_XALLOC_H
#define LSCAT_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size_bytes);
void *xcalloc(size_t count, size_t size_bytes);
void *xrealloc(void *ptr, size_t size_bytes);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh heap string; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow an array to hold at least `need` items (doubling); updates *cap. */
#define XGROW(ptr, need, cap)                                                          \
    do {                                                                               \
        if ((size_t)(need) > (cap)) {                                                  \
            size_t xg_new = (cap) ? (cap) * 2 : 8;                                     \
            while (xg_new < (size_t)(need)) xg_new *= 2;                               \
            (ptr) = xrealloc((ptr), xg_new * sizeof(*(ptr)));                          \
            (cap) = xg_new;                                                            \
        }                                                                              \
    } while (0)

#endif
