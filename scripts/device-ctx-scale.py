#!/usr/bin/env python3
"""How CUDA context creation scales with concurrent processes on one GPU (issue #14 item 4: what
serialises probes). For each N, N processes start at once; each loads libcuda, calls cuInit,
retains the primary context of device 0, allocates 64 MB and frees it, holds the context until
all N have one (a barrier through a pipe), then releases it. Prints, per N: how many succeeded,
the driver errors, and the time to a held context (median / max) - as root, without lscat's
sandbox, so it separates the driver's own scaling from the sandbox's.
  usage: scripts/device-ctx-scale.py [N ...]   (default 1 4 8 16 24 32 48)"""
import ctypes, multiprocessing as mp, statistics, sys, time


def child(q, go, hold):
    t0 = time.monotonic()
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        q.put(("load", str(e), 0.0))
        return
    ctx, dev, ptr = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_uint64()
    rc = cu.cuInit(0) or cu.cuDeviceGet(ctypes.byref(dev), 0) or \
        cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) or cu.cuCtxSetCurrent(ctx) or \
        cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(64 << 20))
    t1 = time.monotonic() - t0
    q.put(("ok" if rc == 0 else "err", rc, t1))
    if rc == 0:
        hold.wait(120)  # every process holds its context at once
        cu.cuMemFree_v2(ptr)
        cu.cuDevicePrimaryCtxRelease(dev)


def run(n):
    q, hold = mp.Queue(), mp.Event()
    ps = [mp.Process(target=child, args=(q, None, hold)) for _ in range(n)]
    t0 = time.monotonic()
    for p in ps:
        p.start()
    res = [q.get(timeout=300) for _ in ps]
    all_held = time.monotonic() - t0
    hold.set()
    for p in ps:
        p.join(60)
    ok = [t for k, _, t in res if k == "ok"]
    errs = {}
    for k, rc, _ in res:
        if k != "ok":
            errs[rc] = errs.get(rc, 0) + 1
    print("N=%-3d ok %-3d errors %-12s context+64MB: median %.2f s, max %.2f s; all %d held after %.2f s"
          % (n, len(ok), errs or "-", statistics.median(ok) if ok else 0, max(ok) if ok else 0, n, all_held),
          flush=True)


if __name__ == "__main__":
    mp.set_start_method("spawn")
    for n in [int(a) for a in sys.argv[1:]] or [1, 4, 8, 16, 24, 32, 48]:
        run(n)
