#!/usr/bin/env python3
"""CUDA peer of `accl bench async`'s multi-device Mandelbrot: the same
image (side x side, 255 iterations in f64, one u8 per pixel), the same 16
blocks of rows, block b on its own stream of device b % ndev, each block
copied back to one pinned host image as soon as its kernel is done, and a
run ends when every device is done. Timed the same way: wall clock around
a run, after half a second of untimed runs, median of RUNS (fastest and
slowest beside it). Also the same blocks without the copies back.

The kernel is a jiterator (NVRTC) elementwise function over the block's
pixels. Its inputs are the column and row numbers as u8 pairs (high and
low byte), broadcast, so that its output is u8 like accl's image; the
elementwise launcher gives each thread 4 pixels.

    python3 scripts/gpu/mandel_torch.py [RUNS] [SIDE]
"""
import statistics
import sys
import time

import torch

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
side = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
BLOCKS = 16
rows = side // BLOCKS

code = f"""
template <typename T> T mandel(T pxh, T pxl, T pyh, T pyl) {{
    int px = (int)pxh * 256 + (int)pxl;
    int py = (int)pyh * 256 + (int)pyl;
    double x0 = -2.0 + (double)px * (3.0 / (double){side});
    double y0 = -1.5 + (double)py * (3.0 / (double){side});
    double x = 0.0, y = 0.0;
    int i = 0;
    while (x * x + y * y < 4.0 && i < 255) {{
        double xt = x * x - y * y + x0;
        y = 2.0 * x * y + y0;
        x = xt;
        i += 1;
    }}
    return (T)(255 * i / 255);
}}
"""
mandel = torch.cuda.jiterator._create_jit_fn(code)


def host_pixel(px, py):
    x0 = -2.0 + px * (3.0 / side)
    y0 = -1.5 + py * (3.0 / side)
    x = y = 0.0
    i = 0
    while x * x + y * y < 4.0 and i < 255:
        x, y = x * x - y * y + x0, 2.0 * x * y + y0
        i += 1
    return 255 * i // 255


def split(v, dev):
    v = torch.as_tensor(v, dtype=torch.int32)
    return (v // 256).to(torch.uint8).to(dev), (v % 256).to(torch.uint8).to(dev)


def measure(ndev, copy):
    devs = list(range(ndev))
    host = torch.zeros((side, side), dtype=torch.uint8, pin_memory=True)
    cols = {d: [t.view(1, side) for t in split(range(side), d)] for d in devs}
    blk = []
    for b in range(BLOCKS):
        d = devs[b % ndev]
        hi, lo = split(range(b * rows, (b + 1) * rows), d)
        with torch.cuda.device(d):
            s = torch.cuda.Stream(d)
        blk.append((d, s, hi.view(rows, 1), lo.view(rows, 1)))

    def once():
        for b, (d, s, hi, lo) in enumerate(blk):
            with torch.cuda.device(d), torch.cuda.stream(s):
                out = mandel(cols[d][0], cols[d][1], hi, lo)
                if copy:
                    host[b * rows:(b + 1) * rows].copy_(out, non_blocking=True)
        for d in devs:
            torch.cuda.synchronize(d)

    t_end = time.perf_counter() + 0.5
    while time.perf_counter() < t_end:
        once()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        once()
        t.append((time.perf_counter() - t0) * 1e3)
    if copy:
        for px, py in ((0, 0), (side // 2, side // 2), (side - 1, side // 4), (side // 4, 0)):
            want = host_pixel(px, py)
            got = int(host[py, px])
            if got != want:
                sys.exit(f"pixel ({px}, {py}): {got}, host reference {want}")
    return statistics.median(t), min(t), max(t)


n = torch.cuda.device_count()
print("torch", torch.__version__, torch.cuda.get_device_name(0), "x", n)
for copy in (True, False):
    what = "16 blocks + copy back" if copy else "16 blocks, no copy back"
    one = measure(1, copy)
    line = f"torch mandelbrot {side}x{side}, {what}: 1 device {one[0]:.3f} ms ({one[1]:.3f}-{one[2]:.3f})"
    if n > 1:
        two = measure(2, copy)
        line += f", 2 devices {two[0]:.3f} ms ({two[1]:.3f}-{two[2]:.3f}): {one[0] / two[0]:.2f}x"
    print(line)
