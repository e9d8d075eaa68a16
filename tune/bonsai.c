/* BONSAI-format search spaces: a strict CSV reader (RFC 4180 quoting, positions kept for
 * messages), the three header lines, typed values, and the grouping of records by their
 * compile-time tuple, so `lscat sweep` builds each distinct tuple once. */
#include "tune/bonsai.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct field {
    char *text;
    int column; /* 1-based character column where the field starts */
};

struct row {
    int line;
    int nfields;
    struct field *fields;
};

struct reader {
    const char *path, *p, *end;
    int line, column;
};

static void row_release(struct row *r)
{
    for (int i = 0; i < r->nfields; i++)
        free(r->fields[i].text);
    free(r->fields);
    memset(r, 0, sizeof(*r));
}

static int bad(const struct reader *rd, int line, int column, const char *what)
{
    return lscat_error_setc(LSCAT_EINVALID, "%s:%d:%d: %s", rd->path, line, column, what);
}

/* One field at rd->p; stops at ',', '\n' or the end. */
static int read_field(struct field *out, struct reader *rd)
{
    struct buf b = BUF_INIT;
    out->column = rd->column;
    int quoted = rd->p < rd->end && *rd->p == '"';
    int rc = 0;
    if (quoted) {
        rd->p++, rd->column++;
        for (;;) {
            if (rd->p >= rd->end) {
                rc = bad(rd, rd->line, out->column, "unterminated quoted value");
                goto done;
            }
            char c = *rd->p++;
            rd->column++;
            if (c == '"' && rd->p < rd->end && *rd->p == '"') {
                rd->p++, rd->column++;
                buf_addch(&b, '"');
            } else if (c == '"') {
                break;
            } else if (c == '\n' || c == '\t') {
                rc = bad(rd, rd->line, rd->column - 1, "a tab or line break inside a value is "
                                                       "not supported");
                goto done;
            } else {
                buf_addch(&b, c);
            }
        }
        if (rd->p < rd->end && *rd->p != ',' && *rd->p != '\n' && *rd->p != '\r') {
            rc = bad(rd, rd->line, rd->column, "text after a closing quote (quote the whole "
                                               "value)");
            goto done;
        }
    } else {
        while (rd->p < rd->end && *rd->p != ',' && *rd->p != '\n') {
            if (*rd->p == '"' || *rd->p == '\t') {
                rc = bad(rd, rd->line, rd->column, *rd->p == '"'
                             ? "a quote inside an unquoted value (quote the whole value, "
                               "doubling inner quotes)"
                             : "a tab inside a value is not supported");
                goto done;
            }
            buf_addch(&b, *rd->p++);
            rd->column++;
        }
        if (b.len && b.data[b.len - 1] == '\r')
            buf_setlen(&b, b.len - 1);
    }
    if (rd->p < rd->end && *rd->p == '\r')
        rd->p++;
done:
    out->text = rc == 0 ? buf_detach(&b, NULL) : NULL;
    buf_release(&b);
    return rc;
}

/* The next non-blank line as fields; 0 with nfields 0 at the end. */
static int read_row(struct row *out, struct reader *rd)
{
    memset(out, 0, sizeof(*out));
    while (rd->p < rd->end && (*rd->p == '\n' || (*rd->p == '\r' && rd->p + 1 < rd->end &&
                                                  rd->p[1] == '\n'))) {
        if (*rd->p == '\n')
            rd->line++, rd->column = 1;
        rd->p++;
    }
    if (rd->p >= rd->end)
        return 0;
    out->line = rd->line;
    size_t cap = 0;
    for (;;) {
        XGROW(out->fields, (size_t)out->nfields + 1, cap);
        int rc = read_field(&out->fields[out->nfields], rd);
        if (rc < 0) {
            row_release(out);
            return rc;
        }
        out->nfields++;
        if (rd->p < rd->end && *rd->p == ',') {
            rd->p++, rd->column++;
            continue;
        }
        if (rd->p < rd->end) /* '\n' */
            rd->p++;
        rd->line++, rd->column = 1;
        return 0;
    }
}

