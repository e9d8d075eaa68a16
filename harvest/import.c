/* Repository list import. Lines are parsed leniently (CSV fields, URLs, plain names) but names
 * are validated strictly, because they become folder names. The first line that names no
 * repository is taken as a header; later such lines are counted as bad. */
#include "harvest/import.h"

#include "harvest/repodb.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One field → owner/name, or 0. */
static int field_repo(char *out, size_t out_size, const char *f, size_t len)
{
    static const char *const prefixes[] = {
        "https://github.com/", "http://github.com/", "https://www.github.com/",
        "https://api.github.com/repos/", "git://github.com/", "git@github.com:",
        "github.com/", NULL,
    };
    char tmp[512];
    while (len && (*f == ' ' || *f == '\t' || *f == '"'))
        f++, len--;
    while (len && (f[len - 1] == ' ' || f[len - 1] == '\t' || f[len - 1] == '"' ||
                   f[len - 1] == '\r'))
        len--;
    if (len == 0 || len >= sizeof(tmp))
        return 0;
    memcpy(tmp, f, len);
    tmp[len] = 0;
    const char *s = tmp;
    int url = 0;
    for (int i = 0; prefixes[i]; i++)
        if (!strncasecmp(s, prefixes[i], strlen(prefixes[i]))) {
            s += strlen(prefixes[i]);
            url = 1;
            break;
        }
    if (!url && strstr(s, "://"))
        return 0;
    const char *slash = strchr(s, '/');
    if (!slash)
        return 0;
    size_t name_len = strcspn(slash + 1, "/?#");
    if (url && name_len > 4 && !strncmp(slash + 1 + name_len - 4, ".git", 4))
        name_len -= 4;
    if (!url && slash[1 + name_len]) /* a plain field must be exactly owner/name */
        return 0;
    snprintf(out, out_size, "%.*s/%.*s", (int)(slash - s), s, (int)name_len, slash + 1);
    return repodb_valid_name(out);
}

int import_parse_line(char *out, size_t out_size, const char *line)
{
    const char *p = line;
    while (*p) {
        size_t n;
        if (*p == '"') { /* quoted field: up to the closing quote */
            const char *q = strchr(p + 1, '"');
            n = q ? (size_t)(q - p + 1) : strlen(p);
        } else
            n = strcspn(p, ",\t;");
        if (field_repo(out, out_size, p, n))
            return 1;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

int import_file(struct import_counts *out, struct store *s, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    struct repo_agg agg;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    repo_agg_init(&agg);
    if (!f)
        return lscat_error_setc(LSCAT_EINVALID, "cannot open '%s': %s", path, strerror(errno));
    while ((len = getline(&line, &cap, f)) >= 0) {
        char name[256];
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len == 0 || line[0] == '#')
            continue;
        out->lines++;
        if (!import_parse_line(name, sizeof(name), line)) {
            if (out->lines == 1)
                out->header_lines++;
            else {
                out->bad_lines++;
                log_event(LOG_WARN, "import_bad_line", "line", line, NULL);
            }
            continue;
        }
        size_t before = agg.n;
        struct gha_evidence ev = { name, 0, GHA_EV_IMPORTED, NULL, NULL, NULL, NULL };
        repo_agg_add(&agg, &ev);
        if (agg.n == before)
            out->duplicates++;
    }
    if (ferror(f))
        rc = lscat_error_set("cannot read '%s': %s", path, strerror(errno));
    if (f != stdin)
        fclose(f);
    free(line);
    out->repos = (int64_t)agg.n;
    if (rc == 0 && (rc = store_begin(s)) == 0) {
        if ((rc = repodb_upsert_all(s, &agg, "import", &out->new_repos, NULL)) < 0 ||
            (rc = store_commit(s)) < 0)
            store_rollback(s);
    }
    repo_agg_release(&agg);
    return rc;
}
