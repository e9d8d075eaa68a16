#!/usr/bin/env python3
"""Fixtures of the nightly end-to-end test (tests/e2e/nightly.sh):
  hour OUT.json.gz [--push OWNER/NAME] FILE.json...   one GH Archive hour: the events of the
        FILEs, plus (--push) a pull request whose base repository (Cuda) was pushed just now
  shard DB KERNEL_NAME        add a GPU and a small sweep of ok measurements of the kernel named
        KERNEL_NAME to the store DB, as a GPU node's tune run would (a shard for --shards)
  links BASE_URL PAGE_PATH... every href/src of the HTML files (paths under BASE_URL) answers 200
  png FILE MIN_VALUES         FILE is a PNG whose decompressed pixel rows hold at least
        MIN_VALUES distinct byte values (a page with a table drawn, not a blank screen)
  kernels CSV.GZ              the kernels table's "id name" lines, sorted"""
import csv
import datetime
import gzip
import html.parser
import io
import json
import sqlite3
import struct
import sys
import urllib.parse
import urllib.request
import zlib


def hour(args):
    out, push, files = args[0], None, args[1:]
    if files and files[0] == "--push":
        push, files = files[1], files[2:]
    lines = []
    for f in files:
        with open(f, "rb") as fh:
            lines += [l for l in fh.read().split(b"\n") if l.strip()]
    if push:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        owner, name = push.split("/")
        repo = {"id": 77000001, "name": name, "full_name": push, "language": "Cuda",
                "description": "changed upstream", "pushed_at": now}
        ev = {"id": "99000000001", "type": "PullRequestEvent", "public": True,
              "repo": {"id": 77000001, "name": push}, "created_at": now,
              "payload": {"action": "opened", "number": 3,
                          "pull_request": {"base": {"ref": "main", "repo": repo},
                                           "head": {"ref": "topic", "repo": repo}}}}
        lines.append(json.dumps(ev).encode())
    with open(out, "wb") as fh:
        fh.write(gzip.compress(b"\n".join(lines) + b"\n", mtime=0))


def shard(args):
    db, kernel = args
    c = sqlite3.connect(db)
    kid = c.execute("SELECT id FROM kernels WHERE name = ?", (kernel,)).fetchone()[0]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    c.execute("INSERT INTO gpus(uuid, name, compute_cap, memory_bytes, sm_count, host, first_seen)"
              " VALUES ('GPU-nightly-test-0001', 'NVIDIA H100 80GB HBM3', '9.0', 85000000000, 132,"
              " 'gpu-node-1', ?)", (now,))
    gpu = c.execute("SELECT id FROM gpus WHERE uuid = 'GPU-nightly-test-0001'").fetchone()[0]
    for size in (240, 496):
        for i, bx in enumerate((64, 128, 256, 512)):
            t = 1000.0 * size / 240 * (1.3 - 0.1 * i)
            c.execute("INSERT INTO measurements(kernel_id, gpu_id, width, height, block_x, block_y,"
                      " status, median_ns, min_ns, max_ns, mean_ns, samples, measured_at,"
                      " output_check)"  # as a GPU node's tune records them: checked, matching
                      " VALUES (?, ?, ?, ?, ?, 1, 'ok', ?, ?, ?, ?, 10, ?, 'match')",
                      (kid, gpu, size, size, bx, t, t * 0.98, t * 1.05, t, now))
    c.commit()


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.found.append(v)


def links(args):
    base, pages, bad, n = args[0].rstrip("/") + "/", args[1:], [], 0
    for page in pages:
        p = Links()
        with urllib.request.urlopen(base + page) as r:
            p.feed(r.read().decode())
        for link in p.found:
            url = urllib.parse.urljoin(base + page, link)
            try:
                with urllib.request.urlopen(url) as r:
                    code = r.status
            except Exception as e:
                code = str(e)
            n += 1
            if code != 200:
                bad.append("%s -> %s (%s)" % (page, link, code))
    if bad or not n:
        sys.exit("unresolved links: %s" % (", ".join(bad) or "no links at all"))
    print("%d links resolve" % n)


def png(args):
    path, want = args[0], int(args[1])
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s is not a PNG" % path)
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    values = len(set(zlib.decompress(idat)))
    if values < want:
        sys.exit("%s holds %d distinct byte values (< %d): a blank page?" % (path, values, want))
    print("%s: %d distinct byte values" % (path, values))


def kernels(args):
    with gzip.open(args[0], "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    for line in sorted("%s %s" % (r["kernel_id"] if "kernel_id" in r else r["id"], r["name"])
                       for r in rows):
        print(line)


{"hour": hour, "shard": shard, "links": links, "png": png, "kernels": kernels}[sys.argv[1]](
    sys.argv[2:])
