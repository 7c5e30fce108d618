"""Families of generated accl programs. Each is `gen(seed) -> source`: a
program that type-checks, runs on both backends without an error, and
prints what it computed, so that two runs can be compared line by line.

- `kernel`: one `parallel loop` of random expressions over every scalar
  type, with clauses and reductions;
- `structure`: sequential loops that write and read arrays inside kernels,
  loop levels, reductions at levels, atomics (and `atomic capture`),
  private arrays, routines, collapse, `serial`/`kernels`, `async`, partial
  updates in a data region;
- `lifetimes`: enter/exit data on async queues, collapse and tile, `kernels
  loop`, float atomics, worker levels, multi-kernel data regions;
- `host`: host code only (a function with early returns, loops with
  `continue`/`break`, every operator), for the JIT against the interpreter.
"""
import random
from exprs import G, lit, INTS, FLTS, ALL, init, small


def kernel(seed):
    r = random.Random(seed)
    n = r.choice([1, 7, 16, 33, 64, 100])
    L = [f"let n = {n};"]
    arrs = []
    for j in range(r.randrange(1, 4)):
        T = r.choice(ALL)
        nm = f"a{j}"
        arrs.append((nm, T))
        L.append(f"let {nm} = zeros({T}, n);")
        L.append(f"for i in 0..n {{ {nm}[i] = ((i * {r.choice([3,7,-5,13,1000003])} + {r.randrange(-50,50)}) % {r.choice([11,256,100000,2147483647])}) as {T}{' * 0.37' if T in FLTS else ''}; }}")
    scal = []
    for j in range(r.randrange(0, 3)):
        T = r.choice(ALL); nm = f"s{j}"
        L.append(f"let {nm}: {T} = {lit(T, r)};"); scal.append((nm, T))
    outs = []
    for j in range(r.randrange(1, 3)):
        T = r.choice(ALL); nm = f"o{j}"
        outs.append((nm, T)); L.append(f"let {nm} = zeros({T}, n);")
    vars = [("i", "i32"), ("(i as i64)", "i64"), ("(i as u32)", "u32"), ("(i as f32)", "f32"), ("(i as f64)", "f64")]
    vars += [(f"{nm}[i]", T) for nm, T in arrs] + scal
    # reduction?
    red = None
    if r.random() < 0.35:
        T = r.choice(ALL)
        ops = ["+", "*", "max", "min"] + (["&", "|", "^"] if T in INTS else [])
        op = r.choice(ops)
        red = (op, T)
        init = {"+": "0", "*": "1", "max": "0", "min": "0", "&": "0", "|": "0", "^": "0"}[op]
        L.append(f"let red: {T} = {init}{T};")
    clauses = r.choice(["", "", " gang", " gang vector", " vector", " seq", " independent", " vector_length(32)", " num_gangs(3)", " async(1)"])
    if red: clauses += f" reduction({red[0]}: red)"
    g = G(r, vars)
    body = []
    locs = []
    for j in range(r.randrange(0, 4)):
        T = r.choice(ALL); nm = f"t{j}"
        body.append(f"let {nm}: {T} = {g.e(T)};"); g.vars.append((nm, T)); locs.append((nm, T))
    if locs and r.random() < 0.5:
        nm, T = r.choice(locs)
        body.append(f"if {g.b()} {{ {nm} = {g.e(T)}; }} else {{ {nm} += {g.e(T) if T not in INTS else lit(T, r)}; }}")
    if locs and r.random() < 0.4:
        nm, T = r.choice(locs)
        body.append(f"for k in 0..{r.randrange(0, 5)} {{ {nm} = {g.e(T, 2)}; }}")
    for nm, T in outs:
        body.append(f"{nm}[i] = {g.e(T)};")
    if red:
        op, T = red
        e = g.e(T)
        if op in ("max", "min"): body.append(f"red = {op}(red, {e});")
        elif op == "*": body.append(f"red *= ({e} % 3{T}) + 1{T};" if T in INTS else f"red *= 1.0{T} + (({e}) % 0.01{T});")
        else: body.append(f"red {op}= {e};")
    L.append(f"parallel loop{clauses} for i in 0..n {{")
    L += ["    " + b for b in body]
    L.append("}")
    if "async" in clauses: L.append("wait(1);")
    for nm, T in outs: L.append(f"println({nm});")
    if red: L.append("println(red);")
    return "\n".join(L) + "\n"


