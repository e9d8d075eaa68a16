/* The scan of GH Archive hours for CUDA evidence (the selection rule is in gha.h). Bytes are
 * inflated into a fixed window; a vectorised search for "cuda" in any case finds the few
 * candidate lines, and only those are parsed with jansson, so scanning runs near the speed
 * of inflate alone. */
#include "harvest/gha.h"

#include "harvest/inflate.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

static const char *const ev_names[GHA_EV_COUNT] = {
    "language",           "pr_base_language",    "pr_head_language",
    "forkee_language",    "payload_repo_language", "name_keyword",
    "description_keyword", "imported",           "search_language",
};

const char *gha_evidence_name(unsigned kind_bit)
{
    for (int i = 0; i < GHA_EV_COUNT; i++)
        if (kind_bit == (1u << i))
            return ev_names[i];
    return NULL;
}

void gha_evidence_format(struct buf *out, unsigned kinds)
{
    int first = 1;
    for (int i = 0; i < GHA_EV_COUNT; i++) {
        if (!(kinds & (1u << i)))
            continue;
        if (!first)
            buf_addch(out, ',');
        buf_adds(out, ev_names[i]);
        first = 0;
    }
}

unsigned gha_evidence_parse(const char *s)
{
    unsigned kinds = 0;
    while (s && *s) {
        size_t n = strcspn(s, ",");
        for (int i = 0; i < GHA_EV_COUNT; i++)
            if (strlen(ev_names[i]) == n && !strncmp(ev_names[i], s, n))
                kinds |= 1u << i;
        s += n;
        if (*s == ',')
            s++;
    }
    return kinds;
}

/* ---------------------------------------------------------------- the byte pre-filter */

static int is_cuda_at(const unsigned char *p)
{
    return (p[0] | 0x20) == 'c' && (p[1] | 0x20) == 'u' && (p[2] | 0x20) == 'd' &&
           (p[3] | 0x20) == 'a';
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The same search 32 bytes at a time, for CPUs with AVX2 (chosen at run time). */
__attribute__((target("avx2"))) static const char *find_cuda_avx2(const char *p, const char *end)
{
    const __m256i m20 = _mm256_set1_epi8(0x20);
    const __m256i c = _mm256_set1_epi8('c'), u = _mm256_set1_epi8('u');
    const __m256i d = _mm256_set1_epi8('d'), a = _mm256_set1_epi8('a');
    while (end - p >= 35) {
        __m256i v0 = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)p), m20);
        __m256i v1 = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + 1)), m20);
        __m256i v2 = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + 2)), m20);
        __m256i v3 = _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + 3)), m20);
        __m256i eq = _mm256_and_si256(
            _mm256_and_si256(_mm256_cmpeq_epi8(v0, c), _mm256_cmpeq_epi8(v1, u)),
            _mm256_and_si256(_mm256_cmpeq_epi8(v2, d), _mm256_cmpeq_epi8(v3, a)));
        unsigned mask = (unsigned)_mm256_movemask_epi8(eq);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 32;
    }
    for (; end - p >= 4; p++)
        if (is_cuda_at((const unsigned char *)p))
            return p;
    return NULL;
}
#endif

static const char *find_cuda_sse2(const char *p, const char *end);

/* First "cuda" (any case) in [p, end), or NULL: AVX2 when the CPU has it, else SSE2. */
static const char *find_cuda(const char *p, const char *end)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int avx2 = -1;
    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (avx2)
        return find_cuda_avx2(p, end);
#endif
    return find_cuda_sse2(p, end);
}

/* Only C/c OR 0x20 give 'c' (likewise for the other letters), so the OR-compare is exact. */
static const char *find_cuda_sse2(const char *p, const char *end)
{
#ifdef __SSE2__
    const __m128i m20 = _mm_set1_epi8(0x20);
    const __m128i c = _mm_set1_epi8('c'), u = _mm_set1_epi8('u');
    const __m128i d = _mm_set1_epi8('d'), a = _mm_set1_epi8('a');
    while (end - p >= 19) {
        __m128i v0 = _mm_or_si128(_mm_loadu_si128((const __m128i *)p), m20);
        __m128i v1 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 1)), m20);
        __m128i v2 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 2)), m20);
        __m128i v3 = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 3)), m20);
        __m128i eq = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(v0, c), _mm_cmpeq_epi8(v1, u)),
                                   _mm_and_si128(_mm_cmpeq_epi8(v2, d), _mm_cmpeq_epi8(v3, a)));
        int mask = _mm_movemask_epi8(eq);
        if (mask)
            return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    for (; end - p >= 4; p++)
        if (is_cuda_at((const unsigned char *)p))
            return p;
    return NULL;
}

int gha_has_cuda(const char *p, size_t len)
{
    return p && find_cuda(p, p + len) != NULL;
}

