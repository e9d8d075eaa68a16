/* Harness generation. Only the prefix depends on the kernel; the body is embedded from
 * isolate/harness_body.cu.in at build time (harness_body_text). Template kernels whose
 * parameters name a block or tile size are instantiated once per block value and dispatched
 * at run time on block x (docs/isolate.md, "Templates"). */
#include "isolate/harness.h"

#include "common/xalloc.h"
#include "isolate/indexing.h"

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
    }
    if (!out->block[0])
        out->smem = -1;
}

void harness_launch_json(struct buf *out, const struct harness_launch *l)
{
    if (l->block[0]) {
        buf_addf(out, ",\"launch\":{\"block\":[%d,%d,%d]", l->block[0], l->block[1], l->block[2]);
        if (l->smem >= 0)
            buf_addf(out, ",\"smem\":%lld", l->smem);
        if (l->grid[0])
            buf_addf(out, ",\"grid\":[%d,%d,%d]", l->grid[0], l->grid[1], l->grid[2]);
        buf_addch(out, '}');
    }
    if (l->bounds > 0)
        buf_addf(out, ",\"launch_bounds\":%d", l->bounds);
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
                  "<lscat root>/tune/timing.cu <lscat root>/tune/stats.c -o harness\n");
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
    buf_adds(out, "\n");
    buf_adds(out, harness_body_text);
    buf_release(&targs);
    buf_release(&full);
}
