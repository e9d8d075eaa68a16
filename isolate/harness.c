/* Harness generation. Only the prefix depends on the kernel; the body that follows it is the
 * same text for every kernel, embedded from isolate/harness_kernel.cu.in at build time
 * (harness_body_text): the code templated on the kernel's argument types. The rest of the
 * harness is the harness core (isolate/harness_core.cu), compiled once and linked into every
 * harness (execute/build.c). Template kernels whose
 * parameters name a block or tile size are instantiated once per block value and dispatched
 * at run time on block x (docs/isolate.md, "Templates"). */
#include "isolate/harness.h"

#include "common/xalloc.h"
#include "isolate/indexing.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char harness_body_text[];

static const int values_2d[] = { 8, 16, 24, 32 };
static const int values_1d[] = { 32, 64, 128, 256, 512, 1024 };

int harness_block_values(const int **out, int is2d)
{
    *out = is2d ? values_2d : values_1d;
    return is2d ? 4 : 6;
}

void harness_template_args(struct buf *out, const struct harness_kernel *k, const char *block)
{
    if (!k->is_template)
        return;
    buf_addch(out, '<');
    int n = 0;
    const char *p = k->tparams;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char kind[16] = "", name[128] = "", value[128] = "";
        char line[300];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        if (sscanf(line, "%15s %127s %127s", kind, name, value) == 3) {
            buf_adds(out, n++ ? ", " : "");
            buf_adds(out, strcmp(kind, "block") == 0 ? block : value);
        }
        p = nl ? nl + 1 : NULL;
    }
    buf_addch(out, '>');
}

static int has_block_param(const struct harness_kernel *k)
{
    return k->is_template && k->tparams && strstr(k->tparams, "block ") != NULL;
}

static void add_c_string(struct buf *out, const char *s)
{
    buf_addch(out, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            buf_addf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            buf_addf(out, "\\%03o", c);
        else
            buf_addch(out, (char)c);
    }
    buf_addch(out, '"');
}

/* `static const char *const NAME[] = { "a", "b", nullptr };` from "a,b". */
static void add_list(struct buf *out, const char *name, const char *list)
{
    buf_addf(out, "static const char *const %s[] = { ", name);
    const char *p = list;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        buf_addch(out, '"');
        buf_add(out, p, len);
        buf_adds(out, "\", ");
        p = c ? c + 1 : NULL;
    }
    buf_adds(out, "nullptr };\n");
}

int harness_grid2d(const struct harness_kernel *k)
{
    int kind = indexing_parse(k->indexing);
    return kind < 0 ? k->is2d : kind == INDEXING_2D || kind == INDEXING_3D;
}

/* The grid rule follows the kernel's indexing; the output check's reference block too, unless
 * the source's own launch says its block (what the kernel was written for). */
static void add_indexing(struct buf *out, const struct harness_kernel *k)
{
    int two_d = harness_grid2d(k);
    const char *name = k->indexing ? k->indexing : two_d ? "2d" : "1d";
    struct harness_launch l;
    char ref[48];
    harness_launch_parse(&l, k->launch);
    if (l.block[0] && (long long)l.block[0] * l.block[1] * l.block[2] <= 1024)
        snprintf(ref, sizeof ref, "%d, %d, %d", l.block[0], l.block[1], l.block[2]);
    else
        snprintf(ref, sizeof ref, "%s", two_d ? "16, 16, 1" : "256, 1, 1");
    buf_addf(out, "#define LSCAT_INDEXING \"%s\"\n", indexing_parse(name) < 0 ? "1d" : name);
    buf_addf(out, "static const int lscat_grid2d = %d; /* 1: it indexes y, every shape gets a 2D "
                  "grid */\n", two_d);
    buf_addf(out, "static const unsigned lscat_ref_block[3] = { %s }; /* the output check's "
                  "reference */\n", ref);
    buf_addf(out, "static const int lscat_cooperative = %d; /* 1: a grid-wide barrier, launched "
                  "cooperatively on a co-resident grid */\n", k->cooperative ? 1 : 0);
}

/* Whether the block template parameter is named as a thread count (NUM_THREADS, nthreads,
 * THREADS_PER_BLOCK): then a 1D source block's x is its value at the source's launch. A tile
 * side (BLOCKSIZE 32 under a 32*32-thread block) is not: its value there is not the block's. */
