#!/usr/bin/env python3
"""Taichi (Vulkan backend) peer of scripts/cpu/peers.accl: the same kernels
on the same sizes, timed the same way (wall clock around each kernel and a
sync, median of REPS after warm-up runs). Meant for lavapipe on a CPU-only
machine (VK_ICD_FILENAMES pointing at lavapipe's ICD), with Taichi 1.7.4:

    pip install taichi==1.7.4
    python3 scripts/cpu/peer_taichi.py [REPS]
"""
import statistics
import sys
import time

import taichi as ti

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 21
ti.init(arch=ti.vulkan, offline_cache=True, log_level=ti.WARN)


def timed(f):
    for _ in range(3):
        f()
    ti.sync()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ti.sync()
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3


N = 1 << 20
x = ti.field(ti.f32, N)
y = ti.field(ti.f32, N)


@ti.kernel
def fill():
    for i in range(N):
        x[i] = i * 0.5
        y[i] = 1.0


@ti.kernel
def saxpy(a: ti.f32):
    for i in range(N):
        y[i] = a * x[i] + y[i]


fill()
print(f"taichi saxpy 1M: {timed(lambda: saxpy(0.5)):.3f} ms")

M = 1024
A = ti.field(ti.f32, (M, M))
B = ti.field(ti.f32, (M, M))


@ti.kernel
def jacobi():
    for j, i in ti.ndrange((1, M - 1), (1, M - 1)):
        B[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])


print(f"taichi jacobi 1024^2 sweep: {timed(jacobi):.3f} ms")

W = 1024
img = ti.field(ti.i32, (W, W))


@ti.kernel
def mandel():
    for py, px in img:
        cx = -2.0 + 3.0 * px / W
        cy = -1.5 + 3.0 * py / W
        zx = 0.0
        zy = 0.0
        k = 0
        while k < 255 and zx * zx + zy * zy <= 4.0:
            t = zx * zx - zy * zy + cx
            zy = 2.0 * zx * zy + cy
            zx = t
            k += 1
        img[py, px] = k


print(f"taichi mandelbrot 1024^2: {timed(mandel):.3f} ms")
