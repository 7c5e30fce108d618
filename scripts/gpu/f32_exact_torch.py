#!/usr/bin/env python3
"""PyTorch (CUDA) peer of scripts/gpu/f32_exact.accl: the same f32
divisions and roots on the same sizes, timed the same way (wall clock around
each operation and a synchronize, median of the last 10 of 12 runs). CUDA's
default f32 `/` and `sqrt` are correctly rounded. The chained forms are
jiterator (NVRTC) kernels of one element per thread.

    python3 scripts/gpu/f32_exact_torch.py
"""
import torch, time
N = 1 << 26
g = torch.Generator(device='cuda').manual_seed(1)
x = torch.rand(N, device='cuda', generator=g); y = torch.rand(N, device='cuda', generator=g); z = torch.empty_like(x)
def med(f, reps=12):
    ts = []
    for r in range(reps):
        torch.cuda.synchronize(); t0 = time.perf_counter(); f(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t0)
    ts = sorted(ts[2:]); return ts[len(ts)//2] * 1e3
d = y + 0.5
m1 = med(lambda: torch.div(x, d, out=z))
m0 = med(lambda: torch.mul(x, d, out=z))
print(f"torch f32 64M: z = x / d {m1:.3f} ms ({12*N/m1/1e6:.0f} GB/s counting the 3 arrays as accl does), x * d {m0:.3f} ms")
m3 = med(lambda: torch.sqrt(x + y, out=z))
print(f"torch f32 64M: z = sqrt(x + y) {m3:.3f} ms (two kernels: add, then sqrt)")
from torch.cuda import jiterator
cd = jiterator._create_jit_fn("template <typename T> T chain_div(T x, T d) { T v = x; for (int k = 0; k < 32; k++) { v = v / d + T(0.75); } return v; }")
cs = jiterator._create_jit_fn("template <typename T> T chain_sqrt(T x, T d) { T v = x; for (int k = 0; k < 32; k++) { v = sqrt(v + d); } return v; }")
m2 = med(lambda: cd(x, d)); m4 = med(lambda: cs(x, y))
print(f"torch jiterator f32 64M: 32 chained divisions {m2:.3f} ms ({32*N/m2/1e6:.0f} Gdiv/s), 32 chained roots {m4:.3f} ms ({32*N/m4/1e6:.0f} Gsqrt/s)")
