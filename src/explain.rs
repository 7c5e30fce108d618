//! The mapping report (`accl check --explain`, `accl run --explain`, the
//! REPL's `:explain`): per compute construct, how its loops map onto gangs,
//! workers and vector lanes, the reductions, what data it moves, and for
//! each inner loop whether it became a vector loop or why it stayed
//! sequential. With a device's kernel specialisation it also says what
//! that device does (teams in subgroups, iterations per trip).

use compiler::{Kernel, Shape, Spec};
use lang::hir;
use std::fmt::Write;

/// The report for every compute construct of a checked program whose
/// text starts at byte `from` of `text` (earlier text: declarations a
/// session keeps in front of its input).
pub fn report(
    file: &str,
    text: &str,
    from: usize,
    prog: &hir::Program,
    builtins: &lang::Builtins,
    spec: Option<&Spec>,
) -> String {
    let line = |at: u32| {
        let at = (at as usize).clamp(from, text.len());
        text[from..at].matches('\n').count() + 1
    };
    let mut out = String::new();
    // Without a device the report says how the host backend runs each
    // construct: compiled by the host JIT (on threads or one) or not.
    let host = spec
        .is_none()
        .then(|| crate::interp::native::enabled().then(|| host_jit::compile(prog, builtins, true)));
    for (body, c) in kernel_constructs(prog) {
        if (c.span.start as usize) < from {
            continue;
        }
        // `kernels` and `serial` are written as other constructs: name
        // both.
        let kw = text
            .get(c.kind_span.start as usize..c.kind_span.end as usize)
            .unwrap_or_default();
        let _ = if kw.starts_with("serial") {
            writeln!(
                out,
                "{file}:{}: serial (one gang of one lane)",
                line(c.span.start)
            )
        } else if kw.starts_with("kernels") {
            writeln!(
                out,
                "{file}:{}: {kw}: {}",
                line(c.span.start),
                match (c.kind, c.clauses.auto, c.clauses.independent) {
                    (lang::hir::DirectiveKind::ParallelLoop, true, _) => "parallel loop auto",
                    (lang::hir::DirectiveKind::ParallelLoop, _, true) => {
                        "parallel loop independent"
                    }
                    (lang::hir::DirectiveKind::ParallelLoop, _, _) => "parallel loop",
                    _ => "serial (one gang of one lane)",
                }
            )
        } else {
            writeln!(out, "{file}:{}: {}", line(c.span.start), c.kind.name())
        };
        match compiler::lower(prog, body, c, builtins) {
            Ok(k) => {
                let mut own = String::new();
                construct(&mut own, &line, body, c, &k, spec);
                let mut lines = own.lines();
                let _ = writeln!(out, "{}", lines.next().unwrap_or(""));
                // The parallel kernel an `auto` loop's launch-time test picks.
                if let Some((v, _)) = compiler::lower_variant(prog, body, c, builtins) {
                    let mut alt = String::new();
                    construct(&mut alt, &line, body, c, &v, spec);
                    let first = alt.lines().next().unwrap_or("").trim();
                    let _ = writeln!(
                        out,
                        "  or, at a launch whose values keep the iterations apart: {first}"
                    );
                }
                for l in lines {
                    let _ = writeln!(out, "{l}");
                }
            }
            Err(d) => {
                let _ = writeln!(out, "  not compiled: {}", d.message);
            }
        }
        if let Some(jit) = &host {
            let _ = writeln!(out, "  on the host: {}", on_host(jit.as_ref(), c));
        }
    }
    if out.is_empty() {
        out.push_str("no compute constructs\n");
    }
    out
}

