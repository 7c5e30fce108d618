#!/usr/bin/env python3
"""Device time of each kernel of an `accl run --trace` file, by source line,
in phases of K launches (median per phase; -v: every launch):
python3 trace_phases.py T.json [K] [-v]"""
import json, statistics, sys
from collections import defaultdict
ev = json.load(open(sys.argv[1]))["traceEvents"]
k = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-v" else 10
by = defaultdict(list)
for e in sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"]):
    by[e["name"]].append(e["dur"])
for name, d in by.items():
    if len(d) < k:
        continue
    ph = [statistics.median(d[i:i + k]) for i in range(0, len(d) - k + 1, k)]
    print(f"  {name}: device us per phase " + ", ".join(f"{p:.1f}" for p in ph))
    if "-v" in sys.argv:
        for i in range(0, len(d) - k + 1, k):
            print("    " + " ".join(f"{x:.0f}" for x in d[i:i + k]))
