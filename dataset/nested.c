/* List columns for Parquet: parses the JSON (jansson) or the comma-separated words the
 * export's SQL gives, and adds each element — for kernels.params one struct per parameter,
 * its fields looked up by name in isolate's parameter object. */
#include "dataset/nested.h"

#include "common/error.h"
#include "dataset/text.h"

#include <jansson.h>
#include <string.h>

void nested_parquet_columns(struct parquet_column *out, const struct columns_table *t)
{
    int nf;
    const struct columns_col *pf = columns_param_fields(&nf);
    static struct parquet_column fields[PARQUET_MAX_FIELDS];
    for (int i = 0; i < nf && i < PARQUET_MAX_FIELDS; i++)
        fields[i] = (struct parquet_column){ pf[i].name, pf[i].type, pf[i].nullable, 0, NULL, 0 };
    for (int i = 0; i < t->ncols; i++) {
        const struct columns_col *c = &t->cols[i];
        out[i] = (struct parquet_column){ c->name, c->type, c->nullable, columns_is_list(c),
                                          NULL, 0 };
        if (c->special == COLUMNS_PARAMS) {
            out[i].fields = fields;
            out[i].nfields = nf;
        }
    }
}

static int put_comma(struct parquet_writer *w, int col, const char *s, size_t len)
{
    int rc = parquet_list_begin(w, col);
    for (size_t i = 0, start = 0; rc == 0 && len && i <= len; i++)
        if (i == len || s[i] == ',') {
            rc = parquet_put_bytes(w, col, s + start, i - start);
            start = i + 1;
        }
    return rc < 0 ? rc : parquet_list_end(w, col);
}

static int put_strings(struct parquet_writer *w, int col, const json_t *a)
{
    int rc = parquet_list_begin(w, col);
    for (size_t i = 0; rc == 0 && i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_string(v))
            return lscat_error_setc(LSCAT_EINVALID, "element %zu is not a string", i);
        rc = parquet_put_bytes(w, col, json_string_value(v), json_string_length(v));
    }
    return rc < 0 ? rc : parquet_list_end(w, col);
}

/* One field of a parameter struct from its JSON object. */
static int put_param_field(struct parquet_writer *w, int col, int k, const struct columns_col *f,
                           const json_t *obj)
{
    const json_t *v = json_object_get(obj, f->name);
    if (strcmp(f->name, "pointer") == 0) {
        const json_t *kind = json_object_get(obj, "kind");
        if (!json_is_string(kind))
            return parquet_field_null(w, col, k);
        return parquet_field_int(w, col, k, strcmp(json_string_value(kind), "pointer") == 0);
    }
    if (!v || json_is_null(v))
        return parquet_field_null(w, col, k);
    if (f->type == PARQUET_STRING && json_is_string(v))
        return parquet_field_bytes(w, col, k, json_string_value(v), json_string_length(v));
    if (f->type == PARQUET_BOOLEAN && json_is_boolean(v))
        return parquet_field_int(w, col, k, json_is_true(v));
    if ((f->type == PARQUET_INT32 || f->type == PARQUET_INT64) && json_is_integer(v))
        return parquet_field_int(w, col, k, json_integer_value(v));
    return lscat_error_setc(LSCAT_EINVALID, "parameter field '%s' has the wrong JSON type",
                            f->name);
}

static int put_params(struct parquet_writer *w, int col, const json_t *a)
{
    int nf, rc = parquet_list_begin(w, col);
    const struct columns_col *pf = columns_param_fields(&nf);
    for (size_t i = 0; rc == 0 && i < json_array_size(a); i++) {
        const json_t *p = json_array_get(a, i);
        if (!json_is_object(p))
            return lscat_error_setc(LSCAT_EINVALID, "parameter %zu is not a JSON object", i);
        rc = parquet_elem_begin(w, col);
        for (int k = 0; rc == 0 && k < nf; k++)
            rc = put_param_field(w, col, k, &pf[k], p);
        if (rc < 0)
            return lscat_error_wrap("parameter %zu", i);
    }
    return rc < 0 ? rc : parquet_list_end(w, col);
}

int nested_put_list(struct parquet_writer *w, int col, const struct columns_col *c,
                    const char *text, size_t len)
{
    if (c->special == COLUMNS_LIST_COMMA)
        return put_comma(w, col, text, len);
    json_error_t err;
    json_t *a = json_loadb(text, len, JSON_DECODE_ANY, &err);
    int rc;
    if (!a || !json_is_array(a))
        rc = lscat_error_setc(LSCAT_EINVALID, "not a JSON array: %s (the text starts '%.40s')",
                              a ? "another JSON value" : err.text, text);
    else if (c->special == COLUMNS_PARAMS)
        rc = put_params(w, col, a);
    else
        rc = put_strings(w, col, a);
    json_decref(a);
    return rc;
}
