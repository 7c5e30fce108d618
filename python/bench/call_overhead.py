"""The cost of one Python call of an accl function on a 1M-element f32
array: `saxpy` called from Python against the same function called from
accl itself (the work), on the host backend and on Vulkan device 0; and
Numba's equivalent where Numba is installed. Prints figures, asserts
nothing.

    python python/bench/call_overhead.py [--n 1048576] [--runs 200]
"""

import argparse
import statistics
import time

import numpy as np

import accl

SAXPY = """
fn saxpy(a: f32, x: f32[], y: f32[]) {
    parallel loop for i in 0..len(x) { y[i] = a * x[i] + y[i]; }
}
fn nop(a: f32, x: f32[], y: f32[]) { }
fn saxpy_loop(a: f32, x: f32[], y: f32[]) {
    for i in 0..len(x) { y[i] = a * x[i] + y[i]; }
}
fn saxpy2(a: f32, x: f32[,], y: f32[,]) {
    parallel loop collapse(2) for i in 0..shape(x, 0) { for j in 0..shape(x, 1) { y[i, j] = a * x[i, j] + y[i, j]; } }
}
fn saxpy_present(a: f32, x: f32[], y: f32[]) {
    parallel loop present(x, y) for i in 0..len(x) { y[i] = a * x[i] + y[i]; }
}
"""


def median_us(f, runs):
    f()  # compile and warm
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def inside_us(e, call, runs, batch=10):
    """One call made by accl itself (no Python in between), in us: the
    median over batches of `batch` calls in one input."""
    e.run(f"{call};")
    loop = f"for r in 0..{batch} {{ {call}; }}"
    times = []
    for _ in range(max(1, runs // batch)):
        t = time.perf_counter()
        e.run(loop)
        times.append((time.perf_counter() - t) / batch)
    return statistics.median(times) * 1e6


def row(label, py, work):
    print(f"{label:<44} {py:>10.1f} {work:>10.1f} {py - work:>10.1f}")


def bench_engine(device, n, runs):
    e = accl.Engine(device=device)
    mod = e.compile(SAXPY)
    x = accl.zeros(n)
    x[:] = 1.0
    y = accl.zeros(n)
    e["x"], e["y"] = x, y
    tiny = accl.zeros(1)
    e["t"] = tiny
    name = e.backend if device == "host" else "vulkan " + e.devices()[0].split(": ", 1)[-1].split(" (")[0]
    nw = inside_us(e, "nop(2.0f32, x, y)", runs * 10)
    row(f"{name}: the call alone (an empty fn)", median_us(lambda: mod.nop(2.0, x, y), runs * 10), nw)
    work = inside_us(e, "saxpy(2.0f32, x, y)", runs)
    row(f"{name}: saxpy, accl arrays", median_us(lambda: mod.saxpy(2.0, x, y), runs), work)
    if e.backend == "host":
        lw = inside_us(e, "saxpy_loop(2.0f32, x, y)", runs)
        row(f"{name}: saxpy as a host loop", median_us(lambda: mod.saxpy_loop(2.0, x, y), runs), lw)
    tw = inside_us(e, "saxpy(2.0f32, t, t)", runs)
    row(f"{name}: saxpy, 1 element", median_us(lambda: mod.saxpy(2.0, tiny, tiny), runs), tw)
    xn = np.ones(n, dtype=np.float32)
    yn = np.zeros(n, dtype=np.float32)
    row(f"{name}: saxpy, NumPy's arrays (borrowed)", median_us(lambda: mod.saxpy(2.0, xn, yn), runs), work)
    # Fortran order is copied in and written back at each call.
    xf = np.asfortranarray(np.ones((n // 1024, 1024), dtype=np.float32))
    yf = np.asfortranarray(np.zeros((n // 1024, 1024), dtype=np.float32))
    e["x2"], e["y2"] = accl.zeros(xf.shape), accl.zeros(yf.shape)
    w2 = inside_us(e, "saxpy2(2.0f32, x2, y2)", runs)
    row(f"{name}: saxpy, Fortran order (copied)", median_us(lambda: mod.saxpy2(2.0, xf, yf), runs), w2)
    if e.backend != "host":
        e.run("enter data copyin(x, y);")
        work = inside_us(e, "saxpy_present(2.0f32, x, y)", runs)
        row(f"{name}: present(x, y) on the device", median_us(lambda: mod.saxpy_present(2.0, x, y), runs), work)
        e.run("exit data delete(x, y);")
        # The same with NumPy's own arrays, bound as the engine's x and y.
        e["x"], e["y"] = xn, yn
        e.run("enter data copyin(x, y);")
        row(f"{name}: present(x, y), NumPy's arrays", median_us(lambda: mod.saxpy_present(2.0, xn, yn), runs), work)
        e.run("exit data delete(x, y);")


def bench_numba(n, runs):
    try:
        import numba
    except ImportError:
        print("numba: not installed (pip install numba)")
        return

    @numba.njit(cache=False)
    def saxpy(a, x, y):
        for i in range(len(x)):
            y[i] = a * x[i] + y[i]

    @numba.njit(cache=False)
    def inside(a, x, y, runs):
        for _ in range(runs):
            saxpy(a, x, y)

    x = np.ones(n, dtype=np.float32)
    y = np.zeros(n, dtype=np.float32)
    a = np.float32(2.0)
    inside(a, x, y, 1)
    t = time.perf_counter()
    inside(a, x, y, runs)
    work = (time.perf_counter() - t) / runs * 1e6
    row(f"numba {numba.__version__} njit: saxpy", median_us(lambda: saxpy(a, x, y), runs), work)
    tiny = np.zeros(1, dtype=np.float32)
    t = time.perf_counter()
    inside(a, tiny, tiny, runs)
    tw = (time.perf_counter() - t) / runs * 1e6
    row(f"numba {numba.__version__} njit: saxpy, 1 element", median_us(lambda: saxpy(a, tiny, tiny), runs), tw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    print(f"one call of saxpy on {args.n} f32 elements, median of {args.runs} (us)")
    print(f"{'':<44} {'python':>10} {'work':>10} {'overhead':>10}")
    bench_engine("host", args.n, args.runs)
    if accl.devices():
        bench_engine(0, args.n, args.runs)
    bench_numba(args.n, args.runs)
    try:
        import cupy  # noqa: F401

        print("cupy: installed, not measured here (needs a CUDA GPU)")
    except ImportError:
        print("cupy: not installed")


if __name__ == "__main__":
    main()
