#!/usr/bin/env python3
"""Check an `lscat dataset export` with pyarrow (and pandas), value by value against the store.

Two ways to run it (prints one "ok - name" / "not ok - name: why" line per check, exit 1 on
any failure):

  check_pyarrow.py EXPORT_DIR STORE.db WORK_DIR
      check Parquet files already exported from STORE.db (kernel sources under WORK_DIR)

  check_pyarrow.py --self-test BIN_DIR
      build the SYNTHETIC store (tests/dataset/fixtures/synthetic.sql) with BIN_DIR/lscat-init
      and Python's sqlite3, export it with BIN_DIR/lscat-dataset (default, many row groups,
      PLAIN only, since-filtered, empty store), and check every export. Needs only python3 with
      pyarrow (e.g. the GPU machine: carry build/bin).

The expected values come from SQL written here, not the exporter's.
"""
import datetime
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import pyarrow.parquet as pq

FAILED = 0


def ok(name):
    print(f"ok - pyarrow_{name}", flush=True)


def not_ok(name, why):
    global FAILED
    FAILED += 1
    print(f"not ok - pyarrow_{name}: {why}", flush=True)


def build(c):
    return (f"(SELECT b.{c} FROM builds b WHERE b.kernel_id = k.id"
            " ORDER BY b.status = 'ok' DESC, b.built_at DESC LIMIT 1)")


def distinct(col, extra=""):
    return (f"(SELECT group_concat(v, char(31)) FROM (SELECT DISTINCT p.{col} AS v FROM probes p"
            f" WHERE p.kernel_id = k.id{extra} ORDER BY 1))")


PROBED = "EXISTS (SELECT 1 FROM probes p WHERE p.kernel_id = k.id)"
PARAM_FIELDS = ["name", "type", "canonical", "kind", "role", "pointer", "const", "elem", "elem_bytes",
                "bits", "float", "bytes", "template_dependent"]


