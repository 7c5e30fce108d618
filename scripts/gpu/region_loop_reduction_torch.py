#!/usr/bin/env python3
"""PyTorch (CUDA) peer of scripts/gpu/region_loop_reduction.accl: the sum
of the same f32 array already on the GPU, timed the same way (wall clock
around each sum and a synchronize, median of REPS).

    python3 scripts/gpu/region_loop_reduction_torch.py [N] [REPS]
"""
import statistics
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 26
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 21
a = (torch.arange(n, device="cuda", dtype=torch.int64) % 1000).to(torch.float32) * 0.001
t = []
s = None
for r in range(reps + 1):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    s = a.sum()
    torch.cuda.synchronize()
    if r > 0:
        t.append(time.perf_counter() - t0)
print(f"torch.sum: {statistics.median(t) * 1e3:.4f} ms  sum {s.item()}  (n = {n}, {torch.cuda.get_device_name()})")
