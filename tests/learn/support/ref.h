/* Shared by the tests/learn programs: run a reference script under Debian's Python (the one
 * with python3-sklearn / python3-scipy; a pyenv `python3` earlier in PATH may lack them) and
 * read the JSON it wrote. Skips the test, saying why, when the reference cannot run. */
#ifndef LSCAT_TESTS_LEARN_REF_H
#define LSCAT_TESTS_LEARN_REF_H

#include "tests/support/test.h"

#include "common/error.h"
#include "common/proc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline const char *ref_python(void)
{
    const char *env = getenv("LSCAT_PYTHON");
    if (env && *env)
        return env;
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* Run tests/learn/support/<script> with the output path and extra args; load its JSON. */
static inline json_t *ref_run(const char *script, const char *module, const char *arg)
{
    char path[1024], out[1024];
    const char *root = getenv("LSCAT_ROOT") ? getenv("LSCAT_ROOT") : ".";
    snprintf(path, sizeof(path), "%s/tests/learn/support/%s", root, script);
    snprintf(out, sizeof(out), "%s/%s.json", test_tmpdir(), script);
    const char *probe[] = { ref_python(), "-c", module, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    o.argv = probe;
    o.timeout_s = 600;
    CHECK_OK(proc_run(&r, &o));
    int ok = r.exit_code == 0;
    proc_result_release(&r);
    if (!ok)
        test_skip("%s cannot run '%s' (install python3-sklearn and python3-scipy: mk/deps.sh)",
                  ref_python(), module);
    const char *argv[] = { ref_python(), path, out, arg, NULL };
    o.argv = argv;
    CHECK_OK(proc_run(&r, &o));
    if (r.exit_code != 0)
        fprintf(stderr, "%s", r.err.data);
    CHECK_INT(r.exit_code, ==, 0);
    proc_result_release(&r);
    json_error_t je;
    json_t *j = json_load_file(out, 0, &je);
    if (!j)
        test_fail(__FILE__, __LINE__, "reference JSON %s: %s", out, je.text);
    return j;
}

/* A JSON array of numbers as a fresh double array (NULL for JSON null). */
static inline double *ref_doubles(json_t *a)
{
    if (json_is_null(a))
        return NULL;
    size_t n = json_array_size(a);
    double *v = malloc((n ? n : 1) * sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(a, i));
    return v;
}

static inline int *ref_ints(json_t *a)
{
    size_t n = json_array_size(a);
    int *v = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        v[i] = (int)json_integer_value(json_array_get(a, i));
    return v;
}

#endif
