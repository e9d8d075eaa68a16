/* The column dictionary of the published dataset. Adding a column: add it to the
 * table's array and to its SQL at the same position; columns.md and both writers follow. */
#include "dataset/columns.h"

#include <string.h>

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define S PARQUET_STRING
#define I64 PARQUET_INT64
#define I32 PARQUET_INT32
#define D PARQUET_DOUBLE
#define B PARQUET_BOOLEAN
#define TS PARQUET_TIMESTAMP
#define UTC "UTC, us"

/* One parameter of kernels.params: isolate's JSON object (docs/isolate.md, parameter model). */
static const struct columns_col param_fields[] = {
    { "name", S, 0, "", "parameter name as written", 0 },
    { "type", S, 1, "", "C type as written, e.g. const float *", 0 },
    { "canonical", S, 1, "", "canonical C type (typedefs resolved)", 0 },
    { "kind", S, 1, "", "pointer, reference, scalar, template (depends on a template "
      "parameter), struct or other", 0 },
    { "role", S, 1, "", "buffer, width, height, depth, size, stride, scale or unknown", 0 },
    { "pointer", B, 1, "", "the parameter is a pointer (kind = pointer)", 0 },
    { "const", B, 1, "", "pointers: the pointee is const; null for other kinds", 0 },
    { "elem", S, 1, "", "pointers: the pointee type as written", 0 },
    { "elem_bytes", I64, 1, "bytes", "pointers: size of the pointee (0 when unknown)", 0 },
    { "bits", I32, 1, "bits", "scalars: width", 0 },
    { "float", B, 1, "", "scalars: floating point", 0 },
    { "bytes", I64, 1, "bytes", "structs and other kinds: size", 0 },
    { "template_dependent", B, 1, "", "the type depends on a template parameter", 0 },
};

static const struct columns_col kernel_cols[] = {
    { "id", S, 0, "", "sha256 of the normalised isolated source: the kernel's identity", 0 },
    { "name", S, 0, "", "qualified kernel name, e.g. ns::saxpy", 0 },
    { "template_args", S, 1, "", "template instantiation, e.g. <float, 256>; null if not a template", 0 },
    { "status", S, 0, "", "isolated, built, build_failed, runnable, probe_failed or given_up", 0 },
    { "param_count", I32, 0, "", "number of kernel parameters", 0 },
    { "roles_known", I32, 0, "", "parameters whose role (size, pointer, ...) isolate recognised", 0 },
    { "params", S, 0, "", "parameter model, one struct per parameter in order (fields below "
      "the table); CSV: isolate's JSON array of parameter objects", COLUMNS_PARAMS },
    { "is2d", B, 1, "", "the harness launches it with 2D blocks and grids (it indexes "
      "threadIdx.y / blockIdx.y); null if the store predates the field", 0 },
    { "dynamic_shared", B, 1, "", "it uses dynamic shared memory (extern __shared__)", 0 },
    { "device_launch", B, 1, "", "it launches kernels itself (dynamic parallelism, built with "
      "-rdc)", 0 },
    { "source_bytes", I64, 1, "bytes", "size of kernel.cu (the text is in the sources table)", 0 },
    { "occurrences", I64, 0, "", "places (repository, path, line) where this kernel was found", 0 },
    { "build_arch", S, 1, "", "architecture(s) of the kernel's build, e.g. sm_90", 0 },
    { "build_status", S, 1, "", "ok or failed; null if never built", 0 },
    { "build_attempts", I32, 1, "", "nvcc attempts (the fix loop)", 0 },
    { "repairs", S, 1, "", "repairs applied before the build succeeded, in order; null if never "
      "built", COLUMNS_LIST_JSON },
    { "nvcc_version", S, 1, "", "nvcc version of the build", 0 },
    { "registers", I32, 1, "registers/thread", "from ptxas -v", 0 },
    { "shared_bytes", I64, 1, "bytes", "static shared memory per block, from ptxas -v", 0 },
    { "stack_bytes", I64, 1, "bytes", "stack frame per thread, from ptxas -v", 0 },
    { "spill_store_bytes", I64, 1, "bytes", "register spill stores, from ptxas -v", 0 },
    { "spill_load_bytes", I64, 1, "bytes", "register spill loads, from ptxas -v", 0 },
    { "const_bytes", I64, 1, "bytes", "constant memory, from ptxas -v", 0 },
    { "probe_outcomes", S, 1, "", "distinct probe outcomes over GPUs, sorted (ok, launch_failure, "
      "illegal_address, cuda_error, crash, timeout); null if never probed", COLUMNS_LIST_JSON },
    { "sanitizer", S, 1, "", "distinct compute-sanitizer verdicts of the probes, sorted (empty "
      "when probed without --sanitize); null if never probed", COLUMNS_LIST_JSON },
    { "binding", S, 1, "", "role binding the probe found runs clean and tune measures with: area "
      "(a size-named scalar such as n is W*H, the element count), side (it is min(W, H), a "
      "square matrix's side), tokens (a transformer's dims by name) or fixed (the kernel has "
      "hard-coded problem sizes and runs at its source's own buffers, grid and block: measured "
      "at that one size only); null if no binding ran clean or the kernel was not probed "
      "(docs/isolate.md, Bindings and Fixed sizes)", 0 },
    { "indexing", S, 1, "", "how the kernel indexes its threads, from the code it reaches: none "
      "(no thread index), 1d (x only), grid_stride (x only, a loop stepping by the grid's size), "
      "2d (y), 3d (z); tune plans block shapes and grids from it; null if isolated before lscat "
      "recorded it (docs/isolate.md, Indexing)", 0 },
    { "created_at", TS, 0, UTC, "when isolate first wrote the kernel", 0 },
};