static int block_param_counts_threads(const struct harness_kernel *k)
{
    const char *b = k->tparams ? strstr(k->tparams, "block ") : NULL;
    char name[128] = "";
    if (!b || sscanf(b, "block %127s", name) != 1)
        return 0;
    for (char *c = name; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return strstr(name, "thread") != NULL;
}

static void add_pick(struct buf *out, const struct harness_kernel *k)
{
    struct buf args = BUF_INIT;
    if (!has_block_param(k)) {
        harness_template_args(&args, k, "1");
        buf_addf(out, "using lscat_kfn_t = decltype(&%s%s);\n", k->call, args.data);
        buf_addf(out, "static lscat_kfn_t lscat_pick(int bx) { (void)bx; return &%s%s; }\n",
                 k->call, args.data);
        buf_adds(out, "#define LSCAT_OCCUPANCY_BX 0\n");
        buf_release(&args);
        return;
    }
    const int *v;
    int n = harness_block_values(&v, k->is2d);
    char num[16];
    snprintf(num, sizeof num, "%d", v[0]);
    harness_template_args(&args, k, num);
    buf_addf(out, "using lscat_kfn_t = decltype(&%s%s);\n", k->call, args.data);
    /* -DLSCAT_BLOCK_MAX=N drops the larger instantiations (e.g. when TILE*TILE floats of
     * shared memory exceed the limit for the big ones: ptxas "uses too much shared data"). */
    buf_addf(out, "#ifndef LSCAT_BLOCK_MAX\n#define LSCAT_BLOCK_MAX %d\n#endif\n", v[n - 1]);
    buf_adds(out, "static lscat_kfn_t lscat_pick(int bx)\n{\n    switch (bx) {\n");
    for (int i = 0; i < n; i++) {
        buf_reset(&args);
        snprintf(num, sizeof num, "%d", v[i]);
        harness_template_args(&args, k, num);
        buf_addf(out, "#if %d <= LSCAT_BLOCK_MAX\n    case %d: return &%s%s;\n#endif\n", v[i], v[i],
                 k->call, args.data);
    }
    struct harness_launch l; /* the source's 1D block too, where the parameter counts threads */
    harness_launch_parse(&l, k->launch);
    int src = l.block[0] > 0 && l.block[0] <= 1024 && l.block[1] == 1 && l.block[2] == 1 &&
              block_param_counts_threads(k) ? l.block[0] : 0;
    for (int i = 0; i < n && src; i++)
        src = v[i] == src ? 0 : src;
    if (src) {
        buf_reset(&args);
        snprintf(num, sizeof num, "%d", src);
        harness_template_args(&args, k, num);
        buf_addf(out, "    case %d: return &%s%s; /* the source's block */\n", src, k->call,
                 args.data);
    }
    buf_addf(out, "    default: return nullptr;\n    }\n}\n#define LSCAT_OCCUPANCY_BX %d\n", v[0]);
    buf_release(&args);
}

/* The struct members the body sets (lscat_set_members) and the note a fault line carries. */
static void add_members(struct buf *out, const struct harness_kernel *k)
{
    buf_adds(out, "struct lscat_member { int param, deref; unsigned long long off; char kind; int "
                  "bytes; char ekind; int ebytes, cnst; const char *role, *name; };\n"
                  "static const lscat_member lscat_members[] = {\n");
    for (const char *p = k->members; p && *p;) {
        const char *nl = strchr(p, '\n');
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        int param, deref, bytes, ebytes, cnst;
        unsigned long long off;
        char kind, ekind, role[32], name[256];
        if (sscanf(line, "%d %d %llu %c %d %c %d %d %31s %255s", &param, &deref, &off, &kind,
                   &bytes, &ekind, &ebytes, &cnst, role, name) == 10) {
            buf_addf(out, "    { %d, %d, %lluULL, '%c', %d, '%c', %d, %d, \"%s\", ", param, deref,
                     off, kind, bytes, ekind, ebytes, cnst, role);
            add_c_string(out, name);
            buf_adds(out, " },\n");
        }
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    buf_adds(out, "    { -1, 0, 0ULL, 0, 0, 0, 0, 0, nullptr, nullptr } };\n"
                  "static const char *const lscat_arg_note = ");
    if (k->arg_note && *k->arg_note)
        add_c_string(out, k->arg_note);
    else
        buf_adds(out, "nullptr");
    buf_adds(out, ";\n");
}

/* The index of `name` (len bytes) in the comma-separated list, or -1. */
static int list_index(const char *list, const char *name, size_t len)
{
    int i = 0;
    for (const char *p = list; p && *p; i++) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n == len && strncmp(p, name, len) == 0)
            return i;
        p = c ? c + 1 : NULL;
    }
    return -1;
}

