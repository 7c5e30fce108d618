#!/usr/bin/env python3
"""PyTorch (CUDA) peer of scripts/gpu/streams.accl: the same operations on
the same sizes, timed the same way (wall clock around each operation and a
synchronize, median of REPS after one untimed run). Random data made on the
GPU; the copies from and to pinned and pageable host memory.

    python3 scripts/gpu/peer_torch.py [REPS]
"""
import statistics
import sys
import time

import torch

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 15
dev = torch.device("cuda")


def timed(f, k=reps):
    t = []
    for r in range(k + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        if r > 0:
            t.append(time.perf_counter() - t0)
    return statistics.median(t)


print("torch", torch.__version__, torch.cuda.get_device_name(0))
for n in (1 << 28, 1 << 31):
    gib = n * 4 / 2**30
    x = torch.rand(n, device=dev)
    y = torch.rand(n, device=dev)
    print(f"torch saxpy {gib:g} GiB: {12 * n / timed(lambda: y.add_(x, alpha=0.5)) / 1e9:.1f} GB/s")
    if n < 10**9:
        print(f"torch sum {gib:g} GiB: {4 * n / timed(lambda: x.sum()) / 1e9:.1f} GB/s")
        print(f"torch copy {gib:g} GiB: {8 * n / timed(lambda: y.copy_(x)) / 1e9:.1f} GB/s")
    del x, y
    torch.cuda.empty_cache()
for n, k in ((1 << 26, reps), (1 << 31, 5)):
    mib = n * 4 >> 20
    d = torch.empty(n, device=dev)
    for pinned in (True, False):
        h = torch.rand(n, pin_memory=pinned)
        what = "pinned" if pinned else "pageable"
        up = timed(lambda: d.copy_(h), k)
        down = timed(lambda: h.copy_(d), k)
        print(f"torch host to device {mib} MiB ({what}): {4 * n / up / 1e9:.1f} GB/s")
        print(f"torch device to host {mib} MiB ({what}): {4 * n / down / 1e9:.1f} GB/s")
        del h
    del d
    torch.cuda.empty_cache()
