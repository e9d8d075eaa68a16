/* GPU discovery through the lscat-gpuinfo helper, selection, registration in the store, and
 * NVML clock locking. lscat-tune itself links neither libcudart nor NVML (dlopen). */
#include "tune/gpus.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/xalloc.h"
#include "store/store.h"
#include "tune/nvml_dl.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void copy_str(char *dst, size_t n, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    snprintf(dst, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static long long get_int(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? (long long)json_number_value(v) : 0;
}

int tune_gpus_parse_line(struct tune_gpu *out, const char *line)
{
    json_t *o = json_loads(line, 0, NULL);
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (!json_is_object(o) || !json_is_string(json_object_get(o, "uuid")) ||
        !json_is_integer(json_object_get(o, "index"))) {
        rc = lscat_error_setc(LSCAT_EINVALID, "lscat-gpuinfo printed a line that is not a "
                              "device: '%.200s'", line);
        goto done;
    }
    out->index = (int)get_int(o, "index");
    copy_str(out->name, sizeof(out->name), o, "gpu");
    copy_str(out->uuid, sizeof(out->uuid), o, "uuid");
    copy_str(out->cc, sizeof(out->cc), o, "cc");
    copy_str(out->driver, sizeof(out->driver), o, "driver");
    out->memory_bytes = get_int(o, "memory_bytes");
    out->sm_count = (int)get_int(o, "sm_count");
    out->cuda_driver = (int)get_int(o, "cuda_driver");
    out->cuda_runtime = (int)get_int(o, "cuda_runtime");
    out->max_sm_mhz = (int)get_int(o, "max_sm_mhz");
done:
    json_decref(o);
    return rc;
}

static char *helper_path(void)
{
    const char *env = getenv("LSCAT_GPUINFO");
    char self[PATH_MAX];
    if (env && *env)
        return xstrdup(env);
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return xstrdup("lscat-gpuinfo");
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    return fs_join(self, "lscat-gpuinfo");
}

int tune_gpus_discover(struct tune_gpu **out, char *why, int why_size)
{
    char *path = helper_path();
    const char *argv[] = { path, NULL };
    struct proc_options o = PROC_OPTIONS_INIT;
    struct proc_result r;
    int n = 0;
    size_t cap = 0;
    *out = NULL;
    why[0] = 0;
    o.argv = argv;
    o.timeout_s = 60;
    o.out_cap_bytes = 1 << 20;
    if (access(path, X_OK) != 0) {
        snprintf(why, (size_t)why_size, "the helper '%s' is missing (lscat was built without "
                 "nvcc)", path);
        free(path);
        return 0;
    }
    if (proc_run(&r, &o) < 0 || r.exit_code != 0 || r.signal || r.timed_out) {
        struct buf d = BUF_INIT;
        proc_describe(&d, &r, &o);
        buf_rtrim(&r.err);
        snprintf(why, (size_t)why_size, "lscat-gpuinfo: %s%s%s", d.data, r.err.len ? ": " : "",
                 r.err.data);
        buf_release(&d);
        goto done;
    }
    for (char *save = NULL, *l = strtok_r(r.out.data, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        XGROW(*out, (size_t)n + 1, cap);
        if (tune_gpus_parse_line(&(*out)[n], l) < 0) {
            free(*out);
            *out = NULL;
            n = LSCAT_EINVALID;
            goto done;
        }
        n++;
    }
    if (n == 0) {
        buf_rtrim(&r.err);
        snprintf(why, (size_t)why_size, "%s", r.err.len ? r.err.data : "no device listed");
    }
done:
    proc_result_release(&r);
    free(path);
    return n;
}

int tune_gpus_select(struct tune_gpu *gpus, int n, const char *spec)
{
    if (!spec || strcmp(spec, "all") == 0)
        return n;
    int keep[256], nk = 0;
    char *copy = xstrdup(spec), *save = NULL, *end;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long v = strtol(t, &end, 10);
        int found = -1;
        for (int i = 0; i < n; i++)
            if (gpus[i].index == v)
                found = i;
        if (*t == 0 || *end || v < 0 || found < 0 || nk == 256) {
            rc = lscat_error_setc(LSCAT_EINVALID, "bad --gpus '%s': '%s' is not one of the %d "
                                  "GPU indices here (use 'all' or e.g. 0,1)", spec, t, n);
            goto done;
        }
        int dup = 0;
        for (int j = 0; j < nk; j++)
            dup |= keep[j] == found;
        if (!dup)
            keep[nk++] = found;
    }
    struct tune_gpu *tmp = xcalloc((size_t)(nk ? nk : 1), sizeof(*tmp));
    for (int j = 0; j < nk; j++)
        tmp[j] = gpus[keep[j]];
    memcpy(gpus, tmp, (size_t)nk * sizeof(*tmp));
    free(tmp);
    rc = nk;
done:
    free(copy);
    return rc;
}

