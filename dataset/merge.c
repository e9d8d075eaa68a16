/* Merging shard stores: the shard is ATTACHed to the destination and copied table by table,
 * parents first, in one transaction. Rows are matched on natural keys, never on integer ids;
 * temp.map_* tables translate the shard's ids to the destination's. Re-running adds nothing.
 * Measurements that were re-measured in two shards keep both rows: the newer one is current,
 * the older superseded (nothing measured is ever lost). */
#include "dataset/merge.h"

#include "common/error.h"
#include "common/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define RUN(col) "(SELECT new FROM temp.map_runs WHERE old = s." col ")"
#define REPO(col) "(SELECT new FROM temp.map_repos WHERE old = s." col ")"
#define SRC(col) "(SELECT new FROM temp.map_sources WHERE old = s." col ")"
#define GPU(col) "(SELECT new FROM temp.map_gpus WHERE old = s." col ")"
#define SAME_CONFIG                                                                              \
    "m.kernel_id = s.kernel_id AND m.gpu_id = " GPU("gpu_id") " AND m.width = s.width AND "    \
    "m.height = s.height AND m.block_x = s.block_x AND m.block_y = s.block_y AND "              \
    "m.block_z = s.block_z"

/* One step: a table name to count under (NULL: not counted) and its SQL. */
struct step {
    const char *table;
    const char *sql;
};

