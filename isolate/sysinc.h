/* Folders libclang searches after the tree's and the toolkit's (-idirafter): the system's OpenMP
 * (omp.h from GCC) and MPI headers, and lscat's own stand-ins for the CUDA samples' helper
 * headers (isolate/compat/), so that a tree including them without shipping them still parses. */
#ifndef LSCAT_ISOLATE_SYSINC_H
#define LSCAT_ISOLATE_SYSINC_H

#include <stddef.h>

struct sysinc {
    char **dirs;
    size_t n, cap;
};

/* Find the folders (each checked to exist; missing tools are no error). */
void sysinc_init(struct sysinc *s);
void sysinc_release(struct sysinc *s);

/* lscat's compat header folder: <exe>/../share/lscat/isolate/compat, $LSCAT_SHARE_DIR's, else
 * the source tree's. NULL when none exists. Caller frees. */
char *sysinc_compat_dir(void);

#endif