static const struct columns_col source_cols[] = {
    { "kernel_id", S, 0, "", "kernels.id", 0 },
    { "source", S, 1, "", "isolated source (kernel.cu) as UTF-8; bytes that were not valid UTF-8 "
      "appear as the Latin-1 character of the byte (the exact bytes are in sources_raw); null "
      "if the file is missing", COLUMNS_SOURCE },
};

static const struct columns_col source_raw_cols[] = {
    { "kernel_id", S, 0, "", "kernels.id", 0 },
    { "source_raw", PARQUET_BYTES, 0, "", "the exact bytes of kernel.cu, which are not valid "
      "UTF-8; base64 in CSV", COLUMNS_SOURCE_RAW },
};

static const struct columns_col occurrence_cols[] = {
    { "kernel_id", S, 0, "", "kernels.id", 0 },
    { "repository", S, 1, "", "owner/name on GitHub; null for a local --path source", 0 },
    { "commit", S, 1, "", "commit the repository was fetched at", 0 },
    { "path", S, 0, "", "file, relative to the repository root", 0 },
    { "line", I32, 0, "", "line of the kernel's declaration (1-based)", 0 },
};

static const struct columns_col repo_cols[] = {
    { "repository", S, 0, "", "owner/name on GitHub", 0 },
    { "github_id", I64, 1, "", "GitHub's numeric repository id, when known", 0 },
    { "commit", S, 1, "", "commit the repository was fetched at", 0 },
    { "default_branch", S, 1, "", "branch fetched", 0 },
    { "fetched_at", TS, 1, UTC, "when it was fetched", 0 },
    { "license", S, 1, "SPDX", "license identified from the repository's license file; null if "
      "unknown (then no license was granted: check before reuse)", 0 },
    { "evidence", S, 0, "", "why it was taken as a CUDA repository: evidence kinds (docs/harvest.md)",
      COLUMNS_LIST_COMMA },
    { "language", S, 1, "", "primary language last reported by GitHub", 0 },
    { "source", S, 0, "", "gharchive, import, search or local", 0 },
    { "first_seen", TS, 1, UTC, "first GH Archive event seen", 0 },
    { "last_seen", TS, 1, UTC, "last GH Archive event seen", 0 },
    { "fetch_status", S, 0, "", "pending, fetched, failed or gone", 0 },
    { "files_kept", I64, 1, "", "source files kept", 0 },
    { "kernels", I64, 0, "", "distinct kernels found in it", 0 },
};

