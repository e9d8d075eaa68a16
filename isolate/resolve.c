/* The resolve service (`lscat isolate resolve --serve`): execute's repair loop asks it, across
 * a process boundary (GPU nodes have no libclang), for the repository's definition of a name
 * the kernel lacks, with that definition's own closure, computed by the extractor's machinery
 * (extract.c, closure.c, emit.c). */
#include "isolate/resolve.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "isolate/extract.h"
#include "common/record.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PARSES_PER_QUERY 4
#define MAX_HAVE_BYTES (16u << 20)
#define MAX_FILE_BYTES (4u << 20)
#define TU_CACHE 2

struct repo {
    char *root;              /* resolved */
    char **files;            /* C/C++/CUDA files, absolute */
    size_t nfiles, files_cap;
    char **incdirs;          /* every folder, parents first (isolate's -I rule) */
    size_t nincdirs, incdirs_cap;
    struct buf missing;      /* "|ident|" already searched for in vain */
};

struct cached_tu {
    char *file;
    struct extract_tu *tu;
    unsigned long used;
};

struct resolve_service {
    char *cuda_home;
    struct repo *repos;
    size_t nrepos, repos_cap;
    struct cached_tu cache[TU_CACHE];
    unsigned long clock;
};

/* ------------------------------------------------------------------ repositories */

static int wanted_ext(const char *name)
{
    static const char *const exts[] = { "cu", "cuh", "h", "hpp", "hh", "hxx", "inl", "inc", "c",
                                        "cc", "cpp", "cxx", "cuhpp", NULL };
    const char *dot = strrchr(name, '.');
    for (int i = 0; dot && exts[i]; i++)
        if (strcasecmp(dot + 1, exts[i]) == 0)
            return 1;
    return 0;
}

/* The same folder rule as isolate's parse (isolate.c walk): every folder, parents first, at
 * most 512, 32 deep, no hidden entries, no symlinks. */
static void walk(struct repo *r, const char *dir, int depth)
{
    DIR *d = depth < 32 ? opendir(dir) : NULL;
    if (d && r->nincdirs < 512) {
        XGROW(r->incdirs, r->nincdirs + 1, r->incdirs_cap);
        r->incdirs[r->nincdirs++] = xstrdup(dir);
    }
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *full = fs_join(dir, e->d_name);
        struct stat st;
        if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            walk(r, full, depth + 1);
        } else if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && wanted_ext(e->d_name)) {
            XGROW(r->files, r->nfiles + 1, r->files_cap);
            r->files[r->nfiles++] = full;
            full = NULL;
        }
        free(full);
    }
    if (d)
        closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct repo *repo_get(struct resolve_service *s, const char *root_arg)
{
    char *root = realpath(root_arg, NULL);
    if (!root || !fs_is_dir(root)) {
        lscat_error_setc(LSCAT_EINVALID, "repository root '%s' is not a folder", root_arg);
        free(root);
        return NULL;
    }
    for (size_t i = 0; i < s->nrepos; i++)
        if (strcmp(s->repos[i].root, root) == 0) {
            free(root);
            return &s->repos[i];
        }
    XGROW(s->repos, s->nrepos + 1, s->repos_cap);
    struct repo *r = &s->repos[s->nrepos++];
    memset(r, 0, sizeof *r);
    r->root = root;
    buf_init(&r->missing, 0);
    walk(r, root, 0);
    if (r->nfiles)
        qsort(r->files, r->nfiles, sizeof *r->files, cmp_str);
    return r;
}

static void repo_release(struct repo *r)
{
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i]);
    for (size_t i = 0; i < r->nincdirs; i++)
        free(r->incdirs[i]);
    free(r->files);
    free(r->incdirs);
    free(r->root);
    buf_release(&r->missing);
}

/* ------------------------------------------------------------------ candidates (the index) */

static int is_word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The word before offset `at` (skipping blanks), copied into w. */
static void word_before(const char *t, size_t at, char *w, size_t cap)
{
    size_t e = at;
    while (e > 0 && (t[e - 1] == ' ' || t[e - 1] == '\t'))
        e--;
    size_t b = e;
    while (b > 0 && is_word(t[b - 1]))
        b--;
    size_t n = e - b < cap - 1 ? e - b : cap - 1;
    memcpy(w, t + b, n);
    w[n] = '\0';
}

/* How likely the text defines `name`: 0 it never mentions it; 1 it mentions it; 2 something
 * there looks like its definition (#define, struct/class/union/enum/using/typedef ... name,
 * a __device__ line calling it). Only an index: libclang decides. */