/// How the host backend runs construct `c` (`jit`: the host JIT's
/// program, `None` when it is off).
fn on_host(jit: Option<&Result<host_jit::JitProgram, String>>, c: &hir::Construct) -> String {
    let j = match jit {
        None => return "interpreted (the host JIT is off: ACCL_JIT=0)".into(),
        Some(Err(e)) => return format!("interpreted (the host JIT failed: {e})"),
        Some(Ok(j)) => j,
    };
    if let Some(g) = j.gang_unit(c) {
        let how = match &g.threads {
            // No thread count: the report is the same on every machine.
            Ok(()) => "compiled; the gang loop's iterations run in fixed chunks on the \
                       machine's threads (`ACCL_HOST_THREADS`), reductions combined in chunk \
                       order"
                .into(),
            Err(w) if g.test.is_some() => format!(
                "compiled; the gang loop's iterations run in fixed chunks on the machine's \
                 threads when a test as the construct starts finds the elements they write \
                 apart ({}), else on one thread",
                w.what
            ),
            Err(w) => format!("compiled, on one thread: {}", w.what),
        };
        return match host_jit::simd::describe(&g.simd) {
            Some(v) => format!("{how}; {v}"),
            None => how,
        };
    }
    match j.gang_refused(c) {
        Some(w) => format!("interpreted: {}", w.what),
        None => "interpreted (only a construct's loop nest is compiled)".into(),
    }
}