static const struct columns_col measurement_cols[] = {
    { "kernel_id", S, 0, "", "kernels.id", 0 },
    { "gpu", S, 0, "", "GPU model, e.g. NVIDIA H100 80GB HBM3", 0 },
    { "gpu_uuid", S, 0, "", "the GPU (gpus.uuid)", 0 },
    { "width", I32, 0, "elements", "matrix width W", 0 },
    { "height", I32, 0, "elements", "matrix height H", 0 },
    { "block_x", I32, 0, "threads", "block shape x", 0 },
    { "block_y", I32, 0, "threads", "block shape y", 0 },
    { "block_z", I32, 0, "threads", "block shape z", 0 },
    { "grid_x", I32, 1, "blocks", "grid x: ceil(W/BX) for a kernel indexing y (every block "
      "shape, so its (BX,1) rows cover W x H) and for 2D blocks; ceil(W*H/BX) for a 1D kernel's "
      "1D blocks", 0 },
    { "grid_y", I32, 1, "blocks", "grid y", 0 },
    { "grid_z", I32, 1, "blocks", "grid z", 0 },
    { "status", S, 0, "", "ok, cuda_error, crashed, timeout, invalid_config or skipped (not "
      "run: this block shape failed with a sticky CUDA error at a smaller size of the kernel)", 0 },
    { "error", S, 1, "", "CUDA error text when status is not ok; for skipped, the shape and the "
      "size where it failed and that error", 0 },
    { "median_ns", D, 1, "ns", "median time of one launch over the samples", 0 },
    { "min_ns", D, 1, "ns", "fastest sample (per launch)", 0 },
    { "max_ns", D, 1, "ns", "slowest sample (per launch)", 0 },
    { "mean_ns", D, 1, "ns", "mean of the samples (per launch)", 0 },
    { "stddev_ns", D, 1, "ns", "standard deviation of the samples", 0 },
    { "mad_ns", D, 1, "ns", "median absolute deviation of the samples", 0 },
    { "p10_ns", D, 1, "ns", "10th percentile", 0 },
    { "p90_ns", D, 1, "ns", "90th percentile", 0 },
    { "samples", I32, 1, "", "timed samples", 0 },
    { "launches_per_sample", I32, 1, "", "launches batched into one timed sample", 0 },
    { "graph_nodes", I32, 1, "", "launches per CUDA graph when a sample launched a captured "
      "graph (a sample = launches_per_sample / graph_nodes graph launches); 0 = launched one by "
      "one from the host; null = measured before lscat recorded it (one by one)", 0 },
    { "sm_clock_mhz_before", I32, 1, "MHz", "SM clock before the configuration", 0 },
    { "sm_clock_mhz_after", I32, 1, "MHz", "SM clock after", 0 },
    { "mem_clock_mhz", I32, 1, "MHz", "memory clock", 0 },
    { "temp_c_before", I32, 1, "degC", "GPU temperature before", 0 },
    { "temp_c_after", I32, 1, "degC", "GPU temperature after", 0 },
    { "clocks_locked", B, 0, "", "clocks were locked during the measurement", 0 },
    { "l2_flush", B, 0, "", "L2 cache flushed before each sample", 0 },
    { "binding", S, 0, "", "role binding the harness ran with, i.e. the values its scalar "
      "parameters got: area (size-named scalars = W*H), side (= min(W, H), a square matrix's "
      "side) or tokens (a transformer's dims by name); width = W, height = H, stride = W in "
      "all. fixed: the size flag of a kernel with hard-coded problem sizes, run at its source's "
      "buffers, grid and block; width x height is then that size (its largest buffer's element "
      "count as W x H, W >= H), the only row of the kernel per GPU and block, not a point of a "
      "W x H sweep: keep such rows out of per-size comparisons (docs/tune.md, Fixed-size "
      "kernels)", 0 },
    { "output_check", S, 0, "", "whether this configuration did the kernel's whole work: match "
      "(every buffer it may write equals a reference block's output on the same inputs: "
      "integers exactly, floats within 1e-3 relative + 1e-5 absolute, doubles 1e-9 + 1e-12), "
      "mismatch (some buffer differs beyond that: missing or different work; do not learn from "
      "its time), nondeterministic (the reference itself differs between two runs: atomics, "
      "races, random numbers; output_check_why says whether this row stayed within tolerance), "
      "not_checked (see output_check_why) (docs/isolate.md, Output check)", 0 },
    { "output_check_why", S, 1, "", "what the check found or why there was none, e.g. the "
      "buffer and how many elements differ", 0 },
    { "check_ns", I64, 1, "ns", "what the check cost (its extra run and comparisons, and the "
      "reference's two runs on the first row of a size), outside the timed region", 0 },
    { "measured_at", TS, 0, UTC, "when it was measured", 0 },
};