def structure(seed):
    r = random.Random(seed)
    n = r.choice([1, 5, 16, 33, 64]); m = r.choice([1, 3, 8, 17, 40])
    L = [f"let n = {n}; let m = {m};"]
    Ta = r.choice(ALL); Tb = r.choice(ALL); To = r.choice(ALL); Tc = r.choice(ALL)
    L.append(f"let a = zeros({Ta}, n, m);"); L.append(init("a", Ta, ["n", "m"], r))
    L.append(f"let b = zeros({Tb}, n);"); L.append(init("b", Tb, ["n"], r))
    L.append(f"let o = zeros({To}, n);"); L.append(f"let c = zeros({Tc}, n, m);")
    prints = ["o", "c"]
    vars = [("i", "i32"), ("j", "i32"), ("(i as f64)", "f64"), ("(j as f32)", "f32"), ("a[i, j]", Ta), ("b[i]", Tb)]
    g = G(r, vars)
    def e(T, d=1): return g.e(T, d)
    kind = r.randrange(15)
    pre = []
    if kind == 0:
        # two sequential loops: write c then accumulate into o (the NVIDIA stale-load shape)
        cl = r.choice(["", " gang", " gang vector", " independent", " vector_length(32)", " num_gangs(2)"])
        L.append(f"parallel loop{cl} for i in 0..n {{")
        L.append(f"    for j in 0..m {{ c[i, j] = {e(Tc)}; }}")
        L.append(f"    for j in 0..m {{ o[i] += {small(To, f'c[i, j] as {To}')}; }}")
        if r.random() < 0.5: L.append(f"    for j in 0..m {{ c[i, j] = c[i, j] + {small(Tc, e(Tc))}; }}")
        L.append("}")
    elif kind == 1:
        L.append("parallel loop collapse(2)" + r.choice(["", " gang", " vector", " independent"]) + " for i in 0..n {")
        L.append(f"    for j in 0..m {{ c[i, j] = {e(Tc)}; }}")
        L.append("}")
        L.append(f"parallel loop for i in 0..n {{ let s: {To} = 0{'.0' if To in FLTS else ''}{To}; for j in 0..m {{ s += {small(To, f'c[i, j] as {To}')}; }} o[i] = s; }}")
    elif kind == 2:
        lev = r.choice(["vector", "worker", "worker vector"])
        red = To if To != "u8" else "u32"
        L.append(f"let s0: {red} = 0{red};")
        L.append(f"parallel num_gangs({r.choice([1,2,4])}) vector_length({r.choice([1,8,32,64])}) {{")
        L.append("    loop gang for i in 0..n {")
        L.append(f"        loop {lev} for j in 0..m {{ c[i, j] = {e(Tc)}; }}")
        L.append(f"        let s: {red} = 0{red};")
        L.append(f"        loop {lev} reduction(+: s) for j in 0..m {{ s += {small(red, f'c[i, j] as {red}')}; }}")
        L.append(f"        o[i] = s as {To};")
        L.append("    }")
        L.append("}")
    elif kind == 3:
        It = r.choice(["i32", "u32", "i64"])
        k = r.choice([1, 3, 7, 16])
        L.append(f"let h = zeros({It}, {k});"); prints.append("h")
        op = r.choice(["+=", "+=", "-=", "&=", "|=", "^=", "max", "min"])
        L.append(f"parallel loop for i in 0..n {{ for j in 0..m {{")
        v = small(It, e(It))
        if op in ("max", "min"): L.append(f"    atomic h[(i * m + j) % {k}] = {op}(h[(i * m + j) % {k}], {v});")
        else: L.append(f"    atomic h[(i * m + j) % {k}] {op} {v};")
        L.append("} }")
    elif kind == 4:
        L.append(f"let t = zeros({Tc}, m);")
        L.append(f"parallel loop private(t) for i in 0..n {{")
        L.append(f"    for j in 0..m {{ t[j] = {e(Tc)}; }}")
        L.append(f"    let s: {To} = 0{To};")
        L.append(f"    for j in 0..m {{ s += {small(To, f't[(j * 3) % m] as {To}')}; }}")
        L.append(f"    o[i] = s;")
        L.append("}")
    elif kind == 5:
        pre.append(f"routine seq fn f(a: {Ta}[,], c: {Tc}[,], i: i32, m: i32) -> {To} {{")
        gvars = [("i", "i32"), ("j", "i32"), ("a[i, j]", Ta)]
        gg = G(r, gvars)
        pre.append(f"    let s: {To} = 0{To};")
        pre.append(f"    for j in 0..m {{ c[i, j] = {gg.e(Tc, 1)}; s += {small(To, f'c[i, j] as {To}')}; }}")
        pre.append("    return s;")
        pre.append("}")
        L.append(f"parallel loop{r.choice(['', ' gang', ' vector'])} for i in 0..n {{ o[i] = f(a, c, i, m); }}")
    elif kind == 6:
        L.append("parallel loop for i in 0..n {")
        L.append(f"    let j = 0; let s: {To} = 0{To};")
        L.append(f"    while j < m {{ if {g.b(2)} {{ j += 1; continue; }} c[i, j] = {e(Tc)}; s += {small(To, f'c[i, j] as {To}')}; if j > {r.randrange(0, 40)} {{ break; }} j += 1; }}")
        L.append("    o[i] = s;")
        L.append("}")
    elif kind == 7:
        con = r.choice(["serial", "kernels"])
        L.append(f"{con} {{")
        L.append(f"    for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append(f"    for i in 0..n {{ for j in 0..m {{ o[i] += {small(To, f'c[i, j] as {To}')}; }} }}")
        L.append("}")
    elif kind == 8:
        L.append(f"parallel loop async(1) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append(f"parallel loop async(1) for i in 0..n {{ for j in 0..m {{ o[i] += {small(To, f'c[i, j] as {To}')}; }} }}")
        L.append("wait(1);")
    elif kind == 10:
        L.append("parallel loop gang for i in 0..n {")
        L.append("    loop worker for j in 0..m {")
        L.append(f"        c[i, j] = {e(Tc)};")
        L.append("    }")
        L.append(f"    loop vector for j in 0..m {{ c[i, j] = c[i, j] + {small(Tc, 'b[i] as ' + Tc)}; }}")
        L.append("}")
    elif kind == 11:
        It = r.choice(["i32", "u32", "i64", "u8"])
        op = r.choice(["+", "^", "|", "&", "max", "min"])
        L.append(f"let s: {It} = {'255' if op == '&' else '0'}{It};")
        L.append(f"parallel loop reduction({op}: s) for i in 0..n {{")
        L.append(f"    for j in 0..m {{ c[i, j] = {e(Tc)}; }}")
        v = small(It, f"c[i, j] as {It}")
        upd = f"s = {op}(s, {v});" if op in ("max", "min") else f"s {op}= {v};"
        L.append(f"    for j in 0..m {{ {upd} }}")
        L.append("}")
        L.append("println(s);")
    elif kind == 12:
        It = r.choice(["i32", "u32", "i64"])
        k = r.choice([1, 2, 5])
        L.append(f"let h = zeros({It}, {k}); let v = zeros({It}, n, m);")
        L.append("parallel loop for i in 0..n { for j in 0..m {")
        L.append(f"    let old: {It} = 0{It};")
        L.append(f"    atomic capture {{ old = h[(i + j) % {k}]; h[(i + j) % {k}] += 1{It}; }}")
        L.append("    v[i, j] = old;")
        L.append("} }")
        L.append("println(h);")
        L.append("let seen = zeros(i32, n * m + 1); let okc = true;")
        L.append(f"for q in 0..{k} {{ for x in 0..n * m + 1 {{ seen[x] = 0; }} for i in 0..n {{ for j in 0..m {{ if (i + j) % {k} == q {{ let w = v[i, j] as i32; if w < 0 || w > n * m {{ okc = false; }} else {{ seen[w] += 1; }} }} }} }} let cnt = h[q] as i32; for x in 0..cnt {{ if seen[x] != 1 {{ okc = false; }} }} }}")
        L.append("println(okc);")
    elif kind == 13:
        L.append("data copyin(a, b) copy(c) {")
        L.append(f"    parallel loop present(a, c) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append("    update self(c[0:1]);")
        L.append(f"    for j in 0..m {{ c[0, j] = c[0, j] + {small(Tc, 'j as ' + Tc)}; }}")
        L.append("    update device(c[0:1]);")
        L.append(f"    parallel loop present(c) for i in 0..n {{ for j in 1..m {{ c[i, j] = c[i, j] - c[i, j - 1]; }} }}")
        L.append("}")
    elif kind == 14:
        L.append(f"parallel loop collapse(2) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append(f"let c2 = zeros({Tc}, n, m);")
        L.append(f"parallel loop collapse(2) for i in 0..n {{ for j in 0..m {{ c2[i, j] = c[(i + 1) % n, j] + c[i, (j + m - 1) % m]; }} }}")
        L.append("println(c2);")
    else:
        L.append(f"parallel loop gang for i in 0..n {{")
        L.append(f"    loop vector for j in 0..m {{ c[i, j] = {e(Tc)}; }}")
        L.append(f"    loop seq for j in 1..m {{ c[i, j] = c[i, j] + c[i, j - 1]; }}")
        L.append(f"    o[i] = c[i, m - 1] as {To};")
        L.append("}")
    for p in prints: L.append(f"println({p});")
    return "\n".join(pre + L) + "\n"


def lifetimes(seed):
    r = random.Random(seed)
    n = r.choice([1, 4, 16, 31, 64]); m = r.choice([1, 2, 8, 17, 33])
    Ta, Tc = r.choice(ALL), r.choice(ALL)
    L = [f"let n = {n}; let m = {m};", f"let a = zeros({Ta}, n, m);", init("a", Ta, ["n", "m"], r), f"let c = zeros({Tc}, n, m);"]
    vars = [("i", "i32"), ("j", "i32"), ("(i as f64)", "f64"), ("(j as f32)", "f32"), ("a[i, j]", Ta)]
    g = G(r, vars)
    e = lambda T: g.e(T, 1)
    prints = ["c"]
    k = r.randrange(10)
    if k == 0:
        q = r.choice([1, 2])
        L.append(f"enter data copyin(a) create(c) async({q});")
        L.append(f"parallel loop collapse(2) present(a, c) async({q}) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append(f"parallel loop present(c) async({3 - q}) wait({q}) for i in 0..n {{ for j in 1..m {{ c[i, j] = c[i, j] + c[i, j - 1]; }} }}")
        L.append(f"exit data copyout(c) delete(a) async({3 - q});")
        L.append(f"wait({3 - q});")
    elif k == 1:
        It = r.choice(["i32", "u32", "i64"]); op = r.choice(["+", "max", "min", "^"])
        L.append(f"let s: {It} = 0{It};")
        L.append(f"parallel loop collapse(2) reduction({op}: s) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; let v = {small(It, f'c[i, j] as {It}')}; " + (f"s = {op}(s, v);" if op in ('max', 'min') else f"s {op}= v;") + " } }")
        L.append("println(s);")
    elif k == 2:
        L.append(f"parallel loop tile({r.choice([2, 4, 8])}, {r.choice([2, 4, 8])}) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
    elif k == 3:
        L.append(f"kernels loop for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append(f"kernels {{ for i in 0..n {{ c[i, 0] = c[i, 0] + {small(Tc, f'a[i, 0] as {Tc}')}; }} }}")
    elif k == 4:
        Tf = r.choice(FLTS)
        L.append(f"let h = zeros({Tf}, 4);"); prints.append("h")
        L.append(f"parallel loop collapse(2) for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; atomic h[(i + j) % 4] += {small(Tf, f'c[i, j] as {Tf}')}; }} }}")
    elif k == 5:
        L.append(f"parallel num_gangs({r.choice([1, 3])}) num_workers({r.choice([1, 2, 4])}) vector_length({r.choice([1, 16, 32])}) {{")
        L.append(f"    loop gang worker for i in 0..n {{ loop vector for j in 0..m {{ c[i, j] = {e(Tc)}; }} }}")
        L.append("}")
    elif k == 6:
        It = r.choice(["i32", "i64", "u32"])
        L.append(f"let rs = zeros({It}, n);"); prints.append("rs")
        L.append("parallel loop gang for i in 0..n {")
        L.append(f"    let s: {It} = 0{It};")
        L.append(f"    loop vector reduction(+: s) for j in 0..m {{ c[i, j] = {e(Tc)}; s += {small(It, f'c[i, j] as {It}')}; }}")
        L.append("    rs[i] = s;")
        L.append("}")
    elif k == 7:
        L.append("data copy(c) copyin(a) {")
        for t in range(r.randrange(2, 4)):
            L.append(f"    parallel loop collapse(2) for i in 0..n {{ for j in 0..m {{ c[i, j] = c[i, j] + {small(Tc, e(Tc))}; }} }}")
            if r.random() < 0.5:
                L.append("    update self(c);")
                L.append(f"    for i in 0..n {{ c[i, 0] = c[i, 0] + {small(Tc, 'i as ' + Tc)}; }}")
                L.append("    update device(c);")
        L.append("}")
    elif k == 8:
        L.append(f"parallel loop for i in 0..n {{ for j in 0..m {{ let t: {Tc} = {e(Tc)}; if {g.b(2)} {{ c[i, j] = t; }} else {{ c[i, (m - 1) - j] = t; }} }} }}")
    else:
        L.append(f"serial {{ for i in 0..n {{ for j in 0..m {{ c[i, j] = {e(Tc)}; }} }} for j in 0..m {{ for i in 1..n {{ c[i, j] = c[i, j] + c[i - 1, j]; }} }} }}")
    for p in prints: L.append(f"println({p});")
    return "\n".join(L) + "\n"


def host(seed):
    r = random.Random(seed)
    n = r.choice([1, 3, 10, 37])
    L = [f"let n = {n};"]
    Tf = r.choice(ALL); Tp = r.choice(ALL)
    fvars = [("x", Tp), ("k", "i32"), ("(k as f64)", "f64"), ("(x as f32)", "f32") if Tp != "f32" else ("x", "f32")]
    gf = G(r, fvars)
    L.insert(0, f"fn h(x: {Tp}, k: i32) -> {Tf} {{ if k > {r.randrange(0, 20)} {{ return {gf.e(Tf, 1)}; }} let t: {Tf} = {gf.e(Tf, 1)}; for q in 0..(k % 5) {{ t = {gf.e(Tf, 2).replace('x', 't') if Tp == Tf else gf.e(Tf, 2)}; }} return t; }}")
    arrs = []
    for jn in range(r.randrange(1, 3)):
        T = r.choice(ALL); nm = f"a{jn}"; arrs.append((nm, T))
        L.append(f"let {nm} = zeros({T}, n);")
    vars = [("i", "i32"), ("(i as i64)", "i64"), ("(i as u32)", "u32"), ("(i as u8)", "u8"), ("(i as f32)", "f32"), ("(i as f64)", "f64")]
    vars += [(f"{nm}[(i * 7) % n]", T) for nm, T in arrs]
    g = G(r, vars)
    acc = r.choice(ALL)
    L.append(f"let acc: {acc} = {lit(acc, r)};")
    L.append("for i in 0..n {")
    for nm, T in arrs:
        L.append(f"    {nm}[i] = {g.e(T)};")
    if r.random() < 0.5: L.append(f"    if {g.b(1)} {{ continue; }}")
    ex = g.e(acc)
    op = r.choice(["+=", "-=", "*=", "^=", "|=", "&="]) if acc in INTS else r.choice(["+=", "-=", "*="])
    L.append(f"    acc {op} {ex};")
    L.append(f"    acc = acc + h({g.e(Tp, 2)}, i) as {acc};" if True else "")
    if r.random() < 0.3: L.append(f"    if {g.b(1)} {{ break; }}")
    L.append("}")
    for nm, T in arrs: L.append(f"println({nm});")
    L.append("println(acc);")
    return "\n".join(L) + "\n"


def devices(seed):
    """Rows spread over every device (`set device_num`), each block entered,
    computed, updated and exited there on async queues; with
    `ACCL_DEVICES=0,0` one GPU or lavapipe shows two."""
    r = random.Random(seed)
    n = r.choice([4, 8, 16, 32]); m = r.choice([1, 3, 8, 16])
    blocks = r.choice([2, 4])
    Ta, Tc = r.choice(ALL), r.choice(ALL)
    L = [f"let n = {n}; let m = {m}; let blocks = {blocks};",
         f"let a = zeros({Ta}, n, m);", init("a", Ta, ["n", "m"], r), f"let c = zeros({Tc}, n, m);",
         "let ndev = acc_get_num_devices();", "let rows = n / blocks;"]
    g = G(r, [("i", "i32"), ("j", "i32"), ("a[i, j]", Ta), ("(i as f64)", "f64")])
    q = r.choice(["", " async(b % 2 + 1)", " async(b + 1)"])
    L.append("for b in 0..blocks {")
    L.append("    set device_num(b % ndev);")
    L.append(f"    enter data copyin(a[b * rows:rows]) create(c[b * rows:rows]){q};")
    L.append(f"    parallel loop present(a[b * rows:rows], c[b * rows:rows]){q} for i in b * rows..(b + 1) * rows {{ for j in 0..m {{ c[i, j] = {g.e(Tc, 1)}; }} }}")
    if r.random() < 0.5:
        L.append(f"    parallel loop present(c[b * rows:rows]){q} for i in b * rows..(b + 1) * rows {{ for j in 1..m {{ c[i, j] = c[i, j] + c[i, j - 1]; }} }}")
    L.append(f"    exit data copyout(c[b * rows:rows]) delete(a[b * rows:rows]){q};")
    L.append("}")
    L.append("for d in 0..ndev { set device_num(d); wait; }")
    L.append("println(c);")
    return "\n".join(L) + "\n"


def levels(seed):
    """Regions with gang, worker and vector loops nested in every legal way,
    reductions at each level, routines of each level called from them."""
    r = random.Random(seed)
    n = r.choice([1, 3, 8, 20]); m = r.choice([1, 4, 16, 33]); p = r.choice([1, 2, 5])
    Ta, Tc = r.choice(ALL), r.choice(ALL)
    It = r.choice(["i32", "i64", "u32"])
    L = [f"let n = {n}; let m = {m}; let p = {p};", f"let a = zeros({Ta}, n, m);", init("a", Ta, ["n", "m"], r),
         f"let c = zeros({Tc}, n, m);", f"let rs = zeros({It}, n);", f"let tot: {It} = 0{It};"]
    g = G(r, [("i", "i32"), ("j", "i32"), ("a[i, j]", Ta), ("(j as f64)", "f64")])
    val = small(It, f"c[i, j] as {It}")
    shape = r.randrange(6)
    if shape == 0:
        # routine vector: the vector loop and its reduction inside the routine
        pre = [f"routine vector fn row(a: {Ta}[,], c: {Tc}[,], i: i32, m: i32) -> {It} {{",
               f"    let s: {It} = 0{It};",
               f"    loop vector reduction(+: s) for j in 0..m {{ c[i, j] = {g.e(Tc, 1)}; s += {val}; }}",
               "    return s;", "}"]
        L = pre + L
        L.append(f"parallel num_gangs({r.choice([1, 2, 7])}) vector_length({r.choice([1, 8, 32])}) reduction(+: tot) {{ loop gang for i in 0..n {{ rs[i] = row(a, c, i, m); tot += rs[i]; }} }}")
    elif shape == 1:
        # routine worker with a worker loop over rows of a block
        pre = [f"routine worker fn block(a: {Ta}[,], c: {Tc}[,], rs: {It}[], lo: i32, hi: i32, m: i32) {{",
               "    loop worker for i in lo..hi {",
               f"        let s: {It} = 0{It};",
               f"        loop vector reduction(+: s) for j in 0..m {{ c[i, j] = {g.e(Tc, 1)}; s += {val}; }}",
               "        rs[i] = s;", "    }", "}"]
        L = pre + L
        L.append(f"parallel num_gangs({r.choice([1, 3])}) num_workers({r.choice([1, 2, 4])}) vector_length({r.choice([1, 16, 32])}) {{ loop gang for b in 0..p {{ block(a, c, rs, b * n / p, (b + 1) * n / p, m); }} }}")
        L.append("for i in 0..n { tot += rs[i]; }")
    elif shape == 2:
        # gang worker vector nest with reductions at two levels
        L.append(f"parallel num_gangs({r.choice([1, 2, 5])}) num_workers({r.choice([1, 2, 4])}) vector_length({r.choice([1, 8, 32])}) reduction(+: tot) {{")
        L.append("    loop gang for b in 0..p {")
        L.append(f"        let gs: {It} = 0{It};")
        L.append("        loop worker reduction(+: gs) for i in 0..n {")
        L.append(f"            let s: {It} = 0{It};")
        L.append(f"            loop vector reduction(+: s) for j in 0..m {{ c[i, j] = {g.e(Tc, 1)}; s += {val}; }}")
        L.append("            rs[i] = s; gs += s;")
        L.append("        }")
        L.append("        tot += gs;")
        L.append("    }")
        L.append("}")
    elif shape == 3:
        # parallel loop gang with an inner vector loop and statements around it
        L.append(f"parallel loop gang vector_length({r.choice([1, 4, 32, 64])}) for i in 0..n {{")
        L.append(f"    let base: {Tc} = {g.e(Tc, 2).replace('j', '0')};")
        L.append(f"    loop vector for j in 0..m {{ c[i, j] = {g.e(Tc, 1)} + base; }}")
        L.append(f"    let s: {It} = 0{It};")
        L.append(f"    loop vector reduction(+: s) for j in 0..m {{ s += {val}; }}")
        L.append("    rs[i] = s;")
        L.append("}")
        L.append("for i in 0..n { tot += rs[i]; }")
    elif shape == 4:
        # collapse(2) gang vector with a reduction, then a seq loop in a gang loop
        L.append(f"parallel loop collapse(2) gang vector reduction(+: tot) for i in 0..n {{ for j in 0..m {{ c[i, j] = {g.e(Tc, 1)}; tot += {val}; }} }}")
        L.append(f"parallel loop gang for i in 0..n {{ loop seq for j in 1..m {{ c[i, j] = c[i, j] + c[i, j - 1]; }} }}")
    else:
        # routine seq called from a vector loop inside a gang loop
        pre = [f"routine seq fn cell(a: {Ta}[,], i: i32, j: i32) -> {Tc} {{",
               f"    let v: {Tc} = {g.e(Tc, 1)};",
               "    return v;", "}"]
        L = pre + L
        L.append(f"parallel num_gangs({r.choice([1, 4])}) vector_length({r.choice([1, 32])}) {{ loop gang for i in 0..n {{ loop vector for j in 0..m {{ c[i, j] = cell(a, i, j); }} }} }}")
        L.append(f"parallel loop reduction(+: tot) for i in 0..n {{ for j in 0..m {{ tot += {val}; }} }}")
    L += ["println(c);", "println(rs);", "println(tot);"]
    return "\n".join(L) + "\n"


def reductions(seed):
    """Several reduction variables of mixed operators and types on one
    construct, at the construct, gang or vector level, over collapsed or
    nested loops, on `parallel loop`, `kernels loop` and `serial loop`."""
    r = random.Random(seed)
    n = r.choice([1, 5, 32, 100]); m = r.choice([1, 7, 16])
    Ta = r.choice(ALL)
    L = [f"let n = {n}; let m = {m};", f"let a = zeros({Ta}, n, m);", init("a", Ta, ["n", "m"], r)]
    g = G(r, [("i", "i32"), ("j", "i32"), ("a[i, j]", Ta)])
    reds = []
    for k in range(r.randrange(1, 4)):
        T = r.choice(["i32", "i64", "u32", "u8", "f32", "f64"])
        ops = ["+", "*", "max", "min"] + (["&", "|", "^"] if T in INTS else [])
        op = r.choice(ops)
        init_v = {"+": "0", "*": "1", "max": "0", "min": "100", "&": "255", "|": "0", "^": "0"}[op]
        if T in FLTS and init_v.isdigit():
            init_v += ".0"
        L.append(f"let r{k}: {T} = {init_v}{T};")
        reds.append((f"r{k}", T, op))
    def upd(nm, T, op):
        v = small(T, g.e(T, 1))
        if op == "*":
            v = f"(({v}) % 2{T} + 1{T})" if T in INTS else f"(1.0{T} + ({v}) * 0.0)"
        return f"{nm} = {op}({nm}, {v});" if op in ("max", "min") else f"{nm} {op}= {v};"
    clause = " ".join(f"reduction({op}: {nm})" for nm, T, op in reds)
    body = " ".join(upd(*x) for x in reds)
    shape = r.randrange(5)
    if shape == 0:
        L.append(f"parallel loop collapse(2) {clause} for i in 0..n {{ for j in 0..m {{ {body} }} }}")
    elif shape == 1:
        L.append(f"kernels loop {clause} for i in 0..n {{ for j in 0..m {{ {body} }} }}")
    elif shape == 2:
        L.append(f"serial loop {clause} for i in 0..n {{ for j in 0..m {{ {body} }} }}")
    elif shape == 3:
        L.append(f"parallel loop gang {clause} for i in 0..n {{ loop vector {clause} for j in 0..m {{ {body} }} }}")
    else:
        L.append(f"parallel num_gangs({r.choice([1, 4])}) {clause} {{ loop gang {clause} for i in 0..n {{ loop worker vector {clause} for j in 0..m {{ {body} }} }} }}")
    L += [f"println({nm});" for nm, T, op in reds]
    return "\n".join(L) + "\n"


def queues(seed):
    """Work on several async queues joined by `wait(q) async(r)`, `update`s
    on queues, `acc_async_test`/`acc_wait` routines, and host reads after waits."""
    r = random.Random(seed)
    n = r.choice([8, 64, 1000])
    T = r.choice(ALL)
    L = [f"let n = {n};", f"let a = zeros({T}, n); let b = zeros({T}, n);", init("a", T, ["n"], r),
         "enter data copyin(a) create(b);"]
    g = G(r, [("i", "i32"), ("a[i]", T)])
    qs = [1, 2, 3]
    last = {}
    for k in range(r.randrange(2, 6)):
        q = r.choice(qs)
        dep = r.choice([x for x in qs if x != q])
        w = f" wait({dep})" if r.random() < 0.6 else ""
        if r.random() < 0.5:
            L.append(f"parallel loop present(a, b) async({q}){w} for i in 0..n {{ b[i] = b[i] + {small(T, g.e(T, 1))}; }}")
        else:
            L.append(f"parallel loop present(a, b) async({q}){w} for i in 0..n {{ a[i] = a[i] + {small(T, 'b[i]')}; }}")
        if r.random() < 0.3:
            L.append(f"update self(b[0:n / 2]) async({q});")
        if r.random() < 0.2:
            L.append(f"wait({q}) async({r.choice(qs)});")
    L.append(r.choice(["wait;", "acc_wait_all();", "wait(1, 2, 3);", "acc_wait(1); acc_wait(2); acc_wait(3);"]))
    L.append("exit data copyout(a, b);")
    L += ["println(a);", "println(b);"]
    return "\n".join(L) + "\n"


def regions(seed):
    """Nested `data` regions over sections of 2-D arrays, `present`,
    `no_create`, `copyout` and `create` of sections, `update` of rows and
    column blocks, kernels inside and between, host edits between updates."""
    r = random.Random(seed)
    n = r.choice([4, 8, 12]); m = r.choice([3, 8, 16])
    T = r.choice(ALL)
    L = [f"let n = {n}; let m = {m};", f"let a = zeros({T}, n, m);", init("a", T, ["n", "m"], r),
         f"let b = zeros({T}, n, m);"]
    g = G(r, [("i", "i32"), ("j", "i32"), ("a[i, j]", T)])
    lo = r.randrange(0, n // 2); cnt = r.randrange(1, n - lo + 1)
    c0 = r.randrange(0, m // 2 + 1); cc = r.randrange(1, m - c0 + 1)
    outer = r.choice([f"copy(a[{lo}:{cnt}])", f"copyin(a[{lo}:{cnt}])", "copy(a)", f"create(a[{lo}:{cnt}])"])
    inner = r.choice([f"present(a[{lo}:{cnt}])", f"copy(b[{lo}:{cnt}])", f"no_create(b)", f"copyout(b[{lo}:{cnt}])", f"create(b[{lo}:{cnt}])"])
    L.append(f"data {outer} {{")
    L.append(f"    data {inner} {{")
    L.append(f"        parallel loop collapse(2) for i in {lo}..{lo + cnt} {{ for j in 0..m {{ b[i, j] = {g.e(T, 1)}; a[i, j] = a[i, j] + {small(T, 'b[i, j]')}; }} }}")
    if r.random() < 0.6:
        L.append(f"        update self(a[{lo}:{cnt}, {c0}:{cc}]);")
        L.append(f"        for i in {lo}..{lo + cnt} {{ a[i, {c0}] = a[i, {c0}] + {small(T, 'i as ' + T)}; }}")
        L.append(f"        update device(a[{lo}:{cnt}, {c0}:{cc}]);")
    L.append("    }")
    L.append(f"    parallel loop for i in {lo}..{lo + cnt} {{ for j in 1..m {{ a[i, j] = a[i, j] - a[i, j - 1]; }} }}")
    if r.random() < 0.5:
        L.append(f"    update self(a[{lo}:1]);")
    L.append("}")
    L += ["println(a);", "println(b);"]
    return "\n".join(L) + "\n"


FAMILIES = {"kernel": kernel, "structure": structure, "lifetimes": lifetimes, "host": host, "devices": devices, "levels": levels, "reductions": reductions, "queues": queues, "regions": regions}