/* A template parameter's instantiation value ("type T float" -> "float"), else `type` itself. */
static char *instantiated(const struct harness_kernel *k, char *type)
{
    for (const char *p = k->tparams; p && *p;) {
        const char *nl = strchr(p, '\n');
        char kind[16] = "", name[128] = "", value[128] = "";
        char *line = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
        int hit = sscanf(line, "%15s %127s %127s", kind, name, value) == 3 &&
                  strcmp(name, type) == 0;
        free(line);
        if (hit) {
            free(type);
            return xstrdup(value);
        }
        p = nl ? nl + 1 : NULL;
    }
    return type;
}

/* At `p` (just after a fetch's name): "<T>" then "(name"; the element type and the name. */
static int parse_fetch(const char *p, char **elem, const char **name, size_t *len)
{
    if (*p != '<')
        return -1;
    const char *open = p;
    int depth = 0;
    for (; *p; p++)
        if (*p == '<')
            depth++;
        else if (*p == '>' && --depth == 0)
            break;
    if (!*p)
        return -1;
    const char *close = p++;
    while (isspace((unsigned char)*p))
        p++;
    if (*p++ != '(')
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    *name = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    *len = (size_t)(p - *name);
    const char *a = open + 1, *b = close;
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    *elem = xstrndup(a, (size_t)(b - a));
    return *len ? 0 : -1;
}

int harness_textures(struct buf *out, const struct harness_kernel *k)
{
    static const char *const fetch[] = { "tex1Dfetch", "tex2D", "tex1D", NULL };
    static const char *const resource[] = { "linear", "pitch2d", "array1d" };
    int count = 0;
    struct buf seen = BUF_INIT; /* ",<index>," of parameters already listed */
    buf_addch(&seen, ',');
    for (int f = 0; k->source && fetch[f]; f++) {
        size_t fl = strlen(fetch[f]);
        for (const char *p = strstr(k->source, fetch[f]); p; p = strstr(p + fl, fetch[f])) {
            char *elem = NULL, key[32];
            const char *name;
            size_t len;
            if ((p > k->source && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
                parse_fetch(p + fl, &elem, &name, &len) < 0) {
                free(elem);
                continue;
            }
            int i = list_index(k->names, name, len);
            snprintf(key, sizeof key, ",%d,", i);
            if (i >= 0 && !strstr(seen.data, key)) {
                elem = instantiated(k, elem);
                buf_addf(out, "%d\t%s\t%s\t%.*s\t%s\n", i, fetch[f], resource[f], (int)len, name,
                         elem);
                buf_adds(&seen, key + 1);
                count++;
            }
            free(elem);
        }
    }
    buf_release(&seen);
    return count;
}

/* The texture object parameters' table (lscat_tex_param binds them). */
static void add_textures(struct buf *out, const struct harness_kernel *k)
{
    struct buf lines = BUF_INIT;
    harness_textures(&lines, k);
    buf_adds(out, "struct lscat_texparam { int param; char kind; cudaChannelFormatDesc desc; };\n"
                  "static const lscat_texparam lscat_texparams[] = {\n");
    for (char *line = lines.data; line && *line;) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        char *f[5] = { line };
        for (int j = 1; j < 5; j++) {
            f[j] = strchr(f[j - 1], '\t');
            *f[j]++ = '\0';
        }
        buf_addf(out, "    { %s, '%c', cudaCreateChannelDesc<%s>() }, /* %s(%s) */\n", f[0],
                 f[2][0] == 'p' ? 'p' : f[2][0] == 'a' ? 'a' : 'l', f[4], f[1], f[3]);
        line = nl + 1;
    }
    buf_adds(out, "    { -1, 0, {} } };\n");
    buf_release(&lines);
}

/* "X;Y;Z" up to the line's end: three expressions of the small language (isolate/launch.c
 * writes only its characters; anything else leaves the grid expression out). */
static void parse_grid_expr(struct harness_launch *out, const char *p)
{
    size_t end = strcspn(p, "\n");
    int part = 0;
    size_t at = 0;
    for (size_t i = 0; i <= end && part < 3; i++) {
        char c = i < end ? p[i] : ';';
        if (c == ';') {
            out->grid_expr[part][at] = '\0';
            part++, at = 0;
        } else if ((isalnum((unsigned char)c) || strchr("_+-*/%(), ", c)) &&
                   at + 1 < HARNESS_EXPR_MAX) {
            out->grid_expr[part][at++] = c;
        } else {
            part = 4; /* not the language: none */
        }
    }
    if (part != 3 || !out->grid_expr[0][0] || !out->grid_expr[1][0] || !out->grid_expr[2][0])
        memset(out->grid_expr, 0, sizeof(out->grid_expr));
}

