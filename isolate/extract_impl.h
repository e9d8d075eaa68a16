/* The parts of the kernel extractor shared by its three files and by nothing else: extract.c
 * parses a file and collects its top-level declarations, macros and includes (struct ctx);
 * closure.c finds what one kernel or declaration needs (struct closure); emit.c writes that
 * closure out as source text and kernel records. Other files use extract.h. */
#ifndef LSCAT_ISOLATE_EXTRACT_IMPL_H
#define LSCAT_ISOLATE_EXTRACT_IMPL_H

#include "common/buf.h"
#include "isolate/extract.h"

#include <clang-c/Index.h>
#include <stddef.h>

struct file_ent {
    CXFile file;
    int in_tree;
    int allowed_system; /* outside the tree, in a system/CUDA folder */
    char *path;         /* resolved, absolute */
};

struct top_decl {   /* a declaration at file or namespace scope, in visit order */
    CXCursor c;
    CXFile file;
    unsigned start, end;
};

struct macro_def {
    CXCursor c;
    char *name;
    CXFile file;
    unsigned start, end;
    int in_tree;
};

struct macro_use {
    CXFile file;
    unsigned offset;
    int def; /* index into macros, -1 when unknown */
};

struct include_dir { /* an #include written in a file of the tree */
    CXFile file, included;
    char *text;
    char *spelling;
    int refused;
};

struct lack {      /* an error saying a name is not declared, at an expansion offset in the tree */
    CXFile file;
    unsigned offset;
    char *what;    /* the diagnostic's message (the name in quotes) */
};

struct ctx {
    const struct extract_options *o;
    size_t root_len;
    CXTranslationUnit tu;
    struct buf *out;
    struct file_ent *files;
    size_t nfiles, files_cap;
    struct top_decl *tops;
    size_t ntops, tops_cap;
    struct macro_def *macros;
    size_t nmacros, macros_cap;
    struct macro_use *uses;
    size_t nuses, uses_cap;
    struct include_dir *incs;
    size_t nincs, incs_cap;
    CXFile *inc_from, *inc_to; /* included file -> the file that included it first */
    size_t ninc_edges, inc_edges_cap;
    CXCursor *kernels;
    size_t nkernels, kernels_cap;
    CXCursor *kernel_decls; /* declarations of kernels without a definition here */
    size_t nkdecls, kdecls_cap;
    struct buf missing;     /* headers not found, "'a.h', 'b.h'" (empty: none) */
    struct lack *lacks;     /* undeclared names in files of the tree */
    size_t nlacks, lacks_cap;
    char *first_error;      /* the parse's first error, relative paths (NULL: none) */
};

/* What one kernel (or one looked-up declaration) needs from the translation unit. */
struct closure {
    struct ctx *x;
    int *units;        /* indexes into x->tops */
    size_t nunits, units_cap;
    char *macro_used;  /* per x->macros */
    CXFile *sysfiles;  /* outside files whose declarations are used */
    size_t nsys, sys_cap;
    CXCursor *work;
    size_t nwork, work_cap;
    int dynshared;
    struct buf libc_includes;
    const char *have;  /* extract_tu_decl: text already in the kernel (pieces in it are left out) */
    int pieces;        /* pieces emitted */
};

/* ---- extract.c: files, locations and the first pass */

/* The file's entry (resolved path, inside the tree or not), added on first sight. Borrowed. */
struct file_ent *extract_file_info(struct ctx *x, CXFile f);
int extract_in_tree(struct ctx *x, CXFile f);
/* The path relative to the tree for a file inside it, else the absolute one. Borrowed. */
const char *extract_rel_path(struct ctx *x, CXFile f);
/* The cursor's extent as expansion offsets in one file; 0 when it spans files or has none. */
int extract_extent(CXCursor c, CXFile *file, unsigned *start, unsigned *end);
/* The file of the cursor's expansion location; its line goes to *line unless NULL. */
CXFile extract_location_file(CXCursor c, unsigned *line);
/* Append the source text of [start, end) of a file of the translation unit to b. */
void extract_add_text(struct buf *b, struct ctx *x, CXFile f, unsigned start, unsigned end);
int extract_has_child_kind(CXCursor c, enum CXCursorKind kind);
/* Append a "note" record (class, message) to x->out. */
void extract_note(struct ctx *x, const char *cls, const char *msg);
/* The index into x->macros of the last definition named `name`, or -1. */
int extract_macro_by_name(struct ctx *x, const char *name);
/* The namespace-scope variable named `name` among x->tops, the one in near's namespace first
 * (near: a cursor of that namespace, or a null cursor), or a null cursor. */
CXCursor extract_var_by_name(struct ctx *x, const char *name, CXCursor near);

/* ---- closure.c: what a kernel or declaration needs */