static const struct step steps[] = {
    { NULL, "DROP TABLE IF EXISTS temp.map_runs; DROP TABLE IF EXISTS temp.map_repos;"
            "DROP TABLE IF EXISTS temp.map_sources; DROP TABLE IF EXISTS temp.map_gpus;"
            "DROP TABLE IF EXISTS temp.map_builds; DROP TABLE IF EXISTS temp.merge_keys;"
            "CREATE TEMP TABLE map_runs(old INTEGER PRIMARY KEY, new INTEGER);"
            "CREATE TEMP TABLE map_repos(old INTEGER PRIMARY KEY, new INTEGER);"
            "CREATE TEMP TABLE map_sources(old INTEGER PRIMARY KEY, new INTEGER);"
            "CREATE TEMP TABLE map_gpus(old INTEGER PRIMARY KEY, new INTEGER);"
            "CREATE TEMP TABLE map_builds(old INTEGER PRIMARY KEY, new INTEGER);"
            /* Natural-key lookups of measurements need an index the schema lacks: the keys of
             * the shard's kernels' rows, read in one pass into an indexed temp table (nothing
             * written to the store, so the cost follows the shard, not the whole store). */
            "CREATE TEMP TABLE merge_keys AS SELECT kernel_id, gpu_id, width, height, block_x,"
            " block_y, block_z, measured_at FROM main.measurements WHERE kernel_id IN (SELECT"
            " kernel_id FROM shard.measurements);"
            "CREATE INDEX temp.merge_keys_config ON merge_keys(kernel_id, gpu_id, width, height,"
            " block_x, block_y, block_z, measured_at)" },
    { "stage_runs",
      "INSERT INTO main.stage_runs(stage, args, host, pid, lscat_version, started_at, ended_at,"
      " exit_status, counts) SELECT stage, args, host, pid, lscat_version, started_at, ended_at,"
      " exit_status, counts FROM shard.stage_runs s WHERE NOT EXISTS (SELECT 1 FROM"
      " main.stage_runs m WHERE m.stage = s.stage AND m.started_at = s.started_at AND"
      " m.host IS s.host AND m.pid IS s.pid) ORDER BY s.id" },
    { NULL, "INSERT INTO temp.map_runs SELECT s.id, (SELECT m.id FROM main.stage_runs m WHERE"
            " m.stage = s.stage AND m.started_at = s.started_at AND m.host IS s.host AND"
            " m.pid IS s.pid ORDER BY m.id LIMIT 1) FROM shard.stage_runs s" },
    { "gha_hours",
      "INSERT OR IGNORE INTO main.gha_hours(hour, status, reason, source_url, bytes_compressed,"
      " bytes_raw, events, bad_lines, candidates, scan_s, scanned_at, run_id) SELECT hour,"
      " status, reason, source_url, bytes_compressed, bytes_raw, events, bad_lines, candidates,"
      " scan_s, scanned_at, " RUN("run_id") " FROM shard.gha_hours s" },
    { "repos",
      "INSERT INTO main.repos(github_id, full_name, description, language, evidence, first_seen,"
      " last_seen, event_count, pushed_at, source, fetch_status, fetch_method, fetch_attempts,"
      " fetch_error, http_status, next_attempt_at, commit_sha, default_branch, fetched_at,"
      " license_spdx, archive_sha256, archive_bytes, files_kept, files_refused)"
      " SELECT github_id, full_name, description, language, evidence, first_seen, last_seen,"
      " event_count, pushed_at, source, fetch_status, fetch_method, fetch_attempts, fetch_error,"
      " http_status, next_attempt_at, commit_sha, default_branch, fetched_at, license_spdx,"
      " archive_sha256, archive_bytes, files_kept, files_refused FROM shard.repos s"
      " WHERE NOT EXISTS (SELECT 1 FROM main.repos m WHERE m.full_name = s.full_name"
      "  OR m.github_id = s.github_id) ORDER BY s.id" },
    /* A repository fetched in the shard but not (yet) here: take the shard's fetch. */
    { NULL, "UPDATE main.repos AS m SET fetch_status = s.fetch_status, fetch_method ="
            " s.fetch_method, commit_sha = s.commit_sha, default_branch = s.default_branch,"
            " fetched_at = s.fetched_at, license_spdx = s.license_spdx, archive_sha256 ="
            " s.archive_sha256, archive_bytes = s.archive_bytes, files_kept = s.files_kept,"
            " files_refused = s.files_refused, fetch_error = NULL FROM shard.repos s"
            " WHERE m.full_name = s.full_name AND m.fetch_status != 'fetched' AND"
            " s.fetch_status = 'fetched'" },
    { NULL, "INSERT INTO temp.map_repos SELECT s.id, coalesce((SELECT m.id FROM main.repos m"
            " WHERE m.full_name = s.full_name), (SELECT m.id FROM main.repos m WHERE"
            " m.github_id = s.github_id)) FROM shard.repos s" },
    { "blobs", "INSERT OR IGNORE INTO main.blobs SELECT sha256, size_bytes FROM shard.blobs" },
    { "files",
      "INSERT OR IGNORE INTO main.files(repo_id, path, sha256, size_bytes, kind) SELECT "
      REPO("repo_id") ", path, sha256, size_bytes, kind FROM shard.files s" },
    { "refused_entries",
      "INSERT INTO main.refused_entries(repo_id, path, reason) SELECT " REPO("repo_id") ","
      " path, reason FROM shard.refused_entries s WHERE NOT EXISTS (SELECT 1 FROM"
      " main.refused_entries m WHERE m.repo_id = " REPO("repo_id") " AND m.path = s.path AND"
      " m.reason = s.reason)" },
    { "sources",
      "INSERT OR IGNORE INTO main.sources(repo_id, root, isolated_at, run_id) SELECT "
      REPO("repo_id") ", root, isolated_at, " RUN("run_id") " FROM shard.sources s" },
    { NULL, "INSERT INTO temp.map_sources SELECT s.id, coalesce((SELECT m.id FROM main.sources m"
            " WHERE m.root = s.root), (SELECT m.id FROM main.sources m WHERE m.repo_id = "
            REPO("repo_id") ")) FROM shard.sources s" },
    { "parses",
      "INSERT OR IGNORE INTO main.parses(source_id, path, sha256, status, reason, kernels,"
      " parse_s, max_rss_kb, isolate_version) SELECT " SRC("source_id") ", path, sha256,"
      " status, reason, kernels, parse_s, max_rss_kb, isolate_version FROM shard.parses s" },
    { "kernels",
      "INSERT OR IGNORE INTO main.kernels(id, name, template_args, dir, params, param_count,"
      " roles_known, source_bytes, status, created_at, run_id, binding, indexing) SELECT id,"
      " name, template_args, dir, params, param_count, roles_known, source_bytes, status,"
      " created_at, " RUN("run_id") ", binding, indexing FROM shard.kernels s" },
    /* A kernel that got further in the shard (built, probed, given up) takes that status. */
    { NULL, "UPDATE main.kernels AS m SET status = s.status, binding = coalesce(s.binding,"
            " m.binding) FROM shard.kernels s WHERE m.id ="
            " s.id AND (CASE s.status WHEN 'isolated' THEN 0 WHEN 'built' THEN 1 WHEN"
            " 'build_failed' THEN 1 WHEN 'runnable' THEN 2 WHEN 'probe_failed' THEN 2 ELSE 3 END)"
            " > (CASE m.status WHEN 'isolated' THEN 0 WHEN 'built' THEN 1 WHEN 'build_failed'"
            " THEN 1 WHEN 'runnable' THEN 2 WHEN 'probe_failed' THEN 2 ELSE 3 END)" },
    { "kernel_occurrences",
      "INSERT OR IGNORE INTO main.kernel_occurrences(kernel_id, source_id, path, line) SELECT"
      " kernel_id, " SRC("source_id") ", path, line FROM shard.kernel_occurrences s" },
    { "builds",
      "INSERT OR IGNORE INTO main.builds(kernel_id, arch, cache_key, status, attempts, fixes,"
      " binary_path, nvcc_version, flags, registers, shared_bytes, stack_bytes,"
      " spill_store_bytes, spill_load_bytes, const_bytes, barriers, ptxas, error_class, build_s,"
      " built_at, run_id) SELECT kernel_id, arch, cache_key, status, attempts, fixes,"
      " binary_path, nvcc_version, flags, registers, shared_bytes, stack_bytes,"
      " spill_store_bytes, spill_load_bytes, const_bytes, barriers, ptxas, error_class, build_s,"
      " built_at, " RUN("run_id") " FROM shard.builds s" },
    { NULL, "INSERT INTO temp.map_builds SELECT s.id, m.id FROM shard.builds s JOIN main.builds"
            " m ON m.kernel_id = s.kernel_id AND m.arch = s.arch" },
    { "build_attempts",
      "INSERT OR IGNORE INTO main.build_attempts(build_id, attempt, status, error_class,"
      " first_error, fix, log_path, wall_s) SELECT (SELECT new FROM temp.map_builds WHERE old ="
      " s.build_id), attempt, status, error_class, first_error, fix, log_path, wall_s FROM"
      " shard.build_attempts s" },
    { "gpus",
      "INSERT OR IGNORE INTO main.gpus(uuid, name, compute_cap, memory_bytes, sm_count,"
      " driver_version, cuda_version, host, first_seen) SELECT uuid, name, compute_cap,"
      " memory_bytes, sm_count, driver_version, cuda_version, host, first_seen FROM shard.gpus"
      " ORDER BY id" },
    { NULL, "INSERT INTO temp.map_gpus SELECT s.id, m.id FROM shard.gpus s JOIN main.gpus m ON"
            " m.uuid = s.uuid" },
    { "probes",
      "INSERT OR IGNORE INTO main.probes(kernel_id, gpu_id, outcome, detail, sanitizer,"
      " sanitizer_detail, cache_key, probe_s, probed_at, run_id, binding, bindings) SELECT"
      " kernel_id, " GPU("gpu_id") ", outcome, detail, sanitizer, sanitizer_detail, cache_key,"
      " probe_s, probed_at, " RUN("run_id") ", binding, bindings FROM shard.probes s" },
    { "tune_kernels",
      "INSERT INTO main.tune_kernels(kernel_id, gpu_id, status, reason, occupancy_block,"
      " occupancy_grid, updated_at) SELECT kernel_id, " GPU("gpu_id") ", status, reason,"
      " occupancy_block, occupancy_grid, updated_at FROM shard.tune_kernels s WHERE true"
      " ON CONFLICT(kernel_id, gpu_id) DO UPDATE SET status = excluded.status, reason ="
      " excluded.reason, occupancy_block = excluded.occupancy_block, occupancy_grid ="
      " excluded.occupancy_grid, updated_at = excluded.updated_at WHERE"
      " excluded.updated_at > tune_kernels.updated_at" },
    /* Re-measured in both: the newer current row wins, the older is kept as superseded. */
    { NULL, "UPDATE main.measurements AS m SET superseded = 1 FROM shard.measurements s WHERE"
            " m.superseded = 0 AND s.superseded = 0 AND " SAME_CONFIG " AND s.measured_at >"
            " m.measured_at" },
    { "measurements",
      "INSERT INTO main.measurements(kernel_id, gpu_id, width, height, block_x, block_y,"
      " block_z, grid_x, grid_y, grid_z, status, error, median_ns, min_ns, max_ns, mean_ns,"
      " stddev_ns, mad_ns, p10_ns, p90_ns, samples, launches_per_sample, sm_clock_mhz_before,"
      " sm_clock_mhz_after, mem_clock_mhz, temp_c_before, temp_c_after, clocks_locked,"
      " l2_flush, superseded, measured_at, run_id, binding, graph_nodes, output_check,"
      " output_check_why, check_ns) SELECT kernel_id, " GPU("gpu_id") ","
      " width, height, block_x, block_y, block_z, grid_x, grid_y, grid_z, status, error, median_ns,"
      " min_ns, max_ns, mean_ns, stddev_ns, mad_ns, p10_ns, p90_ns, samples,"
      " launches_per_sample, sm_clock_mhz_before, sm_clock_mhz_after, mem_clock_mhz,"
      " temp_c_before, temp_c_after, clocks_locked, l2_flush, CASE WHEN s.superseded != 0 OR"
      " EXISTS (SELECT 1 FROM main.measurements m WHERE m.superseded = 0 AND " SAME_CONFIG ")"
      " THEN 1 ELSE 0 END, measured_at, " RUN("run_id") ", binding, graph_nodes, output_check,"
      " output_check_why, check_ns FROM"
      " shard.measurements s"
      " WHERE NOT EXISTS (SELECT 1 FROM temp.merge_keys m WHERE " SAME_CONFIG " AND m.measured_at ="
      " s.measured_at) ORDER BY s.id" },
    { "failures",
      "INSERT INTO main.failures(stage, subject, kernel_id, class, message, created_at, run_id)"
      " SELECT stage, subject, kernel_id, class, message, created_at, " RUN("run_id") " FROM"
      " shard.failures s WHERE NOT EXISTS (SELECT 1 FROM main.failures m WHERE m.stage ="
      " s.stage AND m.class = s.class AND m.subject = s.subject AND m.created_at ="
      " s.created_at AND m.message IS s.message) ORDER BY s.id" },
    { NULL, "DROP TABLE temp.merge_keys" },
};

