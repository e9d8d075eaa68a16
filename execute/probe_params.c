/* What the probe reads from a kernel's params.json (isolate's record of its parameters, launch
 * and indexing) and from the harness's JSON lines: the bindings that matter for a kernel, its
 * fixed size, its source's block. Plain substring reads: both texts are lscat's own. */
#include "execute/probe.h"

#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of "key":"..." in a JSON line (no unescaping beyond \" — error texts are plain). */
char *probe_json_str(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    const char *e = p;
    while (*e && !(*e == '"' && e[-1] != '\\'))
        e++;
    return xstrndup(p, (size_t)(e - p));
}

const char *const probe_bindings[] = { "area", "side", "tokens", "tiles", "fixed", NULL };

int probe_is2d(const char *params)
{
    return params && strstr(params, "\"is2d\":true") != NULL;
}

int probe_unmade_arg(const char *params)
{
    return params && strstr(params, "\"note\":\"") != NULL;
}

/* Per binding after the first: the roles whose value differs from the default's (tokens goes
 * by names instead, token_dims). */
static const char *const binding_roles[][4] = { { NULL }, { "size", NULL }, { NULL }, { NULL },
                                                 { NULL } };

/* How many scalars of `params` the tokens binding gives a value by name (the harness's
 * lscat_token_dim: B, T, N, C, OC, NH, V, Vp, P). */
static int token_dims(const char *params)
{
    static const char *const names[] = { "B", "T", "N", "C", "OC", "NH", "V", "Vp", "P", NULL };
    int n = 0;
    for (int i = 0; names[i]; i++) {
        char pat[32];
        snprintf(pat, sizeof(pat), "\"name\":\"%s\"", names[i]);
        const char *at = strstr(params, pat), *end = at ? strchr(at, '}') : NULL;
        const char *kind = at ? strstr(at, "\"kind\":\"scalar\"") : NULL;
        n += kind && end && kind < end;
    }
    return n;
}

int probe_binding_matters(int b, const char *params)
{
    if (b <= 0)
        return b == 0;
    if (b == PROBE_BIND_FIXED) /* isolate found the source's hard-coded problem size */
        return probe_fixed_size(NULL, params);
    if (!params)
        return 1;
    if (!strcmp(probe_bindings[b], "tokens")) /* a transformer's dims: two of them at least */
        return token_dims(params) >= 2;
    if (!strcmp(probe_bindings[b], "tiles")) /* the source's grid over its own sizes */
        return strstr(params, "\"grid_expr\":[") != NULL;
    for (int i = 0; binding_roles[b][i]; i++) {
        char pat[64];
        snprintf(pat, sizeof(pat), "\"role\":\"%s\"", binding_roles[b][i]);
        if (strstr(params, pat))
            return 1;
    }
    return 0;
}

int probe_fixed_size(int wh[2], const char *params)
{
    static const char key[] = "\"fixed\":{\"size\":[";
    const char *p = params ? strstr(params, key) : NULL;
    int w = 0, h = 0;
    if (!p || sscanf(p + sizeof key - 1, "%d,%d", &w, &h) != 2 || w < 1 || h < 1)
        return 0;
    if (wh)
        wh[0] = w, wh[1] = h;
    return 1;
}

/* The integer after "key": in a JSON line, or -1. */
long probe_json_int(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

int probe_fixed_first(const char *params)
{
    return probe_fixed_size(NULL, params) && params &&
           (strstr(params, "\"indexing\":\"grid_stride\"") || strstr(params, "\"indexing\":\"none\""));
}

int probe_source_launch(int block[3], int *bounds, const char *params)
{
    static const char key[] = "\"launch\":{\"block\":[", bkey[] = "\"launch_bounds\":";
    const char *p = params ? strstr(params, key) : NULL;
    block[0] = block[1] = block[2] = 0;
    *bounds = 0;
    if (p && (sscanf(p + sizeof key - 1, "%d,%d,%d", &block[0], &block[1], &block[2]) != 3 ||
              block[0] < 1 || block[1] < 1 || block[2] < 1))
        block[0] = block[1] = block[2] = 0;
    p = params ? strstr(params, bkey) : NULL;
    if (p && (sscanf(p + sizeof bkey - 1, "%d", bounds) != 1 || *bounds < 0))
        *bounds = 0;
    return block[0] > 0;
}
