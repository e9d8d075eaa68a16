/* The timing core's command-line options, checked once for both commands that pass them to
 * harnesses (tune/cmd.c, tune/sweep_cmd.c): the ranges live here, next to nothing else, so the
 * two commands cannot drift apart. */
#include "tune/timing_args.h"

#include "common/cli.h"
#include "common/error.h"

#include <string.h>

struct timing_opt {
    const char *flag;
    int kind; /* 0 flag, 1 integer, 2 real */
    double lo, hi;
};

static const struct timing_opt opts[] = {
    { "--warmup", 1, 0, 100000 },      { "--samples", 1, 1, 1000000 },
    { "--min-sample-ms", 2, 0, 60000 }, { "--target-rel-mad", 2, 0, 1 },
    { "--l2-flush", 0, 0, 0 },         { "--no-graph", 0, 0, 0 },
};

static int check(const struct timing_opt *o, const char *value)
{
    long v;
    double d;
    if (o->kind == 0)
        return value ? lscat_error_setc(LSCAT_EINVALID, "%s takes no value", o->flag) : 0;
    if (!value)
        return lscat_error_setc(LSCAT_EINVALID, "%s needs a value", o->flag);
    if (o->kind == 1)
        return cli_parse_int(&v, o->flag, value, (long)o->lo, (long)o->hi) < 0 ? LSCAT_EINVALID : 0;
    return cli_parse_double(&d, o->flag, value, o->lo, o->hi) < 0 ? LSCAT_EINVALID : 0;
}

static const struct timing_opt *find(const char *flag)
{
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (!strcmp(opts[i].flag, flag))
            return &opts[i];
    return NULL;
}

int tune_timing_args_add(struct tune_timing_args *t, const char *flag, const char *value)
{
    const struct timing_opt *o = find(flag);
    if (!o)
        return lscat_error_setc(LSCAT_EINVALID, "'%s' is not a timing option", flag);
    if (check(o, value) < 0)
        return LSCAT_EINVALID;
    int at = 0;
    while (at < t->n && strcmp(t->argv[at], flag) != 0) /* given before: replace it */
        at += find(t->argv[at])->kind ? 2 : 1;
    if (at < t->n) {
        if (value)
            t->argv[at + 1] = value;
        return 0;
    }
    t->argv[t->n++] = flag;
    if (value)
        t->argv[t->n++] = value;
    t->argv[t->n] = NULL;
    return 0;
}