static const struct columns_col failure_cols[] = {
    { "stage", S, 0, "", "harvest, isolate, execute, tune, ...", 0 },
    { "subject", S, 0, "", "what failed: hour:..., repo:owner/name, file:..., kernel:<id>", 0 },
    { "kernel_id", S, 1, "", "kernels.id when a kernel failed", 0 },
    { "class", S, 0, "", "failure class, from the stage's documented list", 0 },
    { "message", S, 1, "", "the first error, capped", 0 },
    { "created_at", TS, 0, UTC, "when it was recorded", 0 },
};

static const struct columns_col gpu_cols[] = {
    { "uuid", S, 0, "", "NVIDIA GPU UUID", 0 },
    { "model", S, 0, "", "GPU model name", 0 },
    { "compute_capability", S, 1, "", "e.g. 9.0", 0 },
    { "memory_bytes", I64, 1, "bytes", "device memory", 0 },
    { "sm_count", I32, 1, "", "streaming multiprocessors", 0 },
    { "driver_version", S, 1, "", "NVIDIA driver", 0 },
    { "cuda_version", S, 1, "", "CUDA runtime", 0 },
    { "sm_clock_mhz_mean", I32, 1, "MHz", "mean SM clock (before each configuration) over its exported measurements", 0 },
    { "mem_clock_mhz_mean", I32, 1, "MHz", "mean memory clock over its exported measurements", 0 },
    { "measurements", I64, 0, "", "its exported (current, filtered) measurements", 0 },
    { "first_seen", TS, 0, UTC, "first time lscat used it", 0 },
};

#define GPU_FILTER "(?1 IS NULL OR instr(lower(g.name), lower(?1)) > 0)"