int tune_gpus_register(struct store *s, struct tune_gpu *gpus, int n)
{
    char now[32], host[256] = "";
    char cuda[32];
    int rc = 0;
    fs_utc_now(now);
    gethostname(host, sizeof(host) - 1);
    for (int i = 0; i < n && rc >= 0; i++) {
        struct tune_gpu *g = &gpus[i];
        snprintf(cuda, sizeof(cuda), "%d.%d", g->cuda_driver / 1000, g->cuda_driver % 1000 / 10);
        rc = store_run(s, "INSERT INTO gpus(uuid, name, compute_cap, memory_bytes, sm_count, "
                       "driver_version, cuda_version, host, first_seen) VALUES (?,?,?,?,?,?,?,?,?) "
                       "ON CONFLICT(uuid) DO UPDATE SET name=excluded.name, "
                       "compute_cap=excluded.compute_cap, memory_bytes=excluded.memory_bytes, "
                       "sm_count=excluded.sm_count, driver_version=excluded.driver_version, "
                       "cuda_version=excluded.cuda_version, host=excluded.host",
                       "tttiItttt", g->uuid, g->name, g->cc, (int64_t)g->memory_bytes,
                       g->sm_count, g->driver, cuda, host, now);
        if (rc >= 0)
            rc = store_query_int(&g->id, s, "SELECT id FROM gpus WHERE uuid = ?", "t", g->uuid);
    }
    return rc < 0 ? rc : 0;
}

const char *tune_clocks_describe(int nvml_rc)
{
    return nvml_dl_describe(nvml_rc);
}

/* Apply `mhz` (0 = reset) to each GPU; stop at the first failure. Returns how many were done
 * (all of them, n, on success) or a negative code. */
static int apply_clocks(struct nvml_dl *nv, const struct tune_gpu *gpus, int n, int mhz)
{
    for (int i = 0; i < n; i++) {
        nvml_dl_device d = NULL;
        int rc = nv->handle_by_uuid(gpus[i].uuid, &d);
        if (rc == NVML_DL_SUCCESS)
            rc = mhz ? nv->set_locked_clocks(d, (unsigned)mhz, (unsigned)mhz)
                     : nv->reset_locked_clocks(d);
        if (rc != NVML_DL_SUCCESS) {
            lscat_error_set("cannot %s the clocks of GPU %d (%s): %s", mhz ? "lock" : "reset",
                            gpus[i].index, gpus[i].uuid, nvml_dl_describe(rc));
            return -(i + 1);
        }
    }
    return n;
}

int tune_clocks_lock(const struct tune_gpu *gpus, int n, int mhz)
{
    struct nvml_dl nv;
    int rc = nvml_dl_load(&nv, NULL);
    if (rc != NVML_DL_SUCCESS)
        return lscat_error_set("cannot lock GPU clocks: %s", nvml_dl_describe(rc));
    if (!nv.set_locked_clocks || !nv.reset_locked_clocks)
        return lscat_error_set("cannot lock GPU clocks: this NVML lacks "
                               "nvmlDeviceSetGpuLockedClocks (driver older than 410?)");
    if (mhz <= 0)
        return lscat_error_setc(LSCAT_EINVALID, "cannot lock GPU clocks at %d MHz", mhz);
    rc = apply_clocks(&nv, gpus, n, mhz);
    if (rc < 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", lscat_error_last());
        apply_clocks(&nv, gpus, -rc - 1, 0); /* undo the ones that were locked */
        return lscat_error_set("%s", msg);
    }
    log_event(LOG_INFO, "clocks_locked", "gpus", n > 0 ? gpus[0].uuid : "", NULL);
    return 0;
}

int tune_clocks_reset(const struct tune_gpu *gpus, int n)
{
    struct nvml_dl nv;
    int rc = nvml_dl_load(&nv, NULL);
    if (rc != NVML_DL_SUCCESS)
        return lscat_error_set("cannot reset GPU clocks: %s", nvml_dl_describe(rc));
    if (!nv.reset_locked_clocks)
        return lscat_error_set("cannot reset GPU clocks: NVML lacks the call");
    rc = apply_clocks(&nv, gpus, n, 0);
    return rc < 0 ? LSCAT_ERR : 0;
}