static void parse_fixed(struct harness_launch *out, const char *p)
{
    int i;
    long long a, b;
    if (sscanf(p, "fixed %d %lld %lld", &i, &a, &b) == 3 && i >= 0 && i < HARNESS_MAX_FIXED &&
        a > 0 && b > 0)
        out->fixed_bytes[i] = a, out->fixed_elem[i] = b;
    else if (sscanf(p, "fixedsize %lld %lld", &a, &b) == 2 && a > 0 && b > 0)
        out->fixed_w = a, out->fixed_h = b;
    else if (sscanf(p, "fixedover %lld", &a) == 1 && a > 0)
        out->fixed_over = a;
}

void harness_launch_parse(struct harness_launch *out, const char *text)
{
    memset(out, 0, sizeof(*out));
    out->smem = -1;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        int a[3];
        long long v;
        if (sscanf(p, "block %d %d %d", &a[0], &a[1], &a[2]) == 3 && a[0] > 0 && a[1] > 0 && a[2] > 0)
            memcpy(out->block, a, sizeof a);
        else if (sscanf(p, "grid %d %d %d", &a[0], &a[1], &a[2]) == 3 && a[0] > 0 && a[1] > 0 &&
                 a[2] > 0)
            memcpy(out->grid, a, sizeof a);
        else if (sscanf(p, "smem %lld", &v) == 1 && v >= 0)
            out->smem = v;
        else if (sscanf(p, "bounds %d", &a[0]) == 1 && a[0] > 0)
            out->bounds = a[0];
        else if (sscanf(p, "blockeq %d %d %d", &a[0], &a[1], &a[2]) == 3 && a[0] >= 0 &&
                 a[1] >= 0 && a[2] >= 0)
            memcpy(out->block_eq, a, sizeof a);
        else if (strncmp(p, "grid_expr ", 10) == 0)
            parse_grid_expr(out, p + 10);
        else if (sscanf(p, "gridsm %d", &a[0]) == 1 && a[0] > 0)
            out->grid_sm = a[0];
        else
            parse_fixed(out, p);
    }
    if (!out->block[0])
        out->smem = -1;
    if (!out->block[0] || (!out->grid[0] && !out->grid_sm))
        out->fixed_w = out->fixed_h = 0;
}

/* The name of parameter i in "a,b,c" (or "arg<i>"). */
static void param_name(struct buf *out, const char *names, int i)
{
    const char *p = names;
    for (int k = 0; p && k < i; k++)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    size_t n = p ? strcspn(p, ",") : 0;
    struct buf tmp = BUF_INIT;
    if (n)
        buf_add(&tmp, p, n);
    else
        buf_addf(&tmp, "arg%d", i);
    buf_add_json_str(out, tmp.data, tmp.len);
    buf_release(&tmp);
}

static void fixed_json(struct buf *out, const struct harness_launch *l, const char *names)
{
    if (l->fixed_over > 0) {
        buf_addf(out, ",\"fixed\":{\"refused\":\"the source allocates %lld bytes for its "
                      "buffers, over the harness's 2 GiB: not run at its own size\"}",
                 l->fixed_over);
        return;
    }
    if (!l->fixed_w)
        return;
    long long total = 0;
    for (int i = 0; i < HARNESS_MAX_FIXED; i++)
        total += l->fixed_bytes[i];
    buf_addf(out, ",\"fixed\":{\"size\":[%lld,%lld],\"bytes\":%lld,\"buffers\":{",
             l->fixed_w, l->fixed_h, total);
    for (int i = 0, n = 0; i < HARNESS_MAX_FIXED; i++)
        if (l->fixed_bytes[i] > 0) {
            buf_adds(out, n++ ? "," : "");
            param_name(out, names, i);
            buf_addf(out, ":%lld", l->fixed_bytes[i]);
        }
    if (l->grid_sm)
        buf_addf(out, "},\"grid\":[\"sm*%d\",1,1]", l->grid_sm);
    else
        buf_addf(out, "},\"grid\":[%d,%d,%d]", l->grid[0], l->grid[1], l->grid[2]);
    buf_adds(out, ",\"why\":\"no integer parameter; every pointer argument of the source's "
                  "launch is allocated with a constant size in the launching function or a "
                  "caller\"}");
}

