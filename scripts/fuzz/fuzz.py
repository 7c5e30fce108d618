#!/usr/bin/env python3
"""Differential runs of generated accl programs (see README.md).

    fuzz.py gen FAMILY FIRST COUNT DIR      write programs FIRST..FIRST+COUNT to DIR
    fuzz.py diff DIR [ACCL]                 each program on the host and on the device; report differences
    fuzz.py jit DIR [ACCL]                  each program on the host with the JIT and with ACCL_JIT=0
    fuzz.py chunks DIR PER OUT              wrap programs in functions, PER to a script (one process runs many)
    fuzz.py split RUN.txt OUTDIR            split `### chunkNNN`-separated outputs into OUTDIR/chunkNNN.txt
    fuzz.py compare HOSTDIR DEVDIR          compare per-program outputs of chunk runs
"""
import glob, os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from families import FAMILIES

ACCL = "target/release/accl"
NUM = re.compile(r'-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|inf|NaN)')


def close(a, b):
    """Same text, numbers equal, floats (written with `.`, `e` or NaN) within 1e-4 relative."""
    if NUM.split(a) != NUM.split(b):
        return False
    na, nb = NUM.findall(a), NUM.findall(b)
    if len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        is_float = any(c in x + y for c in '.eN') or '-0' in (x, y)
        if not is_float and abs(fx) < 1e15:
            return False
        if abs(fx - fy) > 1e-4 * max(abs(fx), abs(fy), 1e-4):
            return False
    return True


def codes(err):
    return re.findall(r'^\s*(accl::[\w:]+)', err, re.M)


def run(args, env=None, timeout=60):
    e = dict(os.environ, **(env or {}))
    try:
        p = subprocess.run(args, capture_output=True, env=e, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "", "timeout"


def diff(d, accl):
    """Host reference against the Vulkan device; differences the docs explain
    (a construct the device refuses, a race the device run reports) are counted apart."""
    n = same = expected = 0
    for f in sorted(glob.glob(d + "/*.accl")):
        n += 1
        hc, ho, he = run([accl, "run", "--host", "--max-memory", "64M", f])
        dc, do, de = run([accl, "run", "--max-memory", "64M", f])
        if dc == 1 and hc != 1 and codes(de)[:1] and (codes(de)[0] == "accl::compile::unsupported" or codes(de)[0].startswith("accl::race::")):
            expected += 1
            continue
        why = None
        if hc != dc:
            why = f"exit status: host {hc}, device {dc}"
        elif "validation:" in de or "invalid_spirv" in de or "panicked" in de:
            why = "validation message, invalid SPIR-V or a panic"
        elif ho != do and not close(ho, do):
            why = "output differs"
        elif hc != 0 and codes(he) != codes(de):
            why = f"errors {codes(he)} against {codes(de)}"
        if why:
            print(f"{f}: {why}\n  host:   {ho[-400:]!r} {he[-300:]!r}\n  device: {do[-400:]!r} {de[-300:]!r}")
        else:
            same += 1
    print(f"{n} programs: {same} the same, {expected} refused or reported as documented, {n - same - expected} differ")


def jit(d, accl):
    n = bad = 0
    for f in sorted(glob.glob(d + "/*.accl")):
        n += 1
        a = run([accl, "run", "--host", f], {"ACCL_JIT": "0"})
        b = run([accl, "run", "--host", f])
        if a != b:
            bad += 1
            print(f"{f}: interpreter {a!r}\n  JIT {b!r}")
    print(f"{n} programs, {bad} differ between the JIT and the interpreter")


def chunks(d, per, out):
    files = sorted(glob.glob(d + "/*.accl"))
    os.makedirs(out, exist_ok=True)
    for c in range(0, len(files), per):
        parts, calls = [], []
        for f in files[c:c + per]:
            name = os.path.basename(f)[:-5]
            text = open(f).read()
            # A leading routine (`f` of the kernel family, `row` of the
            # levels family) gets a name of its own per program.
            m = re.match(r"routine \w+ fn (\w+)\(", text)
            fname = m.group(1) if m else "f"
            lines = re.sub(rf"\b{fname}\(", f"{fname}_{name}(", text).split("\n")
            i = 0
            if lines[0].startswith("routine "):
                while True:
                    parts.append(lines[i])
                    i += 1
                    if lines[i - 1] == "}":
                        break
            parts.append(f"fn p_{name}() {{")
            parts += ["    " + l for l in lines[i:] if l]
            parts.append("}")
            calls.append(f'println("@@ {name}"); p_{name}();')
        open(f"{out}/chunk{c // per:03d}.accl", "w").write("\n".join(parts + calls) + "\n")


def by_program(text):
    out, cur = {}, None
    for line in text.split("\n"):
        m = re.match(r"^@@ (\S+)$", line)
        if m:
            cur = m.group(1)
            out[cur] = []
        elif cur:
            out[cur].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def compare(hdir, ddir):
    n = bad = 0
    for hf in sorted(glob.glob(hdir + "/chunk*.txt")):
        df = os.path.join(ddir, os.path.basename(hf))
        if not os.path.exists(df):
            print("missing", df)
            continue
        h, d = by_program(open(hf).read()), by_program(open(df, errors="replace").read())
        for k in h:
            n += 1
            if k not in d or (h[k] != d[k] and not close(h[k], d[k])):
                bad += 1
                print(f"{k}:\n  host:   {h[k][:300]!r}\n  device: {d.get(k, '(missing)')[:300]!r}")
    print(f"{n} programs, {bad} differ")


def main(a):
    if len(a) >= 5 and a[0] == "gen":
        fam, first, count, d = FAMILIES[a[1]], int(a[2]), int(a[3]), a[4]
        os.makedirs(d, exist_ok=True)
        for s in range(first, first + count):
            open(f"{d}/g{s:05d}.accl", "w").write(fam(s))
    elif len(a) >= 2 and a[0] in ("diff", "jit"):
        (diff if a[0] == "diff" else jit)(a[1], a[2] if len(a) > 2 else ACCL)
    elif len(a) == 4 and a[0] == "chunks":
        chunks(a[1], int(a[2]), a[3])
    elif len(a) == 3 and a[0] == "split":
        os.makedirs(a[2], exist_ok=True)
        parts = re.split(r"^### (chunk\d+)$", open(a[1], errors="replace").read(), flags=re.M)
        for i in range(1, len(parts), 2):
            open(f"{a[2]}/{parts[i]}.txt", "w").write(parts[i + 1])
    elif len(a) == 3 and a[0] == "compare":
        compare(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