static const struct columns_table tables[] = {
    { "kernels", "one row per isolated kernel (template instantiation), with its source, "
      "parameter model, build and probe results",
      "SELECT k.id, k.name, k.template_args, k.status, k.param_count, k.roles_known,"
      " coalesce(json_extract(k.params, '$.params'), k.params), json_extract(k.params, '$.is2d'),"
      " json_extract(k.params, '$.dynamic_shared'), json_extract(k.params, '$.device_launch'),"
      " k.source_bytes,"
      " (SELECT count(*) FROM kernel_occurrences o WHERE o.kernel_id = k.id),"
      " b.arch, b.status, b.attempts, b.fixes, b.nvcc_version, b.registers, b.shared_bytes,"
      " b.stack_bytes, b.spill_store_bytes, b.spill_load_bytes, b.const_bytes,"
      " (SELECT CASE WHEN count(*) > 0 THEN json_group_array(o) END FROM (SELECT DISTINCT"
      "  p.outcome AS o FROM probes p WHERE p.kernel_id = k.id ORDER BY 1)),"
      " CASE WHEN EXISTS (SELECT 1 FROM probes p WHERE p.kernel_id = k.id) THEN"
      "  (SELECT json_group_array(v) FROM (SELECT DISTINCT p.sanitizer AS v FROM probes p"
      "  WHERE p.kernel_id = k.id AND p.sanitizer IS NOT NULL ORDER BY 1)) END,"
      " k.binding, k.indexing, k.created_at"
      " FROM kernels k LEFT JOIN builds b ON b.id = (SELECT b2.id FROM builds b2"
      "  WHERE b2.kernel_id = k.id ORDER BY b2.status = 'ok' DESC, b2.built_at DESC LIMIT 1)"
      " ORDER BY k.id",
      kernel_cols, N(kernel_cols), 1, 0 },
    { "sources", "the isolated source of every kernel (kept apart so kernels stays small)",
      "SELECT k.id, k.dir FROM kernels k ORDER BY k.id", source_cols, N(source_cols), 1, 0 },
    { "sources_raw", "the exact bytes of the kernel sources that are not valid UTF-8 (a few)",
      "SELECT k.id, k.dir FROM kernels k ORDER BY k.id", source_raw_cols, N(source_raw_cols), 1,
      1 },
    { "occurrences", "where each kernel was found: repository, commit, file and line",
      "SELECT o.kernel_id, r.full_name, r.commit_sha, o.path, o.line"
      " FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id"
      " LEFT JOIN repos r ON r.id = s.repo_id"
      " ORDER BY o.kernel_id, r.full_name, o.path, o.line",
      occurrence_cols, N(occurrence_cols), 1, 0 },
    { "repositories", "every repository with CUDA evidence: provenance, commit and license",
      "SELECT r.full_name, r.github_id, r.commit_sha, r.default_branch, r.fetched_at,"
      " r.license_spdx, r.evidence, r.language, r.source, r.first_seen, r.last_seen,"
      " r.fetch_status, r.files_kept, coalesce(kc.n, 0)"
      " FROM repos r LEFT JOIN (SELECT s.repo_id, count(DISTINCT o.kernel_id) AS n"
      "  FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id GROUP BY s.repo_id)"
      "  kc ON kc.repo_id = r.id ORDER BY r.full_name",
      repo_cols, N(repo_cols), 1, 0 },
    { "measurements", "current timings (superseded re-measurements left out): one row per "
      "kernel, GPU, matrix size and block shape",
      "SELECT m.kernel_id, g.name, g.uuid, m.width, m.height, m.block_x, m.block_y, m.block_z,"
      " m.grid_x, m.grid_y, m.grid_z, m.status, m.error, m.median_ns, m.min_ns, m.max_ns,"
      " m.mean_ns, m.stddev_ns, m.mad_ns, m.p10_ns, m.p90_ns, m.samples,"
      " m.launches_per_sample, m.graph_nodes, m.sm_clock_mhz_before, m.sm_clock_mhz_after, m.mem_clock_mhz,"
      " m.temp_c_before, m.temp_c_after, m.clocks_locked, m.l2_flush, m.binding,"
      " m.output_check, m.output_check_why, m.check_ns, m.measured_at"
      " FROM measurements m JOIN gpus g ON g.id = m.gpu_id"
      " WHERE m.superseded = 0 AND " GPU_FILTER " AND (?2 IS NULL OR m.measured_at >= ?2)"
      " ORDER BY m.kernel_id, m.gpu_id, m.width, m.height, m.block_x, m.block_y, m.block_z",
      measurement_cols, N(measurement_cols), 0, 0 },
    { "failures", "every failure a stage recorded, with its class",
      "SELECT f.stage, f.subject, f.kernel_id, f.class, f.message, f.created_at"
      " FROM failures f WHERE (?2 IS NULL OR f.created_at >= ?2) ORDER BY f.id",
      failure_cols, N(failure_cols), 0, 0 },
    { "gpus", "the GPUs measurements were taken on",
      "SELECT g.uuid, g.name, g.compute_cap, g.memory_bytes, g.sm_count, g.driver_version,"
      " g.cuda_version, CAST(round(a.sm) AS INTEGER), CAST(round(a.mem) AS INTEGER),"
      " coalesce(a.n, 0), g.first_seen"
      " FROM gpus g LEFT JOIN (SELECT m.gpu_id, avg(m.sm_clock_mhz_before) AS sm,"
      "  avg(m.mem_clock_mhz) AS mem, count(*) AS n FROM measurements m WHERE m.superseded = 0"
      "  AND (?2 IS NULL OR m.measured_at >= ?2) GROUP BY m.gpu_id) a ON a.gpu_id = g.id"
      " WHERE " GPU_FILTER " ORDER BY g.name, g.uuid",
      gpu_cols, N(gpu_cols), 0, 0 },
};