static void count(struct merge_result *out, const char *table, int n)
{
    for (int i = 0; i < out->ntables; i++) {
        if (strcmp(out->tables[i], table) == 0) {
            out->added[i] += n;
            return;
        }
    }
    if (out->ntables < MERGE_MAX_TABLES) {
        out->tables[out->ntables] = table;
        out->added[out->ntables++] = n;
    }
}

/* The shard must be a readable lscat store of our schema version, and not the destination. */
static int check_shard(struct store *dst, const char *path)
{
    struct store *sh = NULL;
    int rc = store_open(&sh, path, STORE_READONLY);
    if (rc < 0)
        return lscat_error_wrap("shard '%s'", path);
    if (store_schema_version(sh) != store_schema_version(dst))
        rc = lscat_error_setc(LSCAT_EVERSION, "shard '%s' has schema %d, the destination %d: "
                              "open the older one once with this lscat (e.g. lscat status) to "
                              "migrate it", path, store_schema_version(sh),
                              store_schema_version(dst));
    store_free(sh);
    char a[PATH_MAX], b[PATH_MAX];
    if (rc == 0 && realpath(path, a) && realpath(store_path(dst), b) && strcmp(a, b) == 0)
        rc = lscat_error_setc(LSCAT_EINVALID, "cannot merge '%s' into itself", path);
    return rc;
}

int merge_shard(struct merge_result *out, struct store *dst, const char *shard_path)
{
    struct merge_result local = *out;
    int rc = check_shard(dst, shard_path);
    if (rc < 0)
        return rc;
    if ((rc = store_run(dst, "ATTACH DATABASE ? AS shard", "t", shard_path)) < 0)
        return rc;
    if ((rc = store_begin(dst)) == 0) {
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && rc >= 0; i++) {
            if (steps[i].table) {
                rc = store_run(dst, steps[i].sql, "");
                if (rc >= 0)
                    count(&local, steps[i].table, rc);
            } else {
                rc = store_exec(dst, steps[i].sql);
            }
            if (rc < 0)
                lscat_error_wrap("merging '%s' (%s)", shard_path,
                                 steps[i].table ? steps[i].table : "ids");
        }
        if (rc >= 0)
            rc = store_commit(dst);
        if (rc < 0)
            store_rollback(dst);
        else
            *out = local;
    }
    int drc = store_exec(dst, "DETACH DATABASE shard");
    return rc < 0 ? rc : drc < 0 ? drc : 0;
}