def tables(since):
    """Every column of every table: (name, SQL expression, kind), as tests/dataset/js/check.mjs."""
    sm = f" AND m.measured_at >= '{since}'" if since else ""
    i32 = lambda cs, a: [(c, f"{a}.{c}", "i32") for c in cs]  # noqa: E731
    return {
        "kernels": ("kernels k ORDER BY k.id", [
            ("id", "k.id", "text"), ("name", "k.name", "text"), ("template_args", "k.template_args", "text"),
            ("status", "k.status", "text"), ("param_count", "k.param_count", "i32"), ("roles_known", "k.roles_known", "i32"),
            ("params", "k.params", "params"), ("is2d", "k.params", "json:is2d"),
            ("dynamic_shared", "k.params", "json:dynamic_shared"), ("device_launch", "k.params", "json:device_launch"),
            ("source_bytes", "k.source_bytes", "i64"),
            ("occurrences", "(SELECT count(*) FROM kernel_occurrences x WHERE x.kernel_id = k.id)", "i64"),
            ("build_arch", build("arch"), "text"), ("build_status", build("status"), "text"),
            ("build_attempts", build("attempts"), "i32"), ("repairs", build("fixes"), "list"),
            ("nvcc_version", build("nvcc_version"), "text"), ("registers", build("registers"), "i32")] +
            [(f"{c}_bytes", build(f"{c}_bytes"), "i64") for c in ("shared", "stack", "spill_store", "spill_load", "const")] +
            [("probe_outcomes", f"CASE WHEN {PROBED} THEN {distinct('outcome')} END", "sep"),
             ("sanitizer", f"CASE WHEN {PROBED} THEN coalesce({distinct('sanitizer', ' AND p.sanitizer IS NOT NULL')}, '') END", "sep"),
             ("binding", "k.binding", "text"), ("created_at", "k.created_at", "ts")]),
        "sources": ("kernels k ORDER BY k.id", [("kernel_id", "k.id", "text"), ("source", "k.dir", "source")]),
        "sources_raw": ("kernels k ORDER BY k.id", [("kernel_id", "k.id", "text"), ("source_raw", "k.dir", "bytes")]),
        "occurrences": ("kernel_occurrences o JOIN sources s ON s.id = o.source_id LEFT JOIN repos r ON r.id = s.repo_id"
                        " ORDER BY o.kernel_id, r.full_name, o.path, o.line", [
            ("kernel_id", "o.kernel_id", "text"), ("repository", "r.full_name", "text"), ("commit", "r.commit_sha", "text"),
            ("path", "o.path", "text"), ("line", "o.line", "i32")]),
        "repositories": ("repos r ORDER BY r.full_name", [
            ("repository", "r.full_name", "text"), ("github_id", "r.github_id", "i64"), ("commit", "r.commit_sha", "text"),
            ("default_branch", "r.default_branch", "text"), ("fetched_at", "r.fetched_at", "ts"),
            ("license", "r.license_spdx", "text"), ("evidence", "r.evidence", "words"), ("language", "r.language", "text"),
            ("source", "r.source", "text"), ("first_seen", "r.first_seen", "ts"), ("last_seen", "r.last_seen", "ts"),
            ("fetch_status", "r.fetch_status", "text"), ("files_kept", "r.files_kept", "i64"),
            ("kernels", "(SELECT count(DISTINCT o.kernel_id) FROM kernel_occurrences o JOIN sources s ON s.id = o.source_id"
                        " WHERE s.repo_id = r.id)", "i64")]),
        "measurements": ("measurements m, gpus g WHERE g.id = m.gpu_id AND NOT m.superseded" + sm +
                         " ORDER BY m.kernel_id, m.gpu_id, m.width, m.height, m.block_x, m.block_y, m.block_z", [
            ("kernel_id", "m.kernel_id", "text"), ("gpu", "g.name", "text"), ("gpu_uuid", "g.uuid", "text")] +
            i32(["width", "height", "block_x", "block_y", "block_z", "grid_x", "grid_y", "grid_z"], "m") +
            [("status", "m.status", "text"), ("error", "m.error", "text")] +
            [(f"{s}_ns", f"m.{s}_ns", "real") for s in ("median", "min", "max", "mean", "stddev", "mad", "p10", "p90")] +
            i32(["samples", "launches_per_sample", "graph_nodes", "sm_clock_mhz_before", "sm_clock_mhz_after",
                 "mem_clock_mhz", "temp_c_before", "temp_c_after"], "m") +
            [("clocks_locked", "m.clocks_locked", "bool"), ("l2_flush", "m.l2_flush", "bool"),
             ("binding", "m.binding", "text"), ("measured_at", "m.measured_at", "ts")]),
        "failures": (f"failures f WHERE f.created_at >= '{since}' ORDER BY f.id", [
            ("stage", "f.stage", "text"), ("subject", "f.subject", "text"), ("kernel_id", "f.kernel_id", "text"),
            ("class", "f.class", "text"), ("message", "f.message", "text"), ("created_at", "f.created_at", "ts")]),
        "gpus": ("gpus g ORDER BY g.name, g.uuid", [
            ("uuid", "g.uuid", "text"), ("model", "g.name", "text"), ("compute_capability", "g.compute_cap", "text"),
            ("memory_bytes", "g.memory_bytes", "i64"), ("sm_count", "g.sm_count", "i32"),
            ("driver_version", "g.driver_version", "text"), ("cuda_version", "g.cuda_version", "text")] +
            [(n, f"(SELECT CAST(round(avg(m.{c})) AS INTEGER) FROM measurements m WHERE m.gpu_id = g.id AND m.superseded = 0{sm})", "i32")
             for n, c in (("sm_clock_mhz_mean", "sm_clock_mhz_before"), ("mem_clock_mhz_mean", "mem_clock_mhz"))] +
            [("measurements", f"(SELECT count(*) FROM measurements m WHERE m.gpu_id = g.id AND m.superseded = 0{sm})", "i64"),
             ("first_seen", "g.first_seen", "ts")]),
    }


def source_file(work, d):
    p = d if d.startswith("/") else os.path.join(work, d) if d.startswith("kernels/") else os.path.join(work, "kernels", d)
    p = os.path.join(p, "kernel.cu")
    return open(p, "rb").read() if os.path.exists(p) else None