fn construct(
    out: &mut String,
    line: &dyn Fn(u32) -> usize,
    body: &hir::Body,
    c: &hir::Construct,
    k: &Kernel,
    spec: Option<&Spec>,
) {
    let levels: Vec<String> = k
        .levels
        .iter()
        .map(|l| {
            format!(
                "`{}` (line {})",
                k.entry.locals[l.var].name,
                line(l.span.start)
            )
        })
        .collect();
    let written_levels = match &c.body {
        hir::ConstructBody::Loops { loops, .. } => loops.len(),
        _ => 0,
    };
    let vl = match (k.vector_length, &k.vector_length_expr) {
        (Some(v), _) => format!("vector length {v}"),
        (None, Some(_)) => "vector length from `vector_length(..)` at launch".into(),
        (None, None) if k.shape == Shape::Flat => {
            "vector length 256 (32 to 256 by the iteration count at launch)".into()
        }
        (None, None) => "vector length 256".into(),
    };
    let _ = match k.shape {
        Shape::Flat => writeln!(
            out,
            "  gang, vector: {} {}, one iteration per lane; {vl}",
            if levels.len() > 1 { "loops" } else { "loop" },
            levels.join(", ")
        ),
        Shape::Seq => writeln!(
            out,
            "  seq: one lane runs loop {} in order",
            levels.join(", ")
        ),
        Shape::Gang => writeln!(
            out,
            "  gang{}: {} {}, one iteration per gang; {vl}",
            if k.num_workers.is_some() {
                format!(", worker ({} per gang)", k.num_workers.unwrap_or(1))
            } else {
                String::new()
            },
            if levels.len() > 1 { "loops" } else { "loop" },
            levels.join(", ")
        ),
        Shape::Region => writeln!(
            out,
            "  gang-redundant region: `num_gangs` gangs each run the block; {vl}"
        ),
    };
    // A device that lays gangs out as teams keeps per-gang copies in the
    // hidden array (the writer's rule, `compiler::spirv::copies`).
    let teams = spec.is_some_and(|s| compiler::Plan::of(k, s).teams.is_some());
    for (i, p) in k.private_copies.iter().enumerate() {
        let hidden = &k.arrays[p.array].name;
        let clause = if p.first { "firstprivate" } else { "private" };
        let place = match &p.place {
            Ok(compiler::kir::CopySlots::Gang) if teams => {
                Err("on this device a workgroup holds several gangs, as teams".to_string())
            }
            Ok(_) if spec.is_some_and(|s| s.checks) => {
                Err("check mode reports accesses of device elements".to_string())
            }
            place => place.clone(),
        };
        let local = match (&place, spec) {
            (Ok(compiler::kir::CopySlots::Lane), Some(s)) if s.checks => String::new(),
            (Ok(compiler::kir::CopySlots::Lane), _)
                // `compiler::private_copies::local_sizes`'s rule.
                if k.arrays[p.array].elem.size() >= 4
                    && i < compiler::private_copies::LOCAL_ARRAYS =>
            {
                format!(
                    ": function-local (the lane's own array of the section's {} elements) when the section has at most {} (known as the kernel launches), else",
                    k.arrays[p.array].elem,
                    compiler::private_copies::LOCAL_ELEMS
                )
            }
            _ => String::new(),
        };
        let _ = match &place {
            Ok(slots) => writeln!(
                out,
                "  {clause} `{}` (line {}): a copy per {}{local} in workgroup memory when the workgroup's copies fit in {} bytes (checked as the kernel starts), else in `{hidden}` (a device scratch buffer)",
                p.name,
                line(p.span.start),
                match slots {
                    compiler::kir::CopySlots::Lane => "lane",
                    compiler::kir::CopySlots::Gang => "gang",
                },
                compiler::private_copies::COPY_BYTES
                    / k.private_copies.iter().filter(|p| p.place.is_ok()).count().max(1) as u32,
            ),
            Err(why) => writeln!(
                out,
                "  {clause} `{}` (line {}): copies in `{hidden}`, a device scratch buffer ({why})",
                p.name,
                line(p.span.start),
            ),
        };
    }
    fn caches(
        b: &compiler::kir::Block,
        out: &mut Vec<(compiler::kir::ArrayH, u32, bool)>,
        top: bool,
    ) {
        use compiler::kir::StmtKind as S;
        for s in b {
            match &s.kind {
                S::Cache { array, count, .. } => out.push((*array, *count, top)),
                S::If { then, els, .. } => {
                    caches(then, out, false);
                    caches(els, out, false);
                }
                S::Loop { body, .. } => caches(body, out, false),
                S::VectorLoop(v) => caches(&v.body, out, false),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    caches(&k.entry.body, &mut found, true);
    for (a, n, top) in found {
        let name = &k.arrays[a].name;
        let _ = if top && k.shape == Shape::Gang && !k.arrays[a].written {
            writeln!(
                out,
                "  cache(`{name}`, {n} elements): copied to workgroup memory for each gang iteration"
            )
        } else {
            writeln!(
                out,
                "  cache(`{name}`, {n} elements): ignored (only a gang loop's iteration body caches, and only arrays the kernel does not write)"
            )
        };
    }
    if c.clauses.tile_auto {
        let sizes: Vec<String> = c.clauses.tile.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(
            out,
            "  tile(*): the compiler chose tile({}) (64 lanes for one loop, 16 x 16 for the two innermost, 1 for outer loops)",
            sizes.join(", ")
        );
    }
    if let Some((a, b)) = k.tile {
        let _ = writeln!(
            out,
            "  tile({a}, {b}): each workgroup of {} lanes takes {b} x {a} tiles of the nest",
            a * b
        );
    }
    if k.levels.len() > written_levels && k.shape == Shape::Flat {
        let _ = writeln!(
            out,
            "  collapsed automatically: the inner loops are independent"
        );
    }
    for (span, what) in &k.choices {
        let _ = writeln!(out, "  line {}: {what}", line(span.start));
    }
    for n in &k.notes {
        let _ = match &n.vector {
            Some(reds) if reds.is_empty() => {
                writeln!(out, "  line {}: `for`: vector loop", line(n.span.start))
            }
            Some(reds) => writeln!(
                out,
                "  line {}: `for`: vector loop, {}",
                line(n.span.start),
                reds.iter()
                    .map(|(op, v)| format!("reduction({}: {v})", op.symbol()))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            None => writeln!(
                out,
                "  line {}: `for`: sequential: {}",
                line(n.span.start),
                n.reason
            ),
        };
    }
    for r in &c.clauses.reductions {
        let _ = writeln!(
            out,
            "  reduction({}: {}): a copy per lane, folded in a fixed tree",
            r.op.symbol(),
            body.locals[r.var].name
        );
    }
    for r in &c.clauses.array_reductions {
        let _ = writeln!(
            out,
            "  reduction({}: {}): array, every element update atomic",
            r.op.symbol(),
            body.locals[r.var].name
        );
    }
    for a in &c.captures.arrays {
        let name = &body.locals[a.var].name;
        // The hidden array of a private array's copies (lang's
        // `check::private_arrays` names it `c'private<n>`): said above
        // where the kernel knows the loop that owns them.
        if let Some((of, _)) = name.split_once("'private") {
            if k.private_copies
                .iter()
                .any(|p| &k.arrays[p.array].name == name)
            {
                continue;
            }
            let first = c
                .clauses
                .data
                .iter()
                .any(|d| d.var == a.var && d.kind == lang::hir::DataKind::CopyIn);
            let _ = writeln!(
                out,
                "  {}({of}): a copy per gang iteration (or per iteration of the loop that names it) in a device scratch buffer `{name}` of copies x elements, indexed by the copy{}",
                if first { "firstprivate" } else { "private" },
                if first { ", each copy filled from the host's values" } else { ", zeros at the start" }
            );
            continue;
        }
        let how = match (a.read, a.written) {
            (true, true) => "read and written",
            (false, true) => "written",
            _ => "read",
        };
        let clause = c
            .clauses
            .data
            .iter()
            .find(|d| d.var == a.var)
            .map(|d| format!("`{}({name})`", d.kind.name()))
            .unwrap_or_else(|| {
                if c.clauses.default_present {
                    return "`default(present)`: must be on the device already".to_string();
                }
                // What the launch does (`interp::data::enter_implicit`):
                // OpenACC's implicit `copy`, in as well as out, since
                // elements the kernel does not write must come back as
                // they were; an array the kernel only reads (or a
                // constant one) goes in only.
                let implied = if body.locals[a.var].constant || !a.written {
                    "copyin"
                } else {
                    "copy"
                };
                format!("present, else `{implied}({name})` for this launch")
            });
        let _ = writeln!(out, "  data: `{name}` {how}: {clause}");
    }
    for &v in &c.captures.scalars {
        if !c.clauses.reductions.iter().any(|r| r.var == v) {
            let _ = writeln!(
                out,
                "  data: `{}` firstprivate (copied in)",
                body.locals[v].name
            );
        }
    }
    if let Some(spec) = spec {
        device(out, k, spec);
    }
}

/// What the device of `spec` does with `k`.
fn device(out: &mut String, k: &Kernel, spec: &Spec) {
    let plan = compiler::Plan::of(k, spec);
    if let Some(t) = plan.teams {
        let _ = writeln!(
            out,
            "  on this device: each gang is a team of {} lanes in one {}-lane subgroup, {} teams per workgroup{}",
            t.lanes,
            spec.subgroup_size,
            t.per_group,
            match plan.coarsening {
                1 => String::new(),
                j => format!(", {j} gang iterations at a time per team"),
            }
        );
    } else if k.shape == Shape::Flat {
        match plan.coarsening {
            1 => {}
            u => {
                let _ = writeln!(
                    out,
                    "  on this device: {u} iterations per lane per trip, stores after the loads"
                );
            }
        }
    }
}

/// Every compute construct of a checked program, in source order, with the
/// body it appears in.
pub fn kernel_constructs(
    prog: &lang::hir::Program,
) -> Vec<(&lang::hir::Body, &lang::hir::Construct)> {
    use lang::hir::{Block, Body, ConstructBody, DirectiveKind as DK, StmtKind};
    fn walk<'a>(body: &'a Body, b: &'a Block, out: &mut Vec<(&'a Body, &'a lang::hir::Construct)>) {
        for s in b {
            match &s.kind {
                StmtKind::Construct(c) => match &c.body {
                    _ if matches!(c.kind, DK::Parallel | DK::ParallelLoop) => out.push((body, c)),
                    ConstructBody::Block(b) => walk(body, b, out),
                    _ => {}
                },
                StmtKind::If { then, els, .. } => {
                    walk(body, then, out);
                    walk(body, els, out);
                }
                StmtKind::While { body: w, .. } | StmtKind::Block(w) => walk(body, w, out),
                StmtKind::For(f) => walk(body, &f.body, out),
                _ => {}
            }
        }
    }
    let mut v = Vec::new();
    for (_, f) in prog.functions.iter() {
        walk(&f.body, &f.body.block, &mut v);
    }
    walk(&prog.main, &prog.main.block, &mut v);
    v.sort_by_key(|(_, c)| c.span.start);
    v
}
