#!/usr/bin/env python3
"""Where a run's process time goes outside `--time`'s wall: spawn
`accl run --time FILE ARGS...`, stamp each stderr line as it arrives, and
print the time from the spawn to the report's last line ("outside the
wall: ...", printed after the engine is dropped) and from there to the
process's exit.

    exit_cost.py ACCL FILE [ARGS...]
"""
import subprocess, sys, time

accl, script, *args = sys.argv[1:]
t0 = time.monotonic()
p = subprocess.Popen([accl, "run", "--time", script, *args],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
last = None
for line in p.stderr:
    if line.startswith("outside the wall"):
        last = (time.monotonic(), line.strip())
p.wait()
t_end = time.monotonic()
if last:
    print(f"{script}: report done at {last[0] - t0:.3f} s, exit {t_end - last[0]:.3f} s later "
          f"(process {t_end - t0:.3f} s); {last[1]}")
else:
    print(f"{script}: no report; process {t_end - t0:.3f} s, rc {p.returncode}")