static int score_text(const char *t, const char *name)
{
    size_t n = strlen(name);
    int score = 0;
    for (const char *p = strstr(t, name); p; p = strstr(p + 1, name)) {
        if ((p > t && is_word(p[-1])) || is_word(p[n]))
            continue;
        score = score < 1 ? 1 : score;
        char w[32];
        word_before(t, (size_t)(p - t), w, sizeof w);
        static const char *const hints[] = { "define", "struct", "class", "union", "enum",
                                             "using", "typedef", NULL };
        for (int i = 0; hints[i]; i++)
            if (strcmp(w, hints[i]) == 0)
                return 2;
        const char *bol = p;
        while (bol > t && bol[-1] != '\n')
            bol--;
        const char *q = p + n;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == ';' && strncmp(bol, "typedef", 7) == 0)
            return 2;
        if ((*q == '(' || *q == '=' || *q == '[') && (memmem(bol, (size_t)(p - bol), "__device__", 10) ||
                                                     memmem(bol, (size_t)(p - bol), "__constant__", 12) ||
                                                     memmem(bol, (size_t)(p - bol), "const", 5)))
            return 2;
    }
    return score;
}

static int is_header(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (dot[1] == 'h' || dot[1] == 'H' || !strcmp(dot, ".cuh") || !strcmp(dot, ".inl") ||
                   !strcmp(dot, ".inc"));
}

struct cand { const char *file; int score; };

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->score != y->score)
        return y->score - x->score;
    size_t lx = strlen(x->file), ly = strlen(y->file);
    return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->file, y->file);
}

/* Files that mention `name`, most promising first: looks like a definition, a header (it is
 * what others include), a shorter path. */
static size_t candidates(struct cand **out, const struct repo *r, const char *name)
{
    struct cand *c = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < r->nfiles; i++) {
        struct buf t = BUF_INIT;
        t.cap_bytes = MAX_FILE_BYTES;
        int sc = buf_read_file(&t, r->files[i]) == 0 && !memchr(t.data, '\0', t.len)
                     ? score_text(t.data, name) : 0;
        buf_release(&t);
        if (!sc)
            continue;
        XGROW(c, n + 1, cap);
        c[n++] = (struct cand){ r->files[i], sc * 2 + is_header(r->files[i]) };
    }
    if (n)
        qsort(c, n, sizeof *c, cmp_cand);
    *out = c;
    return n;
}

/* ------------------------------------------------------------------ parsed files */

static struct extract_tu *tu_get(struct resolve_service *s, const struct repo *r, const char *file)
{
    int slot = 0;
    for (int i = 0; i < TU_CACHE; i++) {
        if (s->cache[i].file && strcmp(s->cache[i].file, file) == 0) {
            s->cache[i].used = ++s->clock;
            return s->cache[i].tu;
        }
        if (s->cache[i].used < s->cache[slot].used)
            slot = i;
    }
    struct extract_tu *tu = NULL;
    struct extract_options o = { .root = r->root, .file = file, .cuda_home = s->cuda_home,
                                 .include_dirs = (const char *const *)r->incdirs,
                                 .n_include_dirs = (int)r->nincdirs };
    if (extract_tu_parse(&tu, &o) < 0)
        return NULL;
    extract_tu_free(s->cache[slot].tu);
    free(s->cache[slot].file);
    s->cache[slot] = (struct cached_tu){ xstrdup(file), tu, ++s->clock };
    return tu;
}

/* ------------------------------------------------------------------ requests */

static int valid_ident(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 200 || (!isalpha((unsigned char)s[0]) && s[0] != '_'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ':' && s[i + 1] == ':' && is_word(s[i + 2])) {
            i++;
            continue;
        }
        if (!is_word(s[i]))
            return 0;
    }
    return 1;
}

static void reply_error(struct buf *out, const char *type, const char *msg)
{
    record_begin(out, type, 1);
    record_field_str(out, "message", msg);
}

int resolve_decl(struct buf *out, struct resolve_service *s, const char *root, const char *ident,
                 const char *have)
{
    if (!valid_ident(ident)) {
        reply_error(out, "error", "not an identifier (letters, digits, '_', '::')");
        return LSCAT_EINVALID;
    }
    struct repo *r = repo_get(s, root);
    if (!r) {
        reply_error(out, "error", lscat_error_last());
        return LSCAT_EINVALID;
    }
    char *key = xasprintf("|%s|", ident);
    struct cand *c = NULL;
    size_t n = strstr(r->missing.data, key) ? 0 : candidates(&c, r, strrchr(ident, ':') ? strrchr(ident, ':') + 1 : ident);
    struct buf text = BUF_INIT, origin = BUF_INIT, why = BUF_INIT;
    int rc = LSCAT_ENOTFOUND, parses = 0, pieces = 0;
    for (size_t i = 0; i < n && parses < MAX_PARSES_PER_QUERY && rc == LSCAT_ENOTFOUND; i++) {
        struct extract_tu *tu = tu_get(s, r, c[i].file);
        parses++;
        if (!tu) {
            buf_addf(&why, "%s%s", why.len ? "; " : "", lscat_error_last());
            continue;
        }
        buf_reset(&text);
        buf_reset(&origin);
        rc = extract_tu_decl(&text, &origin, &pieces, tu, ident, have);
    }
    if (rc == 0 && pieces == 0) {
        reply_error(out, "notfound", "the definition and all it needs are already in the kernel");
        rc = LSCAT_ENOTFOUND;
    } else if (rc == 0) {
        record_begin(out, "decl", 4);
        record_field(out, "text", text.data, text.len);
        record_field_str(out, "origin", origin.data);
        record_field_int(out, "pieces", pieces);
        record_field_int(out, "parses", parses);
    } else {
        if (n <= (size_t)parses && !why.len)
            buf_adds(&r->missing, key); /* every candidate was read: do not search again */
        char *m = xasprintf("no definition of '%s' in '%s' (%zu file(s) mention it, %d parsed)%s%s",
                            ident, r->root, n, parses, why.len ? ": " : "", why.data);
        reply_error(out, "notfound", m);
        free(m);
    }
    free(c);
    free(key);
    buf_release(&text);
    buf_release(&origin);
    buf_release(&why);
    return rc;
}