static int is_identifier(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static int reserved(const char *name)
{
    static const char *const words[] = { "Record", "Status", "Error", "Time", NULL };
    for (int i = 0; words[i]; i++)
        if (!strcmp(words[i], name))
            return 1;
    return 0;
}

static int parse_names(struct bonsai_space *s, const struct reader *rd, const struct row *r)
{
    s->nparams = r->nfields;
    s->params = xcalloc((size_t)r->nfields, sizeof(*s->params));
    for (int i = 0; i < r->nfields; i++) {
        const struct field *f = &r->fields[i];
        if (!is_identifier(f->text))
            return bad(rd, r->line, f->column, *f->text ? "a parameter name must be a C "
                       "identifier (letters, digits, '_'; it becomes a -D macro)"
                       : "empty parameter name");
        if (reserved(f->text))
            return bad(rd, r->line, f->column, "this name is one of the output's own columns "
                                               "(Record, Status, Error, Time): rename it");
        for (int j = 0; j < i; j++)
            if (!strcmp(s->params[j].name, f->text))
                return bad(rd, r->line, f->column, "parameter name given twice");
        s->params[i].name = xstrdup(f->text);
    }
    return 0;
}

static int parse_kinds(struct bonsai_space *s, const struct reader *rd, const struct row *r,
                       int which)
{
    static const char *const types[] = { "Integer", "Real", "String", NULL };
    static const char *const whens[] = { "Compile", "Runtime", NULL };
    const char *const *words = which ? whens : types;
    if (r->nfields != s->nparams)
        return bad(rd, r->line, r->nfields > s->nparams ? r->fields[s->nparams].column : 1,
                   which ? "line 3 must say Compile or Runtime for every parameter of line 1"
                         : "line 2 must give a type for every parameter of line 1");
    for (int i = 0; i < r->nfields; i++) {
        int k = 0;
        while (words[k] && strcmp(words[k], r->fields[i].text) != 0)
            k++;
        if (!words[k])
            return bad(rd, r->line, r->fields[i].column,
                       which ? "unknown binding (use Compile or Runtime)"
                             : "unknown type (use Integer, Real or String)");
        if (which)
            s->params[i].when = (enum bonsai_when)k;
        else
            s->params[i].type = (enum bonsai_type)k;
    }
    return 0;
}

static int check_value(const struct reader *rd, int line, const struct field *f,
                       const struct bonsai_param *p)
{
    const char *t = f->text;
    char *end = NULL;
    errno = 0;
    if (p->type == BONSAI_INTEGER) {
        (void)strtoll(t, &end, 10);
        if (!*t || *end || errno || isspace((unsigned char)*t))
            return lscat_error_setc(LSCAT_EINVALID, "%s:%d:%d: '%s' is not an Integer (column "
                                    "%s)", rd->path, line, f->column, t, p->name);
    } else if (p->type == BONSAI_REAL) {
        double d = strtod(t, &end);
        if (!*t || *end || errno || isspace((unsigned char)*t) || !isfinite(d))
            return lscat_error_setc(LSCAT_EINVALID, "%s:%d:%d: '%s' is not a Real (column %s)",
                                    rd->path, line, f->column, t, p->name);
    }
    return 0;
}

static int parse_record(struct bonsai_space *s, const struct reader *rd, struct row *r)
{
    if (r->nfields != s->nparams)
        return lscat_error_setc(LSCAT_EINVALID, "%s:%d:%d: %d values for %d parameters (every "
                                "record needs one value per column)", rd->path, r->line,
                                r->nfields > s->nparams ? r->fields[s->nparams].column
                                                        : r->fields[r->nfields - 1].column,
                                r->nfields, s->nparams);
    for (int i = 0; i < r->nfields; i++) {
        int rc = check_value(rd, r->line, &r->fields[i], &s->params[i]);
        if (rc < 0)
            return rc;
    }
    struct bonsai_record *rec = &s->records[s->nrecords];
    rec->index = s->nrecords + 1;
    rec->line = r->line;
    rec->values = xcalloc((size_t)s->nparams, sizeof(char *));
    for (int i = 0; i < r->nfields; i++) {
        rec->values[i] = r->fields[i].text;
        r->fields[i].text = NULL;
    }
    s->nrecords++;
    return 0;
}

static int same_tuple(const struct bonsai_space *s, const struct bonsai_record *a,
                      const struct bonsai_record *b)
{
    for (int i = 0; i < s->nparams; i++)
        if (s->params[i].when == BONSAI_COMPILE && strcmp(a->values[i], b->values[i]) != 0)
            return 0;
    return 1;
}

/* Quadratic in the number of groups: spaces have few compile-time tuples. */
static void group_records(struct bonsai_space *s)
{
    size_t cap = 0;
    for (int r = 0; r < s->nrecords; r++) {
        struct bonsai_record *rec = &s->records[r];
        int g = 0;
        while (g < s->ngroups && !same_tuple(s, &s->records[s->groups[g].first], rec))
            g++;
        if (g == s->ngroups) {
            XGROW(s->groups, (size_t)s->ngroups + 1, cap);
            s->groups[g] = (struct bonsai_group){ .first = r, .nrecords = 0, .records = NULL };
            s->ngroups++;
        }
        struct bonsai_group *grp = &s->groups[g];
        grp->records = xrealloc(grp->records, (size_t)(grp->nrecords + 1) * sizeof(int));
        grp->records[grp->nrecords++] = r;
        rec->group = g;
    }
}

static int parse_rows(struct bonsai_space *s, struct reader *rd)
{
    struct row r = { 0 };
    int rc = 0, n = 0;
    size_t cap = 0;
    for (; rc == 0; n++) {
        rc = read_row(&r, rd);
        if (rc < 0 || r.nfields == 0)
            break;
        if (n == 0)
            rc = parse_names(s, rd, &r);
        else if (n <= 2)
            rc = parse_kinds(s, rd, &r, n - 1);
        else {
            XGROW(s->records, (size_t)s->nrecords + 1, cap);
            rc = parse_record(s, rd, &r);
        }
        row_release(&r);
    }
    row_release(&r);
    if (rc == 0 && n < 3)
        rc = bad(rd, rd->line, 1, n == 0 ? "empty space: line 1 must name the parameters"
                                 : n == 1 ? "missing line 2: the types (Integer, Real, String)"
                                          : "missing line 3: Compile or Runtime per parameter");
    else if (rc == 0 && s->nrecords == 0)
        rc = bad(rd, rd->line, 1, "empty space: no records after the three header lines "
                                  "(names, types, Compile/Runtime)");
    return rc;
}

int bonsai_space_parse(struct bonsai_space **out, const char *path, const char *data, size_t len)
{
    struct bonsai_space *s = xcalloc(1, sizeof(*s));
    struct reader rd = { .path = path, .p = data, .end = data + len, .line = 1, .column = 1 };
    s->path = xstrdup(path);
    int rc = parse_rows(s, &rd);
    if (rc == 0)
        group_records(s);
    if (rc < 0) {
        bonsai_space_free(s);
        s = NULL;
    }
    *out = s;
    return rc;
}

int bonsai_space_load(struct bonsai_space **out, const char *path)
{
    struct buf b = BUF_INIT;
    *out = NULL;
    int rc = buf_read_file(&b, path);
    if (rc < 0)
        rc = lscat_error_set("cannot read the space '%s': %s", path, lscat_error_last());
    else
        rc = bonsai_space_parse(out, path, b.data, b.len);
    buf_release(&b);
    return rc;
}

void bonsai_space_free(struct bonsai_space *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->nrecords; r++) {
        for (int i = 0; i < s->nparams; i++)
            free(s->records[r].values[i]);
        free(s->records[r].values);
    }
    for (int i = 0; i < s->nparams; i++)
        free(s->params[i].name);
    for (int g = 0; g < s->ngroups; g++)
        free(s->groups[g].records);
    free(s->groups);
    free(s->records);
    free(s->params);
    free(s->path);
    free(s);
}

