"""Random typed expressions for generated accl programs (the building block of
every family in families.py)."""
import random

INTS = ["i32", "i64", "u32", "u8"]
FLTS = ["f32", "f64"]
ALL = INTS + FLTS
def lit(T, r):
    if T in INTS:
        v = r.choice([0, 1, 2, 3, 5, 7, 13, 100, 255, 1000, 65535, 2147483647, 4294967295, 127, 128, 31, 32, 63, 64])
        lim = {"i32": 2**31-1, "i64": 2**63-1, "u32": 2**32-1, "u8": 255}[T]
        v = v if v <= lim else 7
        return f"{v}{T}"
    return r.choice(["0.0", "1.0", "0.5", "2.5", "-3.75", "1e10", "1e-7", "3.0e38", "1e300", "100.25", "0.1"]) .replace("1e300", "1e300" if T == "f64" else "1e30") + T
class G:
    def __init__(s, r, vars):
        s.r = r; s.vars = vars
    def e(s, T, d=0):
        r = s.r
        if d > 3 or r.random() < 0.25:
            c = [v for v, t in s.vars if t == T]
            if c and r.random() < 0.75: return r.choice(c)
            return lit(T, r)
        k = r.randrange(12)
        if k <= 2:
            op = r.choice(["+", "-", "*"])
            return f"({s.e(T, d+1)} {op} {s.e(T, d+1)})"
        if k == 3:
            if T in INTS:
                return f"({s.e(T, d+1)} {r.choice(['/', '%'])} (({s.e(T, d+1)} | 1{T}) & 127{T}))"
            return f"({s.e(T, d+1)} {r.choice(['/', '%'])} {s.e(T, d+1)})"
        if k == 4:
            S = r.choice(ALL)
            return f"({s.e(S, d+1)} as {T})"
        if k == 5 and T in INTS:
            op = r.choice(["&", "|", "^", "<<", ">>"])
            if op in ("<<", ">>"):
                S = r.choice(INTS)
                return f"({s.e(T, d+1)} {op} {s.e(S, d+1)})"
            return f"({s.e(T, d+1)} {op} {s.e(T, d+1)})"
        if k == 6:
            f = r.choice(["abs", "min", "max", "clamp"])
            if f == "abs": return f"abs({s.e(T, d+1)})"
            if f == "clamp": return f"clamp({s.e(T, d+1)}, {lit(T, r)}, {lit(T, r)})" if r.random() < 0.5 else f"clamp({s.e(T, d+1)}, {s.e(T, d+1)}, {s.e(T, d+1)})"
            return f"{f}({s.e(T, d+1)}, {s.e(T, d+1)})"
        if k == 7 and T in FLTS:
            f = r.choice(["sqrt", "floor", "ceil", "round", "trunc", "exp", "log", "sin", "cos", "tanh", "atan", "exp2", "log2"] if T == "f64" else ["sqrt", "floor", "ceil", "round", "trunc"])
            return f"{f}({s.e(T, d+1)})"
        if k == 8 and T in FLTS:
            f = r.choice(["pow", "atan2", "fma"] if T == "f64" else ["fma"])
            if f == "fma": return f"fma({s.e(T, d+1)}, {s.e(T, d+1)}, {s.e(T, d+1)})"
            return f"{f}({s.e(T, d+1)}, {s.e(T, d+1)})"
        if k == 9:
            if T == "u8" or T == "u32": return f"(!{s.e(T, d+1)})" if r.random() < 0.5 else f"(-{s.e(T, d+1)})"
            if T in INTS: return f"(-{s.e(T, d+1)})" if r.random() < 0.5 else f"(!{s.e(T, d+1)})"
            return f"(-{s.e(T, d+1)})"
        if k == 10:
            return f"({s.b(d+1)} as {T})" if T in INTS else f"(({s.b(d+1)} as i32) as {T})"
        return s.e(T, d+1)
    def b(s, d=0):
        r = s.r
        if r.random() < 0.3 or d > 3:
            T = r.choice(["i32", "u32", "u8", "f32", "f64"])
            return f"({s.e(T, d+1)} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {s.e(T, d+1)})"
        k = r.randrange(3)
        if k == 0: return f"({s.b(d+1)} && {s.b(d+1)})"
        if k == 1: return f"({s.b(d+1)} || {s.b(d+1)})"
        return f"(!{s.b(d+1)})"


def init(nm, T, dims, r):
    """A host loop filling array `nm` (rank 1 or 2) with small varied values."""
    if len(dims) == 1:
        return f"for i in 0..{dims[0]} {{ {nm}[i] = ((i * {r.choice([3,7,13])} + {r.randrange(0,50)}) % {r.choice([11,97,256])}) as {T}{' * 0.37' if T in FLTS else ''}; }}"
    return f"for i in 0..{dims[0]} {{ for j in 0..{dims[1]} {{ {nm}[i, j] = ((i * {r.choice([3,7,13])} + j * {r.choice([1,5,11])} + {r.randrange(0,50)}) % {r.choice([11,97,256])}) as {T}{' * 0.37' if T in FLTS else ''}; }} }}"


def small(T, e):
    """`e` made small and exact to accumulate: integers masked, floats floored
    and clamped to multiples of 0.25 (sums of those are exact in any order)."""
    if T in INTS:
        return f"(({e}) & 63{T})"
    return f"(clamp(floor({e}), -1000.0{T}, 1000.0{T}) * 0.25{T})"
