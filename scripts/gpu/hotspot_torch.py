#!/usr/bin/env python3
"""PyTorch peer of bench/apps/hotspot.accl on the same inputs: Rodinia's
hotspot update (the corner and edge cases are a replicate-padded 5-point
stencil: the missing neighbour's difference is 0), f64, on the GPU, eager.

    python3 scripts/gpu/hotspot_torch.py ROWS COLS STEPS TEMP_FILE POWER_FILE

Prints the time to read both files with NumPy (np.loadtxt) and pandas
(read_csv, when installed), the solve time (device synchronised) and the
temperature sum, to compare with the accl port's line."""
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

rows, cols, steps = (int(a) for a in sys.argv[1:4])
tfile, pfile = sys.argv[4:6]

t0 = time.perf_counter()
temp = np.loadtxt(tfile, dtype=np.float64)[: rows * cols]
power = np.loadtxt(pfile, dtype=np.float64)[: rows * cols]
t_np = time.perf_counter() - t0
t_pd = None
try:
    import pandas as pd

    t0 = time.perf_counter()
    pd.read_csv(tfile, header=None, dtype=np.float64).to_numpy()
    pd.read_csv(pfile, header=None, dtype=np.float64).to_numpy()
    t_pd = time.perf_counter() - t0
except ImportError:
    pass

chip_height = chip_width = 0.016
t_chip = 0.0005
amb = 80.0
grid_height = chip_height / rows
grid_width = chip_width / cols
cap = 0.5 * 1.75e6 * t_chip * grid_width * grid_height
rx = grid_width / (2.0 * 100.0 * t_chip * grid_height)
ry = grid_height / (2.0 * 100.0 * t_chip * grid_width)
rz = t_chip / (100.0 * grid_height * grid_width)
max_slope = 3.0e6 / (0.5 * t_chip * 1.75e6)
step = 0.001 / max_slope

dev = "cuda"
t = torch.tensor(temp, device=dev).reshape(rows, cols)
p = torch.tensor(power, device=dev).reshape(rows, cols)
k = step / cap


def one(t):
    q = F.pad(t[None, None], (1, 1, 1, 1), mode="replicate")[0, 0]
    up, down = q[:-2, 1:-1], q[2:, 1:-1]
    left, right = q[1:-1, :-2], q[1:-1, 2:]
    return t + k * (p + (up + down - 2.0 * t) / ry + (left + right - 2.0 * t) / rx + (amb - t) / rz)


for _ in range(3):
    one(t)
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    t = one(t)
torch.cuda.synchronize()
t_solve = time.perf_counter() - t0
pd_s = f"{t_pd:.3f} s" if t_pd is not None else "not installed"
print(
    f"torch hotspot {rows} x {cols}, {steps} steps: temperature sum {t.sum().item()}, "
    f"max {t.max().item()}; solve {t_solve:.3f} s; read np.loadtxt {t_np:.3f} s, pandas {pd_s}"
)
