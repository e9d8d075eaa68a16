#!/usr/bin/env python3
"""Write hostile archives for tests/harvest/extract.c into OUT:
  evil.tar   path traversal, absolute path, device, hard link, symlink, odd paths, a kept file
  bomb.zip   6 highly compressible 8 MiB .cu files (ratio far over the cap)
  big.zip    one .cu file that declares 17 MiB
  commit.zip a GitHub-style zip whose comment is a commit id; plain.zip without comment
  names.tar  a name part over 255 bytes, a path too deep, a file that is also a folder, and
             kept files before and after them (none of that may stop the extraction)
  dup.tar    the same path twice with different contents
  half.zip   the first half of a zip; cut.zip a zip cut where its central directory starts;
  cut.tar.gz a gzipped tar cut short; empty.zip 0 bytes
  many.zip   50,000 small headers, each with its own content (for the entry cap's cost)"""
import io
import os
import sys
import tarfile
import zipfile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def add(tar, name, data=b"", **kw):
    ti = tarfile.TarInfo(name)
    for k, v in kw.items():
        setattr(ti, k, v)
    ti.size = len(data) if ti.type in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
    tar.addfile(ti, io.BytesIO(data) if ti.size else None)


with tarfile.open(os.path.join(out, "evil.tar"), "w", format=tarfile.GNU_FORMAT) as t:
    add(t, "top/ok.cu", b"__global__ void k() {}\n")
    add(t, "top/../../evil.cu", b"evil\n")
    add(t, "/abs.cu", b"abs\n")
    add(t, "top/dev.cu", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
    add(t, "top/fifo.cu", type=tarfile.FIFOTYPE)
    add(t, "top/hard.cu", type=tarfile.LNKTYPE, linkname="top/ok.cu")
    add(t, "top/link.cu", type=tarfile.SYMTYPE, linkname="../../../etc/passwd")
    add(t, "top/a/./b//c.h", b"#pragma once\n")
    add(t, "top/notes.txt", b"not kept\n")
    add(t, "top/win\\..\\x.cu", b"x\n")

with zipfile.ZipFile(os.path.join(out, "bomb.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(6):
        z.writestr("top/zero%d.cu" % i, b"\0" * (8 << 20))

with zipfile.ZipFile(os.path.join(out, "big.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("top/big.cu", b"/" * (17 << 20))
    z.writestr("top/small.cu", b"int x;\n")

with zipfile.ZipFile(os.path.join(out, "commit.zip"), "w") as z:
    z.comment = b"0123456789abcdef0123456789abcdef01234567"
    z.writestr("r-0123/k.cu", b"int y;\n")
with zipfile.ZipFile(os.path.join(out, "plain.zip"), "w") as z:
    z.writestr("r/k.cu", b"int y;\n")

with tarfile.open(os.path.join(out, "names.tar"), "w", format=tarfile.GNU_FORMAT) as t:
    add(t, "top/first.cu", b"int first;\n")
    add(t, "top/" + "n" * 300 + ".cu", b"int long_name;\n")
    add(t, "top/" + "d/" * 70 + "deep.cu", b"int deep;\n")
    add(t, "top/clash.h", b"int clash;\n")
    add(t, "top/clash.h/inner.cu", b"int inner;\n")
    add(t, "top/last.cu", b"int last;\n")

with tarfile.open(os.path.join(out, "dup.tar"), "w", format=tarfile.GNU_FORMAT) as t:
    add(t, "top/k.cu", b"int first_copy;\n")
    add(t, "top/other.cu", b"int other;\n")
    add(t, "top/k.cu", b"int second_copy;\n")

with zipfile.ZipFile(os.path.join(out, "whole.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.comment = b"0123456789abcdef0123456789abcdef01234567"
    for i in range(8):
        z.writestr("r-0123/k%d.cu" % i, (b"__global__ void k%d() {}\n" % i) * 200)
whole = open(os.path.join(out, "whole.zip"), "rb").read()
open(os.path.join(out, "half.zip"), "wb").write(whole[: len(whole) // 2])
open(os.path.join(out, "cut.zip"), "wb").write(whole[: whole.find(b"PK\x01\x02")])
with tarfile.open(os.path.join(out, "whole.tar.gz"), "w:gz") as t:
    for i in range(8):
        add(t, "top/k%d.cu" % i, os.urandom(20000))
tgz = open(os.path.join(out, "whole.tar.gz"), "rb").read()
open(os.path.join(out, "cut.tar.gz"), "wb").write(tgz[: len(tgz) * 2 // 3])
open(os.path.join(out, "empty.zip"), "wb").close()

with zipfile.ZipFile(os.path.join(out, "many.zip"), "w", zipfile.ZIP_STORED) as z:
    for i in range(50000):
        z.writestr("top/d%d/f%d.h" % (i // 1000, i), b"int x%d;\n" % i)
