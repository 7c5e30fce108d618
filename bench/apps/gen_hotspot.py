#!/usr/bin/env python3
"""Input files for hotspot.accl: ROWS x COLS values, one a line, as
Rodinia's data/hotspot/temp_N and power_N files hold them (temperatures in
kelvin around 330, power per cell below 0.001).

    python3 bench/apps/gen_hotspot.py ROWS COLS OUTDIR

writes OUTDIR/temp_ROWSxCOLS and OUTDIR/power_ROWSxCOLS. The same sizes give
the same files byte for byte (a fixed seed and Python's own Mersenne
Twister, the same on every platform)."""

import os
import random
import sys


def write(path, n, rng, lo, span):
    # Written in blocks: 4M lines are ~45 MB, and one join per block keeps
    # the generator at a few seconds for the GPU size.
    with open(path, "w") as f:
        done = 0
        while done < n:
            k = min(65536, n - done)
            f.write("".join("%.9g\n" % (lo + span * rng.random()) for _ in range(k)))
            done += k


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    rows, cols, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    if rows <= 0 or cols <= 0:
        sys.exit("ROWS and COLS must be positive")
    os.makedirs(out, exist_ok=True)
    n = rows * cols
    rng = random.Random(1729 + n)
    write(os.path.join(out, "temp_%dx%d" % (rows, cols)), n, rng, 323.0, 20.0)
    write(os.path.join(out, "power_%dx%d" % (rows, cols)), n, rng, 0.0, 0.001)


if __name__ == "__main__":
    main()