def readable(b):
    """lscat's promise: valid UTF-8 kept, each invalid byte shown as U+0080..U+00FF."""
    s = b.decode("utf-8", "surrogateescape")
    return "".join(chr(ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in s)


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def micros(text):
    t = text.replace(" ", "T").replace("Z", "+00:00")
    dt = datetime.datetime.fromisoformat(t)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    return (dt - EPOCH) // datetime.timedelta(microseconds=1)


def params_list(text):
    v = json.loads(text)
    return v if isinstance(v, list) else v["params"]


def param_row(p):
    return [(p.get("kind") == "pointer" if isinstance(p.get("kind"), str) else None) if f == "pointer" else p.get(f)
            for f in PARAM_FIELDS]


def expected(kind, v, work):
    """The store's value in the form pyarrow's to_pylist() gives (timestamps as microseconds)."""
    if kind.startswith("json:"):
        x = json.loads(v).get(kind[5:]) if v is not None and isinstance(json.loads(v), dict) else None
        return x if isinstance(x, bool) else None
    if kind == "source":
        f = source_file(work, v)
        return None if f is None else readable(f)
    if v is None:
        return None
    return {
        "text": lambda: v, "i32": lambda: v, "i64": lambda: v, "real": lambda: float(v), "bool": lambda: bool(v),
        "ts": lambda: micros(v), "list": lambda: json.loads(v), "words": lambda: v.split(",") if v else [],
        "sep": lambda: v.split("\x1f") if v else [], "params": lambda: [param_row(p) for p in params_list(v)],
        "bytes": lambda: source_file(work, v),
    }[kind]()


def actual(kind, v):
    if v is None:
        return None
    if kind == "ts":
        return (v - EPOCH) // datetime.timedelta(microseconds=1)
    if kind == "params":
        return [[p.get(f) for f in PARAM_FIELDS] for p in v]
    return v


def arrow_type_ok(kind, t):
    import pyarrow as pa
    if kind == "params":
        return (pa.types.is_list(t) and pa.types.is_struct(t.value_type) and
                [t.value_type.field(i).name for i in range(t.value_type.num_fields)] == PARAM_FIELDS)
    if kind in ("list", "words", "sep"):
        return pa.types.is_list(t) and pa.types.is_string(t.value_type)
    if kind == "ts":
        return pa.types.is_timestamp(t) and t.unit == "us" and t.tz in ("UTC", "+00:00")
    want = {"text": pa.string(), "source": pa.string(), "i32": pa.int32(), "i64": pa.int64(),
            "real": pa.float64(), "bool": pa.bool_(), "bytes": pa.binary()}
    if kind.startswith("json:"):
        return t == pa.bool_()
    return t == want[kind]


def is_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def check_stats(name, path, rows):
    md = pq.ParquetFile(path).metadata
    base = 0
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            cname = col.path_in_schema
            if "." in cname:  # a list's leaf: its statistics count level entries, not rows
                continue
            vals = [r[cname] for r in rows[base:base + rg.num_rows]]
            st = col.statistics
            if st is None:
                return not_ok(f"{name}_statistics", f"{cname}: no statistics")
            nulls = sum(v is None for v in vals)
            if st.null_count != nulls:
                return not_ok(f"{name}_statistics", f"{cname}: null_count {st.null_count}, counted {nulls}")
            nn = [v for v in vals if v is not None]
            if nn and st.has_min_max and not isinstance(nn[0], (bytes, datetime.datetime)):
                if st.min != min(nn) or st.max != max(nn):
                    return not_ok(f"{name}_statistics", f"{cname}: {st.min}..{st.max} vs {min(nn)}..{max(nn)}")
        base += rg.num_rows
    ok(f"{name}_statistics_match_values")


def card_line(out, reader, path):
    """The data card's loading line for `reader`, for the file `path` (one line serves every table)."""
    for line in open(os.path.join(out, "README.md"), encoding="utf-8"):
        if line.startswith(reader + ": ") and "'measurements.parquet'" in line:
            return line[len(reader) + 2:].strip().replace("'measurements.parquet'", repr(path))
    return None


def store_rows(con, frm, cols, table, work):
    rows = con.execute("SELECT " + ", ".join(e for _, e, _ in cols) + " FROM " + frm).fetchall()
    if table == "sources_raw":
        rows = [r for r in rows if source_file(work, r[1]) is not None and not is_utf8(source_file(work, r[1]))]
    return rows


def check_export(label, out, db, work, since=""):
    import pyarrow  # noqa: F401 - the card's line names it
    import pyarrow.parquet  # noqa: F401
    con = sqlite3.connect(db)
    here = os.getcwd()
    os.chdir(out)  # the card's lines name the files relative to the export folder
    try:
        for table, (frm, cols) in tables(since).items():
            check_table(label, table, frm, cols, con, out, work)
    finally:
        os.chdir(here)
        con.close()


def check_table(label, table, frm, cols, con, out, work):
    path = f"{table}.parquet"
    name = f"{label}_{table}"
    if not os.path.exists(path):
        return not_ok(name, "missing file")
    line = card_line(out, "pyarrow", path)
    try:
        t = eval(line, {"pyarrow": pyarrow_module()})  # noqa: S307 - the card's line, as written
    except Exception as e:  # noqa: BLE001 - report any reader failure
        return not_ok(name, f"the card's pyarrow line {line!r} fails: {e}")
    kv = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}
    if kv.get("lscat.table") == table and "lscat.schema_version" in kv:
        ok(f"{name}_key_value_metadata")
    else:
        not_ok(f"{name}_key_value_metadata", repr(kv))
    names = [c for c, _, _ in cols]
    if t.column_names != names:
        return not_ok(f"{name}_columns", f"file has {t.column_names}, expected {names}")
    bad = None
    for cname, _, kind in cols:
        if not arrow_type_ok(kind, t.schema.field(cname).type):
            bad = bad or f"{cname} is {t.schema.field(cname).type}"
    if bad:
        not_ok(f"{name}_types", bad)
    else:
        ok(f"{name}_every_column_has_its_arrow_type")
    rows = t.to_pylist()
    exp = store_rows(con, frm, cols, table, work)
    bad = None if len(rows) == len(exp) else f"{len(rows)} rows, store has {len(exp)}"
    for i, (er, ar) in enumerate(zip(exp, rows)):
        for (cname, _, kind), ev in zip(cols, er):
            want, got = expected(kind, ev, work), actual(kind, ar.get(cname))
            if want != got and not bad:
                bad = f"row {i} column {cname}: want {str(want)[:60]!r}, got {str(got)[:60]!r}"
    if bad:
        not_ok(f"{name}_values", bad)
    else:
        ok(f"{name}_values_match_the_store")
    check_stats(name, path, rows)
    check_pandas(name, out, path, cols, len(rows))


