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
    struct buf members; /* the harness's struct members to set (members_collect's lines) */
    struct buf note;    /* why an argument stays out of reach ("" when none) */
    int n;              /* parameters */
    int unsupported;    /* a template parameter lscat cannot instantiate */
};
#define KPARAMS_INIT { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, 0, 0 }

/* Fill `out` (initialised with KPARAMS_INIT) from a kernel's FunctionDecl/FunctionTemplate. */
void kparams_collect(struct kparams *out, CXCursor kernel);
void kparams_release(struct kparams *kp);

/* "ns::inner::k"; with for_call, anonymous namespaces are left out (the harness is in the same
 * translation unit), else they read "(anonymous)::". Caller frees. */
char *kparams_qualified_name(CXCursor c, int for_call);

/* isolate/members.c. Append to `out` one line per member of `record` the harness sets, for
 * parameter `param` (deref 0: the record by value; 1: each element of an array of it through a
 * pointer): "PARAM DEREF OFFSET KIND BYTES ELEMKIND ELEMBYTES CONST ROLE NAME", KIND p pointer,
 * s/u signed/unsigned integer, f floating, b bool; ELEMKIND the same for a pointer's elements
 * (x: anything else, filled as floats). Fields of non-virtual bases and of records held by
 * value (one level) are included, bit-fields, arrays and unions are not, nor float members of
 * array elements (they keep the harness's fill). Nothing is added when
 * the record has no pointer member (its plain values keep the old fill) or virtual functions.
 * Returns the pointer members added. */
int members_collect(struct buf *out, int param, int deref, CXType record);
/* 1 when the record type (or a base) has virtual functions or a virtual base. */
int members_is_polymorphic(CXType t);

#endif