char **bonsai_group_flags(const struct bonsai_space *s, int group)
{
    const struct bonsai_record *r = &s->records[s->groups[group].first];
    char **v = xcalloc((size_t)s->nparams + 1, sizeof(char *));
    int n = 0;
    for (int i = 0; i < s->nparams; i++)
        if (s->params[i].when == BONSAI_COMPILE)
            v[n++] = xasprintf("-D%s=%s", s->params[i].name, r->values[i]);
    return v;
}

void bonsai_flags_free(char **flags)
{
    for (size_t i = 0; flags && flags[i]; i++)
        free(flags[i]);
    free(flags);
}

int bonsai_param_find(const struct bonsai_space *s, const char *name)
{
    for (int i = 0; i < s->nparams; i++)
        if (!strcmp(s->params[i].name, name))
            return i;
    return -1;
}

int bonsai_selected(int index, int rows_from, int rows_to, int shard, int shard_count)
{
    if (rows_from > 0 && index < rows_from)
        return 0;
    if (rows_to > 0 && index > rows_to)
        return 0;
    return shard_count <= 1 || (index - 1) % shard_count == shard;
}

int bonsai_records_parse(char *sel, int nrecords, const char *list)
{
    const char *p = list;
    while (*p) {
        char *end = NULL;
        long a = strtol(p, &end, 10), b = a;
        if (end != p && *end == '-')
            b = strtol(end + 1, &end, 10);
        if (end == p || a < 1 || b < a || b > nrecords || (*end && *end != ','))
            return lscat_error_setc(LSCAT_EINVALID, "bad --records '%s' (use record numbers "
                                    "and ranges, e.g. 3,5-9, from 1 to %d)", list, nrecords);
        for (long k = a; sel && k <= b; k++)
            sel[k] = 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}