void harness_launch_json(struct buf *out, const struct harness_launch *l, const char *names)
{
    if (l->block[0]) {
        buf_addf(out, ",\"launch\":{\"block\":[%d,%d,%d]", l->block[0], l->block[1], l->block[2]);
        if (l->smem >= 0)
            buf_addf(out, ",\"smem\":%lld", l->smem);
        if (l->grid[0])
            buf_addf(out, ",\"grid\":[%d,%d,%d]", l->grid[0], l->grid[1], l->grid[2]);
        else if (l->grid_sm)
            buf_addf(out, ",\"grid_sm\":%d", l->grid_sm);
        if (l->grid_expr[0][0])
            buf_addf(out, ",\"grid_expr\":[\"%s\",\"%s\",\"%s\"]", l->grid_expr[0],
                     l->grid_expr[1], l->grid_expr[2]);
        buf_addch(out, '}');
    }
    if (l->bounds > 0)
        buf_addf(out, ",\"launch_bounds\":%d", l->bounds);
    if (l->block_eq[0] || l->block_eq[1] || l->block_eq[2])
        buf_addf(out, ",\"block_eq\":[%d,%d,%d]", l->block_eq[0], l->block_eq[1],
                 l->block_eq[2]);
    fixed_json(out, l, names);
}

/* The source's launch for the harness: its block gets its dynamic shared memory (opted in
 * above 48 KiB), the other shapes the harness's rule (docs/isolate.md "Harness rules"). */
static void add_launch(struct buf *out, const struct harness_kernel *k)
{
    struct harness_launch l;
    harness_launch_parse(&l, k->launch);
    buf_addf(out, "static const unsigned lscat_src_block[3] = { %d, %d, %d }; /* the source's "
                  "launch; 0: none known */\n", l.block[0], l.block[1], l.block[2]);
    buf_addf(out, "static const long long lscat_src_smem = %lld; /* its dynamic shared memory; "
                  "-1: unknown */\n", l.smem);
    harness_tiles_prefix(out, k, &l);
    /* the fixed binding: the source's own buffer sizes and grid (docs/isolate.md "Fixed sizes") */
    buf_addf(out, "static const long long lscat_fixed_size[2] = { %lld, %lld }; /* 0: none */\n",
             l.fixed_w, l.fixed_h);
    buf_addf(out, "static const unsigned lscat_fixed_grid[4] = { %d, %d, %d, %d }; /* x y z, "
                  "or x = [3] x multiProcessorCount */\n", l.grid[0], l.grid[1], l.grid[2],
             l.grid_sm);
    buf_adds(out, "static const long long lscat_fixed_bytes[] = {");
    int last = 0;
    for (int i = 0; i < HARNESS_MAX_FIXED; i++)
        if (l.fixed_bytes[i] > 0)
            last = i + 1;
    for (int i = 0; i < last; i++)
        buf_addf(out, " %lld,", l.fixed_bytes[i]);
    buf_adds(out, " -1 }; /* per parameter; 0 none, -1 the end */\n");
}

void harness_generate(struct buf *out, const struct harness_kernel *k)
{
    struct buf targs = BUF_INIT;
    harness_template_args(&targs, k, "BX");
    buf_adds(out, "// Generated by lscat isolate: the harness of kernel ");
    buf_adds(out, k->name);
    buf_adds(out, targs.data);
    buf_adds(out, ".\n// Command line and output: CONTRACTS.md / docs/isolate.md. Build:\n"
                  "//   nvcc -std=c++17 -arch=sm_90 -I<kernel dir> -I<lscat root> harness.cu "
                  "<lscat root>/isolate/harness_core.cu <lscat root>/tune/timing.cu "
                  "<lscat root>/tune/stats.c -o harness\n");
    buf_adds(out, "#include \"kernel.cu\"\n#include \"tune/timing.h\"\n\n#define LSCAT_KERNEL_NAME ");
    struct buf full = BUF_INIT;
    buf_addf(&full, "%s%s", k->name, targs.data);
    add_c_string(out, full.data);
    buf_adds(out, "\n");
    add_list(out, "lscat_roles", k->roles);
    add_list(out, "lscat_names", k->names);
    buf_addf(out, "static const int lscat_dynshared = %d;\n", k->dynshared ? 1 : 0);
    add_launch(out, k);
    add_indexing(out, k);
    add_pick(out, k);
    add_members(out, k);
    add_textures(out, k);
    buf_adds(out, "\n");
    buf_adds(out, harness_body_text);
    buf_release(&targs);
    buf_release(&full);
}
