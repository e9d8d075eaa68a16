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


def tables(since):
    sm = f" AND m.measured_at >= '{since}'" if since else ""
    return {
        "kernels": ("kernels k ORDER BY k.id", [
            ("id", "k.id", "text"), ("name", "k.name", "text"), ("template_args", "k.template_args", "text"),
            ("status", "k.status", "text"), ("param_count", "k.param_count", "int"), ("params", "k.params", "text"),
            ("source_bytes", "k.source_bytes", "int"), ("source", "k.dir", "source"), ("source_raw", "k.dir", "source_raw"),
            ("occurrences", "(SELECT count(*) FROM kernel_occurrences x WHERE x.kernel_id = k.id)", "int"),
            ("registers", "(SELECT registers FROM builds b WHERE b.kernel_id = k.id AND b.status = 'ok')", "int"),
            ("repairs", "(SELECT fixes FROM builds b WHERE b.kernel_id = k.id)", "text"),
            ("binding", "k.binding", "text")]),
        "occurrences": ("kernel_occurrences o JOIN sources s ON s.id = o.source_id LEFT JOIN repos r ON r.id = s.repo_id"
                        " ORDER BY o.kernel_id, r.full_name, o.path, o.line", [
            ("kernel_id", "o.kernel_id", "text"), ("repository", "r.full_name", "text"), ("commit", "r.commit_sha", "text"),
            ("path", "o.path", "text"), ("line", "o.line", "int")]),
        "repositories": ("repos r ORDER BY r.full_name", [
            ("repository", "r.full_name", "text"), ("github_id", "r.github_id", "int"), ("license", "r.license_spdx", "text"),
            ("evidence", "r.evidence", "text")]),
        "measurements": ("measurements m, gpus g WHERE g.id = m.gpu_id AND NOT m.superseded" + sm +
                         " ORDER BY m.kernel_id, m.gpu_id, m.width, m.height, m.block_x, m.block_y, m.block_z", [
            ("kernel_id", "m.kernel_id", "text"), ("gpu", "g.name", "text"), ("width", "m.width", "int"),
            ("height", "m.height", "int"), ("block_x", "m.block_x", "int"), ("block_y", "m.block_y", "int"),
            ("block_z", "m.block_z", "int"), ("status", "m.status", "text"), ("error", "m.error", "text")] +
            [(f"{s}_ns", f"m.{s}_ns", "real") for s in ("median", "min", "max", "mean", "stddev", "mad", "p10", "p90")] +
            [("samples", "m.samples", "int"), ("clocks_locked", "m.clocks_locked", "bool"), ("l2_flush", "m.l2_flush", "bool"),
             ("binding", "m.binding", "text")]),
        "failures": (f"failures f WHERE f.created_at >= '{since}' ORDER BY f.id", [
            ("stage", "f.stage", "text"), ("subject", "f.subject", "text"), ("kernel_id", "f.kernel_id", "text"),
            ("class", "f.class", "text"), ("message", "f.message", "text")]),
        "gpus": ("gpus g ORDER BY g.name, g.uuid", [
            ("uuid", "g.uuid", "text"), ("model", "g.name", "text"), ("memory_bytes", "g.memory_bytes", "int"),
            ("measurements", "(SELECT count(*) FROM measurements m WHERE m.gpu_id = g.id AND m.superseded = 0" + sm + ")", "int")]),
    }


def source_file(work, d):
    p = d if d.startswith("/") else os.path.join(work, d) if d.startswith("kernels/") else os.path.join(work, "kernels", d)
    p = os.path.join(p, "kernel.cu")
    return open(p, "rb").read() if os.path.exists(p) else None


def readable(b):
    """lscat's promise: valid UTF-8 kept, each invalid byte shown as U+0080..U+00FF."""
    s = b.decode("utf-8", "surrogateescape")
    return "".join(chr(ord(c) - 0xDC00) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in s)


def compare(kind, exp, act, work):
    if kind in ("source", "source_raw"):
        f = source_file(work, exp)
        if kind == "source":
            want = None if f is None else readable(f)
        else:
            want = f if f is not None and not is_utf8(f) else None
        return None if act == want else f"want {str(want)[:40]!r}, got {str(act)[:40]!r}"
    if kind == "bool" and exp is not None:
        exp = bool(exp)
    if exp is None or act is None:
        return None if exp is act else f"want {exp!r}, got {act!r}"
    if kind == "real":
        return None if float(exp) == act else f"want {exp!r}, got {act!r}"
    return None if exp == act else f"want {str(exp)[:60]!r}, got {str(act)[:60]!r}"


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
            vals = [r[cname] for r in rows[base:base + rg.num_rows]]
            st = col.statistics
            if st is None:
                return not_ok(f"{name}_statistics", f"{cname}: no statistics")
            nulls = sum(v is None for v in vals)
            if st.null_count != nulls:
                return not_ok(f"{name}_statistics", f"{cname}: null_count {st.null_count}, counted {nulls}")
            nn = [v for v in vals if v is not None]
            if nn and st.has_min_max and not isinstance(nn[0], bytes):
                if st.min != min(nn) or st.max != max(nn):
                    return not_ok(f"{name}_statistics", f"{cname}: {st.min}..{st.max} vs {min(nn)}..{max(nn)}")
        base += rg.num_rows
    ok(f"{name}_statistics_match_values")


def check_export(label, out, db, work, since=""):
    con = sqlite3.connect(db)
    for table, (frm, cols) in tables(since).items():
        path = os.path.join(out, f"{table}.parquet")
        name = f"{label}_{table}"
        if not os.path.exists(path):
            not_ok(name, "missing file")
            continue
        try:
            t = pq.read_table(path)
        except Exception as e:  # noqa: BLE001 - report any reader failure
            not_ok(name, f"pyarrow cannot read it: {e}")
            continue
        kv = {k.decode(): v.decode() for k, v in (pq.read_schema(path).metadata or {}).items()}
        if kv.get("lscat.table") == table and "lscat.schema_version" in kv:
            ok(f"{name}_key_value_metadata")
        else:
            not_ok(f"{name}_key_value_metadata", repr(kv))
        rows = t.to_pylist()
        exp = con.execute("SELECT " + ", ".join(e for _, e, _ in cols) + " FROM " + frm).fetchall()
        bad = None
        if len(rows) != len(exp):
            bad = f"{len(rows)} rows, store has {len(exp)}"
        for i, (er, ar) in enumerate(zip(exp, rows)):
            for (cname, _, kind), ev in zip(cols, er):
                why = compare(kind, ev, ar.get(cname), work)
                if why and not bad:
                    bad = f"row {i} column {cname}: {why}"
        if bad:
            not_ok(f"{name}_values", bad)
        else:
            ok(f"{name}_values_match_the_store")
        check_stats(name, path, rows)
        try:
            import pandas as pd
            df = pd.read_parquet(path)
            if len(df) == len(rows):
                ok(f"{name}_loads_in_pandas")
            else:
                not_ok(f"{name}_loads_in_pandas", f"{len(df)} rows")
        except ImportError:
            print(f"skip - pyarrow_{name}_loads_in_pandas: pandas not installed")
    con.close()


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
