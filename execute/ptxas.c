/* Parsing `ptxas -v` output. ptxas prints, per entry and architecture:
 *   ptxas info    : Compiling entry function '_Z1kPfi' for 'sm_90'
 *   ptxas info    : Function properties for _Z1kPfi
 *       256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 21 registers, used 1 barriers, 1024 bytes smem, 364 bytes cmem[0]
 * (device functions get "Function properties" too, without "Compiling entry"). */
#include "execute/ptxas.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number just before `unit` in s ("1024 bytes smem" -> 1024), or -1. */
static long number_before(const char *s, const char *unit)
{
    const char *u = strstr(s, unit);
    if (!u)
        return -1;
    const char *p = u;
    while (p > s && p[-1] == ' ')
        p--;
    while (p > s && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return (p < u) ? strtol(p, NULL, 10) : -1;
}

static void copy_quoted(char *dst, size_t cap, const char *s)
{
    const char *open = strchr(s, '\'');
    const char *close = open ? strchr(open + 1, '\'') : NULL;
    size_t n = (open && close) ? (size_t)(close - open - 1) : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, open ? open + 1 : "", n);
    dst[n] = '\0';
}

static void parse_line(struct ptxas_info *out, const char *line, int *current)
{
    if (strstr(line, "Compiling entry function")) {
        XGROW(out->entries, out->count + 1, out->alloc);
        struct ptxas_entry *e = &out->entries[out->count];
        memset(e, 0, sizeof(*e));
        copy_quoted(e->name, sizeof(e->name), line);
        const char *f = strstr(line, "' for '");
        if (f)
            copy_quoted(e->arch, sizeof(e->arch), f + 6);
        *current = (int)out->count++;
        return;
    }
    if (strstr(line, "Function properties for")) { /* a device function: not an entry */
        const char *name = strstr(line, "for ") + 4;
        if (*current >= 0 && strncmp(name, out->entries[*current].name,
                                     strlen(out->entries[*current].name)) != 0)
            *current = -1;
        return;
    }
    if (*current < 0)
        return;
    struct ptxas_entry *e = &out->entries[*current];
    if (strstr(line, "bytes stack frame")) {
        e->stack_bytes = number_before(line, "bytes stack frame");
        e->spill_store_bytes = number_before(line, "bytes spill stores");
        e->spill_load_bytes = number_before(line, "bytes spill loads");
    } else if (strstr(line, "Used ") && strstr(line, "registers")) {
        e->registers = (int)number_before(line, "registers");
        long b = number_before(line, "barriers");
        e->barriers = b < 0 ? 0 : (int)b;
        long smem = number_before(line, "bytes smem");
        e->shared_bytes = smem < 0 ? 0 : smem;
        long cmem = 0;
        for (const char *c = strstr(line, "bytes cmem"); c; c = strstr(c + 1, "bytes cmem")) {
            const char *p = c;
            while (p > line && p[-1] == ' ')
                p--;
            while (p > line && p[-1] >= '0' && p[-1] <= '9')
                p--;
            cmem += strtol(p, NULL, 10);
        }
        e->const_bytes = cmem;
    }
}

void ptxas_parse(struct ptxas_info *out, const char *log)
{
    int current = -1;
    const char *p = log;
    char line[1024];
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        size_t k = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
        memcpy(line, p, k);
        line[k] = '\0';
        if (strncmp(line, "ptxas info", 10) == 0 || (line[0] == ' ' && strstr(line, "stack frame")))
            parse_line(out, line, &current);
        p += n + (nl ? 1 : 0);
    }
}

void ptxas_info_release(struct ptxas_info *info)
{
    free(info->entries);
    info->entries = NULL;
    info->count = info->alloc = 0;
}

#define MAX_FIELD(f) if (e->f > out->f) out->f = e->f

int ptxas_summary(struct ptxas_entry *out, const struct ptxas_info *info, const char *arch)
{
    memset(out, 0, sizeof(*out));
    int found = 0;
    for (size_t i = 0; i < info->count; i++) {
        const struct ptxas_entry *e = &info->entries[i];
        if (arch && strcmp(e->arch, arch) != 0)
            continue;
        if (!found)
            *out = *e;
        found = 1;
        MAX_FIELD(registers);
        MAX_FIELD(barriers);
        MAX_FIELD(shared_bytes);
        MAX_FIELD(stack_bytes);
        MAX_FIELD(spill_store_bytes);
        MAX_FIELD(spill_load_bytes);
        MAX_FIELD(const_bytes);
    }
    return found ? 0 : LSCAT_ENOTFOUND;
}

void ptxas_to_json(struct buf *out, const struct ptxas_info *info)
{
    buf_addch(out, '[');
    for (size_t i = 0; i < info->count; i++) {
        const struct ptxas_entry *e = &info->entries[i];
        buf_adds(out, i ? ",{\"entry\":" : "{\"entry\":");
        buf_add_json_str(out, e->name, strlen(e->name));
        buf_adds(out, ",\"arch\":");
        buf_add_json_str(out, e->arch, strlen(e->arch));
        buf_addf(out, ",\"registers\":%d,\"barriers\":%d,\"shared_bytes\":%ld,\"stack_bytes\":%ld,"
                      "\"spill_store_bytes\":%ld,\"spill_load_bytes\":%ld,\"const_bytes\":%ld}",
                 e->registers, e->barriers, e->shared_bytes, e->stack_bytes,
                 e->spill_store_bytes, e->spill_load_bytes, e->const_bytes);
    }
    buf_addch(out, ']');
}

void ptxas_extract(struct buf *out, const char *log)
{
    const char *p = log;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, "ptxas", 5) == 0 || (p[0] == ' ' && memmem(p, n, "stack frame", 11)))
            buf_add(out, p, n);
        p += n;
    }
}

