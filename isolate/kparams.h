/* A kernel's parameter model and template parameters, read from its libclang cursor: the JSON
 * array of params.json, the roles and names lists the harness needs, and one line per template
 * parameter with the value the harness instantiates it with (docs/isolate.md, "Templates"). */
#ifndef LSCAT_ISOLATE_KPARAMS_H
#define LSCAT_ISOLATE_KPARAMS_H

#include "common/buf.h"

#include <clang-c/Index.h>

struct kparams {
    struct buf json;    /* "[{...},{...}]" */
    struct buf roles;   /* "buffer,width,size" */
    struct buf names;   /* "out,w,n" */
    struct buf tparams; /* "type T float\nblock BS BX\nvalue N 1\n" */
    int n;              /* parameters */
    int unsupported;    /* a template parameter lscat cannot instantiate */
};
#define KPARAMS_INIT { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, 0, 0 }

/* Fill `out` (initialised with KPARAMS_INIT) from a kernel's FunctionDecl/FunctionTemplate. */
void kparams_collect(struct kparams *out, CXCursor kernel);
void kparams_release(struct kparams *kp);

/* "ns::inner::k"; with for_call, anonymous namespaces are left out (the harness is in the same
 * translation unit), else they read "(anonymous)::". Caller frees. */
char *kparams_qualified_name(CXCursor c, int for_call);

#endif