int resolve_header(struct buf *out, struct resolve_service *s, const char *root, const char *name)
{
    if (!*name || name[0] == '/' || strlen(name) > 1024) {
        reply_error(out, "error", "not a relative #include name");
        return LSCAT_EINVALID;
    }
    struct repo *r = repo_get(s, root);
    if (!r) {
        reply_error(out, "error", lscat_error_last());
        return LSCAT_EINVALID;
    }
    size_t rl = strlen(r->root);
    for (size_t i = 0; i < r->nincdirs; i++) { /* the first -I folder that has it wins */
        char *p = fs_join(r->incdirs[i], name);
        char *real = realpath(p, NULL);
        free(p);
        struct stat st;
        if (real && strncmp(real, r->root, rl) == 0 && real[rl] == '/' && stat(real, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            record_begin(out, "header", 1);
            record_field_str(out, "path", real);
            free(real);
            return 0;
        }
        free(real);
    }
    char *m = xasprintf("no file under '%s' answers #include \"%s\"", r->root, name);
    reply_error(out, "notfound", m);
    free(m);
    return LSCAT_ENOTFOUND;
}

struct resolve_service *resolve_service_new(const char *cuda_home)
{
    struct resolve_service *s = xcalloc(1, sizeof *s);
    s->cuda_home = xstrdup(cuda_home);
    return s;
}

void resolve_service_free(struct resolve_service *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nrepos; i++)
        repo_release(&s->repos[i]);
    for (int i = 0; i < TU_CACHE; i++) {
        extract_tu_free(s->cache[i].tu);
        free(s->cache[i].file);
    }
    free(s->repos);
    free(s->cuda_home);
    free(s);
}

/* Split `line` at blanks into at most `max` words; returns the count (more words: max + 1). */
static int split(char *line, char **w, int max)
{
    int n = 0;
    for (char *save = NULL, *p = strtok_r(line, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
        if (n == max)
            return max + 1;
        w[n++] = p;
    }
    return n;
}

/* One request line (and, for decl, the bytes after it). Returns 0, or -1 at a broken stream. */
static int serve_one(struct buf *out, struct resolve_service *s, char *line, FILE *in)
{
    char *w[5];
    int n = split(line, w, 4);
    if (n == 1 && strcmp(w[0], "ping") == 0) {
        record_begin(out, "pong", 1);
        record_field_str(out, "version", RESOLVE_PROTOCOL);
    } else if (n == 3 && strcmp(w[0], "header") == 0) {
        resolve_header(out, s, w[1], w[2]);
    } else if ((n == 3 || n == 4) && strcmp(w[0], "decl") == 0) {
        char *end = NULL;
        unsigned long long have_len = n == 4 ? strtoull(w[3], &end, 10) : 0;
        if (n == 4 && (!*w[3] || *end || w[3][0] == '-' || have_len > MAX_HAVE_BYTES)) {
            reply_error(out, "error", "decl: the kernel length must be a number of bytes up to 16 MiB");
            return 0;
        }
        char *have = xmalloc(have_len + 1);
        if (fread(have, 1, have_len, in) != have_len) {
            free(have);
            return -1;
        }
        have[have_len] = '\0';
        resolve_decl(out, s, w[1], w[2], n == 4 ? have : NULL);
        free(have);
    } else {
        reply_error(out, "error", "unknown request (ping | decl ROOT IDENT [KERNEL_BYTES] | "
                                  "header ROOT NAME)");
    }
    return 0;
}

int resolve_serve(FILE *in, FILE *out, const char *cuda_home)
{
    struct resolve_service *s = resolve_service_new(cuda_home);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&line, &cap, in)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        struct buf reply = BUF_INIT;
        if ((size_t)len != strlen(line)) {
            reply_error(&reply, "error", "a request line must not contain NUL bytes");
        } else if (serve_one(&reply, s, line, in) < 0) {
            buf_release(&reply);
            rc = LSCAT_EINVALID;
            break;
        }
        if (fwrite(reply.data, 1, reply.len, out) != reply.len || fflush(out) != 0)
            rc = LSCAT_ERR;
        buf_release(&reply);
        if (rc < 0)
            break;
    }
    free(line);
    resolve_service_free(s);
    return rc;
}
