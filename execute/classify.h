/* Reading nvcc's diagnostics: split a build log into located diagnostics and sort a failed
 * build into one documented class (docs/execute.md lists them), so the dataset says why each
 * kernel failed and the repair loop knows what to try. */
#ifndef LSCAT_EXECUTE_CLASSIFY_H
#define LSCAT_EXECUTE_CLASSIFY_H

#include <stddef.h>

enum build_class {
    CLASS_NONE = 0,               /* the build succeeded */
    CLASS_MISSING_HEADER,
    CLASS_UNDECLARED_IDENTIFIER,
    CLASS_UNKNOWN_TYPE,
    CLASS_NO_MATCHING_OVERLOAD,
    CLASS_TEMPLATE,
    CLASS_INCOMPLETE_TYPE,
    CLASS_REDEFINITION,
    CLASS_REMOVED_CUDA_API,
    CLASS_HOST_FROM_DEVICE,
    CLASS_LINK_ERROR,
    CLASS_INTERNAL_COMPILER_ERROR,
    CLASS_TIMEOUT,
    CLASS_OTHER,
    CLASS_TEMPLATE_FUNCTOR,       /* a function-object template parameter given a non-callable */
    CLASS_TEMPLATE_VALUE,         /* a template value giving a zero-sized array or a division by 0 */
    CLASS_TEMPLATE_TYPE,          /* a type parameter at float where a class or an integer is needed */
    CLASS_RESOURCE_LIMIT,         /* fixed shared/constant/local data over the target's limit */
    CLASS_STATIC_ASSERT,          /* a static_assert of the code failed (template values, macros) */
    CLASS_COUNT
};

/* One diagnostic of the log: an error (or a warning that execute treats as one, such as a
 * warp vote without _sync that compiles to code invalid on compute_70+). */
struct diag {
    char *file;          /* as nvcc printed it ("kernel.cu", a system header, NULL for ptxas/ld) */
    int line;            /* 0 when unknown */
    char *message;       /* the text after "error:" */
    char *subject;       /* the quoted name the message is about ("printf", "foo.h"), or NULL */
    enum build_class cls;
};

struct diag_list {
    struct diag *items;
    size_t count, alloc;
};
#define DIAG_LIST_INIT { NULL, 0, 0 }

/* The class's name in the store ("missing_header", ...) and back (-1 when unknown). */
const char *classify_name(enum build_class c);
int classify_from_name(const char *name);

/* Parse every error in `log` (NUL-terminated nvcc/ptxas/nvlink/ld/gcc output) into `out`
 * (appending). Warnings are skipped except those named above. */
void classify_parse(struct diag_list *out, const char *log);
void diag_list_release(struct diag_list *l);

/* The class of a failed attempt: CLASS_TIMEOUT when timed_out, else the class of the first
 * diagnostic, else CLASS_INTERNAL_COMPILER_ERROR when the log shows a compiler crash, else
 * CLASS_OTHER. `first_error` (may be NULL) receives the first diagnostic's text, capped at
 * cap_bytes; the caller frees it. */
enum build_class classify_failure(char **first_error, const struct diag_list *diags,
                                  const char *log, int timed_out, size_t cap_bytes);

/* An undefined name that the source passes to tex1Dfetch/tex1D/tex2D/tex3D/... is a texture
 * reference whose declaration (texture<...>, gone since CUDA 12) could not be carried:
 * reclassify those diagnostics as CLASS_REMOVED_CUDA_API. `src` is the kernel source. */
void classify_refine_textures(struct diag_list *diags, const char *src);

/* Whether a removed CUDA API goes by this identifier (__shfl, __any, cudaThreadSynchronize...). */
int classify_is_removed_api(const char *ident);

#endif