/* ---------------------------------------------------------------- one event */

/* Evidence of one event, merged per repository before the callback. */
struct ev_item {
    struct gha_evidence ev;
    char pushed[32];
};
struct event_ev {
    struct ev_item items[8];
    int n;
    char created_at[32];
};

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int64_t jint(json_t *o, const char *key)
{
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static int has_cuda_str(const char *s)
{
    return s && gha_has_cuda(s, strlen(s));
}

/* "2014-02-15T00:00:01-08:00" or "...Z" → "YYYY-MM-DDTHH:MM:SSZ" in UTC; "" when unparsable. */
static void time_to_utc(char out[32], const char *s)
{
    struct tm tm = { 0 };
    int off_h = 0, off_m = 0;
    char sign = 0;
    out[0] = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return;
    const char *z = s + 19;
    while (*z == '.' || (*z >= '0' && *z <= '9'))
        z++;
    if ((*z == '+' || *z == '-') && sscanf(z + 1, "%2d:%2d", &off_h, &off_m) >= 1)
        sign = *z;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    if (sign)
        t += (sign == '-' ? 1 : -1) * (off_h * 3600 + off_m * 60);
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void add_item(struct event_ev *e, const char *full_name, int64_t id, unsigned kinds,
                     const char *language, const char *description, const char *pushed_at)
{
    if (!full_name || !*full_name || !strchr(full_name, '/'))
        return;
    struct ev_item *it = NULL;
    for (int i = 0; i < e->n; i++)
        if (!strcasecmp(e->items[i].ev.full_name, full_name))
            it = &e->items[i];
    if (!it) {
        if (e->n == (int)(sizeof(e->items) / sizeof(e->items[0])))
            return;
        it = &e->items[e->n++];
        memset(it, 0, sizeof(*it));
        it->ev.full_name = full_name;
        it->ev.created_at = e->created_at[0] ? e->created_at : NULL;
    }
    it->ev.kinds |= kinds;
    if (id && !it->ev.github_id)
        it->ev.github_id = id;
    if (language && !it->ev.language)
        it->ev.language = language;
    if (description && !it->ev.description)
        it->ev.description = description;
    if (pushed_at && !it->ev.pushed_at) {
        time_to_utc(it->pushed, pushed_at);
        it->ev.pushed_at = it->pushed[0] ? it->pushed : NULL;
    }
}

/* A repository object of the post-2015 payloads (full_name, language, description). */
static void repo_object(struct event_ev *e, json_t *r, unsigned lang_kind)
{
    if (!json_is_object(r))
        return;
    const char *name = jstr(r, "full_name");
    const char *lang = jstr(r, "language"), *desc = jstr(r, "description");
    unsigned k = 0;
    if (lang && !strcasecmp(lang, "cuda"))
        k |= lang_kind;
    if (has_cuda_str(name))
        k |= GHA_EV_NAME_KEYWORD;
    if (has_cuda_str(desc))
        k |= GHA_EV_DESCRIPTION_KEYWORD;
    if (k)
        add_item(e, name, jint(r, "id"), k, lang, desc, jstr(r, "pushed_at"));
}

/* Pre-2015: "repository" with owner, name, language, description. */
static void old_schema(struct event_ev *e, json_t *r, char *owned, size_t owned_size)
{
    const char *owner = jstr(r, "owner"), *name = jstr(r, "name");
    if (!owner || !name)
        return;
    snprintf(owned, owned_size, "%s/%s", owner, name);
    const char *lang = jstr(r, "language"), *desc = jstr(r, "description");
    unsigned k = 0;
    if (lang && !strcasecmp(lang, "cuda"))
        k |= GHA_EV_LANGUAGE;
    if (has_cuda_str(owned))
        k |= GHA_EV_NAME_KEYWORD;
    if (has_cuda_str(desc))
        k |= GHA_EV_DESCRIPTION_KEYWORD;
    if (k)
        add_item(e, owned, jint(r, "id"), k, lang, desc, jstr(r, "pushed_at"));
}

static void new_schema(struct event_ev *e, json_t *root, json_t *repo)
{
    const char *type = jstr(root, "type");
    json_t *payload = json_object_get(root, "payload");
    const char *name = jstr(repo, "name");
    unsigned k = 0;
    const char *desc = NULL;
    if (has_cuda_str(name))
        k |= GHA_EV_NAME_KEYWORD;
    if (type && !strcmp(type, "CreateEvent") && has_cuda_str(desc = jstr(payload, "description")))
        k |= GHA_EV_DESCRIPTION_KEYWORD;
    const char *pushed = type && !strcmp(type, "PushEvent") && e->created_at[0] ? e->created_at
                                                                               : NULL;
    if (k || pushed)
        add_item(e, name, jint(repo, "id"), k, NULL, desc, pushed);
    if (!json_is_object(payload))
        return;
    json_t *pr = json_object_get(payload, "pull_request");
    if (json_is_object(pr)) {
        repo_object(e, json_object_get(json_object_get(pr, "base"), "repo"),
                    GHA_EV_PR_BASE_LANGUAGE);
        repo_object(e, json_object_get(json_object_get(pr, "head"), "repo"),
                    GHA_EV_PR_HEAD_LANGUAGE);
    }
    repo_object(e, json_object_get(payload, "forkee"), GHA_EV_FORKEE_LANGUAGE);
    repo_object(e, json_object_get(payload, "repository"), GHA_EV_PAYLOAD_REPO_LANGUAGE);
}

int gha_scan_line(const char *line, size_t len, gha_evidence_fn fn, void *ctx, int *n_out)
{
    json_error_t jerr;
    struct event_ev e;
    char owned[512];
    int rc = 0;
    *n_out = 0;
    json_t *root = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return lscat_error_setc(LSCAT_EINVALID, "not a JSON object: %s", jerr.text);
    }
    e.n = 0;
    time_to_utc(e.created_at, jstr(root, "created_at"));
    json_t *repo = json_object_get(root, "repo");
    json_t *repository = json_object_get(root, "repository");
    if (json_is_object(repository))
        old_schema(&e, repository, owned, sizeof(owned));
    if (json_is_object(repo))
        new_schema(&e, root, repo);
    for (int i = 0; i < e.n && rc == 0; i++) {
        if (!e.items[i].ev.kinds)
            continue; /* a push with no evidence in this event */
        rc = fn(ctx, &e.items[i].ev);
        ++*n_out;
    }
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- one hour */

enum { READ_CHUNK = 256 << 10 };

struct scan_state {
    struct gha_scan_stats *st;
    gha_evidence_fn fn;
    void *ctx;
};

/* Events in [p, end): non-empty lines. memchr per line beats a vectorised newline count
 * here (measured): lines average ~3 KB, and glibc's memchr is AVX2/EVEX. */
static void count_lines(struct gha_scan_stats *st, const char *p, const char *end)
{
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        if (nl > p && !(nl - p == 1 && p[0] == '\r'))
            st->events++;
        p = nl + 1;
    }
}

/* Complete lines in [p, end): count them, parse those that contain "cuda". */
static int scan_region(struct scan_state *s, const char *p, const char *end)
{
    count_lines(s->st, p, end);
    const char *hit;
    while ((hit = find_cuda(p, end))) {
        const char *start = hit;
        while (start > p && start[-1] != '\n')
            start--;
        const char *nl = memchr(hit, '\n', (size_t)(end - hit));
        const char *stop = nl ? nl : end;
        int n = 0;
        s->st->parsed++;
        int rc = gha_scan_line(start, (size_t)(stop - start), s->fn, s->ctx, &n);
        if (rc == LSCAT_EINVALID)
            s->st->bad_lines++;
        else if (rc != 0)
            return rc;
        if (n > 0)
            s->st->candidates++;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int gha_scan_fd(struct gha_scan_stats *out, int fd, int mode, gha_evidence_fn fn, void *ctx)
{
    enum { WIN = GHA_LINE_CAP_BYTES + READ_CHUNK };
    struct inflate_stream *in = NULL;
    char *win = NULL;
    size_t base = 0, fill = 0; /* [base, fill): bytes not scanned yet, a partial line */
    int rc = 0, skipping = 0;
    struct scan_state s = { out, fn, ctx };
    memset(out, 0, sizeof(*out));
    if ((rc = inflate_stream_new(&in, fd, (enum inflate_mode)mode)) < 0)
        goto done;
    win = xmalloc(WIN);
    for (;;) {
        if (WIN - fill < READ_CHUNK) { /* compact only when the window's end is near */
            memmove(win, win + base, fill - base);
            fill -= base;
            base = 0;
        }
        long n = inflate_stream_read(in, win + fill, READ_CHUNK);
        if (n < 0) {
            rc = (int)n;
            goto done;
        }
        out->bytes_raw += (uint64_t)n;
        if (n == 0) { /* end: a last line without newline */
            if (fill > base && !skipping && (rc = scan_region(&s, win + base, win + fill)) < 0)
                goto done;
            break;
        }
        const char *from = win + fill;
        fill += (size_t)n;
        const char *last = memrchr(from, '\n', (size_t)(win + fill - from));
        if (skipping) { /* drop the rest of an over-long line */
            if (!last) {
                base = fill = 0;
                continue;
            }
            base = (size_t)((const char *)memchr(from, '\n', (size_t)(win + fill - from)) - win) + 1;
            skipping = 0;
        }
        if (!last || last < win + base) {
            if (fill - base >= GHA_LINE_CAP_BYTES) { /* a line over the cap */
                out->events++;
                out->bad_lines++;
                skipping = 1;
                base = fill = 0;
            }
            continue;
        }
        const char *first = memchr(from, '\n', (size_t)(win + fill - from));
        if ((size_t)(first - (win + base)) > GHA_LINE_CAP_BYTES) { /* ended, but over the cap */
            out->events++;
            out->bad_lines++;
            base = (size_t)(first + 1 - win);
        }
        if (last + 1 > win + base && (rc = scan_region(&s, win + base, last + 1)) < 0)
            goto done;
        base = (size_t)(last + 1 - win);
    }
done:
    if (in)
        out->bytes_compressed = inflate_stream_bytes_in(in);
    inflate_stream_free(in);
    free(win);
    return rc;
}

/* ---------------------------------------------------------------- hours and templates */

int gha_hour_parse(time_t *out, const char *s, int default_hour)
{
    struct tm tm = { 0 };
    int h = default_hour, n = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3 ||
        (s[n] && s[n] != 'T' && s[n] != ' '))
        return lscat_error_setc(LSCAT_EINVALID, "'%s' is not a date (YYYY-MM-DD or "
                                                "YYYY-MM-DDTHH)", s);
    if (s[n] && sscanf(s + n + 1, "%2d", &h) != 1)
        return lscat_error_setc(LSCAT_EINVALID, "'%s': bad hour (YYYY-MM-DDTHH)", s);
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || h < 0 ||
        h > 23 || tm.tm_year < 2000)
        return lscat_error_setc(LSCAT_EINVALID, "'%s' is out of range", s);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_hour = h;
    *out = timegm(&tm);
    return 0;
}

void gha_hour_format(char out[16], time_t hour)
{
    struct tm tm;
    gmtime_r(&hour, &tm);
    strftime(out, 16, "%Y-%m-%dT%H", &tm);
}

char *gha_source_expand(const char *tmpl, time_t hour)
{
    struct buf b = BUF_INIT;
    struct tm tm;
    gmtime_r(&hour, &tm);
    char *folder = NULL;
    if (!strchr(tmpl, '{')) {
        size_t n = strlen(tmpl);
        folder = xasprintf("%s%s{YYYY}-{MM}-{DD}-{H}.json.gz", tmpl,
                           n && tmpl[n - 1] == '/' ? "" : "/");
        tmpl = folder;
    }
    for (const char *p = tmpl; *p; p++) {
        if (!strncmp(p, "{YYYY}", 6)) {
            buf_addf(&b, "%04d", tm.tm_year + 1900);
            p += 5;
        } else if (!strncmp(p, "{MM}", 4)) {
            buf_addf(&b, "%02d", tm.tm_mon + 1);
            p += 3;
        } else if (!strncmp(p, "{DD}", 4)) {
            buf_addf(&b, "%02d", tm.tm_mday);
            p += 3;
        } else if (!strncmp(p, "{HH}", 4)) {
            buf_addf(&b, "%02d", tm.tm_hour);
            p += 3;
        } else if (!strncmp(p, "{H}", 3)) {
            buf_addf(&b, "%d", tm.tm_hour);
            p += 2;
        } else
            buf_addch(&b, *p);
    }
    free(folder);
    return buf_detach(&b, NULL);
}

int gha_source_check(const char *tmpl)
{
    static const char *const known[] = { "{YYYY}", "{MM}", "{DD}", "{HH}", "{H}" };
    for (const char *p = strchr(tmpl, '{'); p; p = strchr(p + 1, '{')) {
        int ok = 0;
        for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            ok |= !strncmp(p, known[k], strlen(known[k]));
        size_t n = strcspn(p, "}/");
        if (!ok)
            return lscat_error_setc(LSCAT_EINVALID, "--source: unknown placeholder '%.*s' in '%s'"
                                    " (use {YYYY} {MM} {DD} {H} {HH})",
                                    (int)(n + (p[n] == '}')), p, tmpl);
    }
    if (!strncmp(tmpl, "http://", 7) || !strncmp(tmpl, "https://", 8))
        return 0;
    /* the folder itself, or the folder that holds the first placeholder */
    const char *path = !strncmp(tmpl, "file://", 7) ? tmpl + 7 : tmpl;
    const char *brace = strchr(path, '{');
    size_t len = strlen(path);
    if (brace) {
        const char *slash = path + (brace - path);
        while (slash > path && slash[-1] != '/')
            slash--;
        len = (size_t)(slash - path);
    }
    char *dir = xstrndup(path, len);
    struct stat st;
    int rc = 0;
    if (dir[0] && (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
        rc = lscat_error_setc(LSCAT_EINVALID, "--source: the folder '%s' does not exist (or is "
                              "not a folder; a template without {placeholders} names a folder "
                              "of YYYY-MM-DD-H.json.gz files)", dir);
    free(dir);
    return rc;
}