const struct columns_table *columns_tables(int *n_out)
{
    *n_out = N(tables);
    return tables;
}

const struct columns_table *columns_table(const char *name)
{
    for (int i = 0; i < N(tables); i++)
        if (strcmp(tables[i].name, name) == 0)
            return &tables[i];
    return NULL;
}

const struct columns_col *columns_param_fields(int *n_out)
{
    *n_out = N(param_fields);
    return param_fields;
}

int columns_is_list(const struct columns_col *c)
{
    return c->special == COLUMNS_LIST_COMMA || c->special == COLUMNS_LIST_JSON ||
           c->special == COLUMNS_PARAMS;
}

const char *columns_type_name(const struct columns_col *c)
{
    if (c->special == COLUMNS_PARAMS)
        return "LIST<STRUCT> (see below)";
    if (columns_is_list(c))
        return "LIST<STRING>";
    switch (c->type) {
    case PARQUET_BOOLEAN: return "BOOLEAN";
    case PARQUET_INT32: return "INT32";
    case PARQUET_INT64: return "INT64";
    case PARQUET_DOUBLE: return "DOUBLE";
    case PARQUET_STRING: return "STRING (UTF-8)";
    case PARQUET_TIMESTAMP: return "TIMESTAMP (UTC, us)";
    default: return "BYTES";
    }
}

static void markdown_rows(struct buf *out, const struct columns_col *cols, int n)
{
    buf_adds(out, "| column | type | null | unit | meaning |\n|---|---|---|---|---|\n");
    for (int c = 0; c < n; c++)
        buf_addf(out, "| `%s` | %s | %s | %s | %s |\n", cols[c].name, columns_type_name(&cols[c]),
                 cols[c].nullable ? "yes" : "no", cols[c].unit, cols[c].meaning);
}

void columns_markdown(struct buf *out)
{
    buf_adds(out, "# Columns\n\nGenerated by `lscat dataset export` from the same definitions "
                  "its Parquet and CSV writers use. Types are Parquet types. TIMESTAMP columns "
                  "are microseconds since 1970-01-01 UTC (`TIMESTAMP(isAdjustedToUTC=true, "
                  "MICROS)`); LIST columns are Parquet LISTs (`UNNEST` in DuckDB, `explode` in "
                  "pandas and polars). In CSV, timestamps are ISO-8601 text in UTC "
                  "(`2026-11-21T08:00:00Z`), every LIST is its JSON array text, null is an empty "
                  "field, an empty string is `\"\"`, booleans are `true`/`false` and BYTES are "
                  "base64.\n");
    for (int i = 0; i < N(tables); i++) {
        const struct columns_table *t = &tables[i];
        buf_addf(out, "\n## %s\n\n%c%s.\n\n", t->name, t->meaning[0] - 32, t->meaning + 1);
        markdown_rows(out, t->cols, t->ncols);
        for (int c = 0; c < t->ncols; c++)
            if (t->cols[c].special == COLUMNS_PARAMS) {
                buf_addf(out, "\nFields of each `%s` element (a struct):\n\n", t->cols[c].name);
                markdown_rows(out, param_fields, N(param_fields));
            }
    }
}