void closure_init(struct closure *cl, struct ctx *x, const char *have);
void closure_release(struct closure *cl);
/* Queue declaration r (a tree declaration joins the closure, an outside one names its header). */
void closure_push_decl(struct closure *cl, CXCursor r);
/* Mark macro mi used, with the macros its definition names. */
void closure_use_macro(struct closure *cl, int mi);
/* Close what was pushed: declarations, specialisations, using-directives and macros. */
void closure_complete(struct closure *cl);

/* ---- tinst.c: template arguments from the tree's own call sites */

/* Kernel template k: where the tree calls or launches a specialisation with concrete
 * arguments, rewrite `tparams` ("kind name value" lines, isolate/kparams.h) with its class
 * types (pushed into cl) and values; block sizes and arithmetic types stay. 1 when changed. */
int tinst_from_calls(struct buf *tparams, struct ctx *x, CXCursor k, struct closure *cl);
/* An explicit specialisation defined as a kernel (`template <> __global__ void mul(half *...)`)
 * is named with its arguments ("<__half>"), else `&mul` is ambiguous; NULL for any other kernel
 * or arguments a harness cannot name. Caller frees. */
char *tinst_explicit_args(CXCursor k);

/* ---- tuse.c: template arguments from how the kernel uses them */

/* Kernel template k: a type parameter still at float whose objects the kernel uses as a class
 * (`op(a, b)`, `load.template load<N>(...)`, `traits::f()`, `v.x`) takes the tree's class that
 * declares every member used (pushed into cl), or float2/3/4 for x/y/z/w. 1 when changed. */
int tinst_from_uses(struct buf *tparams, struct ctx *x, CXCursor k, struct closure *cl);

/* ---- launch.c: the repository's own launch of a kernel */

#define LAUNCH_EXPR_MAX 160
struct launch_src {
    int has_block, has_grid; /* 1 when the first constant launch's block (grid) is known */
    int block[3], grid[3];
    long long smem;          /* its dynamic shared memory bytes; -1 unknown */
    int bounds;              /* __launch_bounds__ maximum threads; 0 none or not constant */
    int block_eq[3];         /* `assert(blockDim.x == 32)` in the kernel: the x, y, z it asserts;
                              * 0 where none (docs/isolate.md "Block asserts") */
    /* The grid as expressions over the kernel's own parameters (docs/isolate.md "grid_expr"):
     * x, y, z in lscat's small language; [0][0] '\0' when not expressible or constant. */
    char grid_expr[3][LAUNCH_EXPR_MAX];
    int grid_sm;             /* grid x = grid_sm x the device's multiProcessorCount; 0 none */
    struct buf fixed;        /* fixed.c's "fixed ..." lines: the source's buffer sizes */
};

/* The first launch `k<<<g, b, smem>>>` of kernel k in the tree whose block is constant, and its
 * `__launch_bounds__`. */
void launch_find(struct launch_src *out, struct ctx *x, CXCursor k);
/* The launch's hard-coded problem size (isolate/fixed.c, docs/isolate.md "Fixed sizes"): the
 * grid `prop.multiProcessorCount [* N]` into out->grid_sm, and, when every pointer argument is
 * a variable the launching function allocates with a constant `cudaMalloc(&p, bytes)` and no
 * argument is an integer, "fixed I BYTES ELEM" lines (and "fixedsize W H") into out->fixed.
 * call: the launch's CallExpr; fn: the top-level declaration holding it; cfg: its
 * __cudaPushCallConfiguration call. */
void fixed_find(struct launch_src *out, struct ctx *x, CXCursor call, CXCursor fn, CXCursor cfg);
/* launch.c's evaluation, shared with fixed.c: e without implicit casts and parentheses; an
 * integer constant expression or a variable initialised with one (1 and *v); a token's value
 * (a literal, or a macro of one). */
CXCursor launch_unwrap(CXCursor e);
int launch_scalar(long long *v, CXCursor e, int depth);
int launch_token_value(long long *v, struct ctx *x, const char *tok, int depth);
/* Release launch_find's out (its fixed lines). */
void launch_src_release(struct launch_src *l);

/* As the kernel record's "launch" field: "block X Y Z", "smem N", "grid X Y Z", "bounds N",
 * "grid_expr X;Y;Z" lines, the known ones only ("" when nothing is known). */
void launch_text(struct buf *b, const struct launch_src *l);

/* ---- emit.c: the closure as source text */

/* Append the closure's source to b: system includes, macros, then declarations in
 * translation-unit order wrapped in their namespaces (pieces `have` holds are left out). */
void emit_source(struct buf *b, struct closure *cl);
/* Append kernel k's "kernel" record (or a note saying why it is skipped: unsupported template
 * parameters, or a name only a missing header declares) to x->out. */
void emit_kernel(struct ctx *x, CXCursor k);

#endif