def pyarrow_module():
    import pyarrow
    import pyarrow.parquet  # noqa: F401 - makes pyarrow.parquet reachable
    return pyarrow


def check_pandas(name, out, path, cols, nrows):
    try:
        import pandas as pd
    except ImportError:
        print(f"skip - pyarrow_{name}_loads_in_pandas: pandas not installed")
        return
    line = card_line(out, "pandas", path)
    df = eval(line, {"pd": pd})  # noqa: S307 - the card's line, as written
    ts = [c for c, _, k in cols if k == "ts"]
    bad = [c for c in ts if not (str(df[c].dtype).startswith("datetime64") and "UTC" in str(df[c].dtype))]
    if len(df) != nrows:
        not_ok(f"{name}_loads_in_pandas", f"{len(df)} rows, want {nrows}")
    elif bad:
        not_ok(f"{name}_loads_in_pandas", f"{bad[0]} is {df[bad[0]].dtype}, not a UTC datetime")
    else:
        ok(f"{name}_loads_in_pandas_with_utc_timestamps")


def self_test(bin_dir):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tmp = tempfile.mkdtemp(prefix="lscat-pyarrow-")
    db, work = os.path.join(tmp, "lscat.db"), os.path.join(tmp, "work")
    subprocess.run([os.path.join(bin_dir, "lscat-init"), "--db", db, "--work", work, "-q"], check=True)
    con = sqlite3.connect(db)
    con.executescript(open(os.path.join(root, "tests/dataset/fixtures/synthetic.sql")).read())
    con.commit()
    con.close()
    sources = {
        "11": b"__global__ void saxpy(int n, float a, const float *x, float *y)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n",
        "22": "template <typename T, int B>\n__global__ void gemm(const T *a, const T *b, T *c, int n) { /* \"quoted\", commas, é ✓ */ }\n".encode(),
        "33": b"// caf\xe9 \xff\xfe na\xefve\r\n__global__ void latin1_kernel(int *p) { *p = 1; }\n\x00tail",
        "55": b"x" * 3000000,
    }
    for p, data in sources.items():
        d = os.path.join(work, "kernels", p, p * 32)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "kernel.cu"), "wb").write(data)
    exe = os.path.join(bin_dir, "lscat-dataset")
    runs = [("default", []), ("row_groups", ["--row-group-rows", "2"]),
            ("plain", ["--no-dictionary", "--zstd-level", "0"]), ("since", ["--since", "2026-11-20T00:00:02Z"])]
    for label, extra in runs:
        out = os.path.join(tmp, label)
        subprocess.run([exe, "--db", db, "--work", work, "-q", "export", "--out", out] + extra, check=True)
        check_export(label, out, db, work, "2026-11-20T00:00:02Z" if label == "since" else "")
    empty = os.path.join(tmp, "empty.db")
    subprocess.run([os.path.join(bin_dir, "lscat-init"), "--db", empty, "-q"], check=True)
    subprocess.run([exe, "--db", empty, "--work", work, "-q", "export", "--out", os.path.join(tmp, "empty")], check=True)
    check_export("empty", os.path.join(tmp, "empty"), empty, work)
    if not FAILED:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        self_test(sys.argv[2])
    elif len(sys.argv) == 4:
        check_export("export", *sys.argv[1:])
    else:
        sys.exit(__doc__)
    sys.exit(1 if FAILED else 0)