/* ---------------------------------------------------------------- batched builds' names */

static int is_seq(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
}

static int seq_value(const char *s, size_t n, long *v)
{
    long x = 0;
    for (size_t i = 0; i < n; i++) {
        int d = s[i] <= '9' ? s[i] - '0' : s[i] - 'A' + 10;
        x = x * 36 + d;
        if (x > 1000000)
            return -1;
    }
    *v = x;
    return 0;
}

static void seq_add(struct buf *o, long v) /* S<seq>_ for candidate v (0: S_) */
{
    char t[16];
    int n = 0;
    buf_addch(o, 'S');
    if (v > 0) {
        long x = v - 1;
        do {
            int d = (int)(x % 36);
            t[n++] = (char)(d < 10 ? '0' + d : 'A' + d - 10);
            x /= 36;
        } while (x > 0);
        while (n > 0)
            buf_addch(o, t[--n]);
    }
    buf_addch(o, '_');
}

/* Where a token of `name` ends: from `from`, digits (or, with seq, base-36 digits) and then
 * the character `end`. Returns the index after `end`, or 0 when `end` does not follow. */
static size_t token_end(const char *name, size_t from, size_t len, int seq, char end)
{
    size_t j = from;
    while (j < len && (seq ? is_seq(name[j]) : (name[j] >= '0' && name[j] <= '9')))
        j++;
    return j < len && name[j] == end ? j + 1 : 0;
}

int ptxas_unnest(char *out, size_t cap, const char *name, const char *ns)
{
    char pre[64];
    snprintf(pre, sizeof(pre), "_ZN%zu%s", strlen(ns), ns);
    size_t pl = strlen(pre), len = strlen(name);
    if (strncmp(name, pre, pl) != 0)
        return -1;
    struct buf o = BUF_INIT;
    int depth = 1, comps = 0, fail = 0;
    size_t close = 0; /* where the nested name's E went in o, once depth is back to 0 */
    size_t i = pl;
    while (i < len && !fail) {
        char c = name[i];
        if (c >= '0' && c <= '9') { /* a source name: its length, then that many characters */
            char *end;
            unsigned long n = strtoul(name + i, &end, 10);
            size_t d = (size_t)(end - (name + i));
            if (n == 0 || i + d + n > len) {
                fail = 1;
                break;
            }
            comps += depth == 1 && !close;
            buf_add(&o, name + i, d + n);
            i += d + n;
        } else if (c == 'S') {
            char nx = name[i + 1];
            if (nx == '_') { /* the namespace itself: its entities are named differently alone */
                fail = 1;
            } else if (is_seq(nx)) {
                size_t j = i + 1;
                while (j < len && is_seq(name[j]))
                    j++;
                long v;
                if (j >= len || name[j] != '_' || seq_value(name + i + 1, j - i - 1, &v) < 0) {
                    fail = 1;
                    break;
                }
                seq_add(&o, v); /* candidate v+1 in the batch is candidate v alone */
                i = j + 1;
            } else if (nx >= 'a' && nx <= 'z') { /* St, Sa, Ss, ...: standard abbreviations */
                buf_add(&o, name + i, 2);
                i += 2;
            } else {
                fail = 1;
            }
        } else if (c == 'T' || c == 'A' || c == 'L' ||
                   (c == 'D' && (name[i + 1] == 'v' || name[i + 1] == 'F'))) {
            /* T_/T<seq>_ a template parameter, A<n>_ an array, Dv<n>_ a vector, DF<n>_ a
             * float, L<builtin type>[n]<value>E a literal: copied as they are */
            size_t j;
            if (c == 'T')
                j = token_end(name, i + 1, len, 1, '_');
            else if (c == 'A')
                j = token_end(name, i + 1, len, 0, '_');
            else if (c == 'D')
                j = token_end(name, i + 2, len, 0, '_');
            else if (name[i + 1] >= 'a' && name[i + 1] <= 'z')
                j = token_end(name, i + 2 + (i + 2 < len && name[i + 2] == 'n'), len, 0, 'E');
            else
                j = 0;
            if (!j) {
                fail = 1;
                break;
            }
            buf_add(&o, name + i, j - i);
            i = j;
        } else if (c == 'D') {
            char nx = name[i + 1];
            if (nx >= 'a' && nx <= 'z') { /* Dn, Dh, Da, Dc, Ds, Di, Dp, ... */
                buf_add(&o, name + i, 2);
                i += 2;
            } else {
                fail = 1;
            }
        } else if (c == 'N' || c == 'I' || c == 'F') {
            depth++;
            buf_addch(&o, c);
            i++;
        } else if (c == 'E') {
            if (--depth < 0) {
                fail = 1;
                break;
            }
            if (depth == 0 && !close)
                close = o.len + 1;
            buf_addch(&o, c);
            i++;
        } else if ((c >= 'a' && c <= 'z') || c == 'P' || c == 'R' || c == 'O' || c == 'K' ||
                   c == 'V') {
            buf_addch(&o, c); /* builtin types and qualifiers */
            i++;
        } else { /* Z (local names), X (expressions), anything else: not rewritten */
            fail = 1;
        }
    }
    int rc = -1;
    if (!fail && close && comps >= 1 && depth == 0) {
        if (comps == 1) /* N<ns><name>E<rest> -> <name><rest> */
            rc = snprintf(out, cap, "_Z%.*s%s", (int)(close - 1), o.data, o.data + close);
        else
            rc = snprintf(out, cap, "_ZN%s", o.data);
        rc = rc > 0 && (size_t)rc < cap ? 0 : -1;
    }
    buf_release(&o);
    return rc;
}
