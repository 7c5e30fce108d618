//! Compile once, run many: [`Engine::compile`] does the front end and the
//! host compile; [`Engine::run`] binds the engine's variables by name, runs
//! and commits the new state. [`Engine::eval`] is the two in a row.
//!
//! A [`Program`] remembers what it was compiled against: the type of every
//! engine variable its text names, and the signature of every registered
//! Rust function its text names. `run` checks them first (a cheap check:
//! one lookup per variable it uses) and refuses a program that no longer
//! fits with `accl::api::stale_program`, before anything runs.

use super::compiled::{HostSig, Prepared, Program};
use super::{Engine, Error, Val, Var};
use crate::interp::{self, Frame};
use lang::hir::StmtKind;
use std::collections::HashMap;
use std::rc::Rc;

fn stale(msg: String) -> Error {
    let mut e = Error::api("accl::api::stale_program", msg);
    for d in &mut e.diags {
        d.help = Some("compile it again with `Engine::compile`".into());
    }
    e
}

impl Engine {
    /// Parse, check and compile `src` against the engine's current
    /// variables, declarations and registered functions, without running
    /// it. The same errors as [`Engine::eval`]'s front end.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set("n", 3i32);
    /// let p = e.compile("n = n * 2;").unwrap();
    /// e.run(&p).unwrap();
    /// e.run(&p).unwrap();
    /// assert_eq!(e.get::<i32>("n"), Some(12));
    /// assert_eq!(e.compile("n = 1.5;").unwrap_err().code(), "accl::type::mismatch");
    /// ```
    pub fn compile(&self, src: &str) -> Result<Program, Error> {
        lang::stack::large(|| {
            let p = self.front_end("<program>", src)?;
            Ok(self.finish_compile(p))
        })
    }

    /// The host half of a compile: closures and kernels from a checked program.
    pub(super) fn finish_compile(&self, p: Prepared) -> Program {
        let idents = lang_idents(&p.map.text);
        let known: std::collections::HashSet<&str> = idents.iter().map(String::as_str).collect();
        let globals = self
            .vars
            .iter()
            .zip(&p.prog.globals)
            .filter(|(v, _)| known.contains(v.name.as_str()))
            .map(|(v, l)| (l.index(), v.name.clone(), v.ty))
            .collect();
        let lets = top_level_lets(&p.prog.main.block)
            .filter_map(|local| {
                let loc = &p.prog.main.locals[local];
                // The checker's hidden locals (`acc_on_device(t)#k`) are no
                // variables of the program.
                (!loc.name.contains('#')).then(|| {
                    (
                        local.index(),
                        loc.name.clone(),
                        loc.ty,
                        loc.constant,
                        loc.data_scalar,
                    )
                })
            })
            .collect();
        let host = idents
            .iter()
            .filter_map(|n| Some((n.clone(), self.host_sigs.get(n)?.clone())))
            .collect();
        // A device runs the constructs: the host JIT leaves them out.
        let on_host = self.cx.backend.name() == "host";
        if !on_host && uses_device(&p.prog, &self.builtins) {
            // Its driver starts while the host code compiles and runs.
            let one_queue = self.whole_program && !uses_async(&p.prog, &self.builtins);
            self.cx.backend.will_use(&self.cx, one_queue);
        }
        let compiled = interp::compile(&p.prog, &self.builtins, on_host);
        self.cx.backend.prefetch(&compiled.kernels, &self.cx);
        Program {
            engine: self.id,
            host_gen: self.host_gen,
            map: Rc::new(p.map),
            compiled,
            globals,
            lets,
            decls: p.decls,
            imported: p.imported,
            idents,
            host,
        }
    }

    /// Run a compiled program: its value (as [`Engine::eval`] returns it),
    /// with the same persistence. The variables it uses are looked up by
    /// name; one that is gone or has another type than at compile time, or
    /// a registered function it names that was registered again with
    /// another signature, is the error `accl::api::stale_program` and
    /// nothing runs. A program may run on another engine on those terms.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_array("x", vec![1.0f32, 2.0], &[2]).unwrap();
    /// let p = e.compile("x[0] += 1.0;").unwrap();
    /// e.run(&p).unwrap();
    /// e.set("x", 1i32);
    /// assert_eq!(e.run(&p).unwrap_err().code(), "accl::api::stale_program");
    /// ```
    pub fn run(&mut self, p: &Program) -> Result<Option<Val>, Error> {
        self.timings = super::Timings::default();
        let r = lang::stack::large(|| self.run_program(p));
        self.release_unreachable();
        r
    }

    /// After an input: free the device data no variable can reach (entered
    /// by an input that failed, or whose variable now holds another array),
    /// so that an engine running inputs again and again keeps its device
    /// memory flat.
    ///
    /// Data that pending async work may still use (work of a failed input
    /// on a queue nothing waits for) is freed after waiting for the
    /// devices' queues; a fault that work reports then is dropped, as its
    /// input is gone.
    pub(super) fn release_unreachable(&mut self) {
        let b = self.cx.backend.clone();
        if b.release_unreachable(&mut self.cx) > 0 {
            for d in 0..b.num_devices() {
                let here = self.cx.device;
                self.cx.device = d;
                let _ = b.wait(&mut self.cx, None, None, lang::Span::default());
                self.cx.device = here;
            }
            b.release_unreachable(&mut self.cx);
        }
    }

    /// Bind, run, commit. `self.timings.check` is left as the caller set it.
    pub(super) fn run_program(&mut self, p: &Program) -> Result<Option<Val>, Error> {
        if p.engine != self.id || p.host_gen != self.host_gen {
            self.check_host_fns(p)?;
        }
        let mut fr = Frame::new(p.compiled.main_locals);
        let mut at = Vec::with_capacity(p.globals.len());
        for (slot, name, ty) in &p.globals {
            let Some(i) = self.vars.iter().position(|v| v.name == *name) else {
                return Err(stale(format!(
                    "the program uses the variable `{name}`, which no longer exists"
                )));
            };
            let v = &self.vars[i];
            if v.ty != *ty {
                return Err(stale(format!(
                    "the program was compiled with `{name}: {ty}`, and `{name}` is now `{}`",
                    v.ty
                )));
            }
            fr.s[*slot] = v.bits;
            fr.a[*slot] = v.array.clone();
            fr.t[*slot] = v.text.clone();
            at.push(i);
        }
        self.cx.ops = 0;
        self.cx.source = Some(p.map.clone());
        let t = std::time::Instant::now();
        self.cx.backend.take_jit_time();
        let out = interp::run(&p.compiled, &mut fr, &mut self.cx);
        let jit = self.cx.backend.take_jit_time();
        self.timings.compile += jit;
        self.timings.run = t.elapsed().saturating_sub(jit);
        let out = out.map_err(|d| p.map.error(vec![*d]))?;
        // Commit: the globals' new values, new top-level variables, declarations.
        for ((slot, _, _), &i) in p.globals.iter().zip(&at) {
            let v = &mut self.vars[i];
            v.bits = fr.s[*slot];
            v.array = fr.a[*slot].take();
            v.text = fr.t[*slot].take();
        }
        if !p.lets.is_empty() {
            // By name, so that keeping an input's many variables is linear.
            let mut var_at: HashMap<String, usize> = self
                .vars
                .iter()
                .enumerate()
                .map(|(i, v)| (v.name.clone(), i))
                .collect();
            for (slot, name, ty, constant, data_scalar) in &p.lets {
                let mut var = Var {
                    name: name.clone(),
                    ty: *ty,
                    constant: *constant,
                    bits: fr.s[*slot],
                    array: fr.a[*slot].clone(),
                    text: fr.t[*slot].clone(),
                };
                // A scalar that was OpenACC data is the host's value of it
                // for later inputs and the embedder.
                if let (true, Some(a)) = (*data_scalar, &var.array) {
                    if let Some(v) = a.try_data().and_then(|d| d.get(0)) {
                        var.ty = lang::Type::Scalar(a.scalar());
                        var.bits = crate::interp::scalar::value_to_bits(v, a.scalar());
                        var.array = None;
                    }
                }
                match var_at.get(name) {
                    Some(&i) => self.vars[i] = var,
                    None => {
                        var_at.insert(name.clone(), self.vars.len());
                        self.vars.push(var);
                    }
                }
            }
        }
        self.keep_decls(&p.decls, &p.map.input);
        self.imported.extend(p.imported.iter().cloned());
        Ok(out.filter(|v| !matches!(v, Val::Unit)))
    }

    /// Every registered function the program names has the signature it
    /// was compiled with (and no name it uses became one).
    fn check_host_fns(&self, p: &Program) -> Result<(), Error> {
        for n in &p.idents {
            let (was, now) = (p.host.get(n), self.host_sigs.get(n));
            if was == now {
                continue;
            }
            let sig = |s: Option<&HostSig>| match s {
                Some((params, ret)) => format!(
                    "a registered function `({}) -> {ret}`",
                    params
                        .iter()
                        .map(lang::Param::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "not a registered function".to_string(),
            };
            return Err(stale(format!(
                "`{n}` was {} when the program was compiled, and is now {}",
                sig(was),
                sig(now)
            )));
        }
        Ok(())
    }
}

/// The distinct identifiers of a source text (the names it can refer to).
pub(super) fn lang_idents(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    lang::lexer::lex(text)
        .tokens
        .into_iter()
        .filter_map(|(_, t, _)| match t {
            lang::token::Tok::Ident(s) if seen.insert(s) => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

/// The locals of the top level's `let`s, in order, with those after a
/// top-level `declare` (whose data region holds the rest of the program).
fn top_level_lets(block: &[lang::hir::Stmt]) -> Box<dyn Iterator<Item = lang::hir::LocalH> + '_> {
    Box::new(
        block
            .iter()
            .flat_map(|st| -> Box<dyn Iterator<Item = lang::hir::LocalH> + '_> {
                match &st.kind {
                    StmtKind::Let { local, .. } => Box::new(std::iter::once(*local)),
                    StmtKind::LetTuple { locals, .. } => Box::new(locals.iter().flatten().copied()),
                    StmtKind::Construct(c) if c.kind == lang::ast::DirectiveKind::Declare => {
                        match &c.body {
                            lang::hir::ConstructBody::Block(b) => top_level_lets(b),
                            _ => Box::new(std::iter::empty()),
                        }
                    }
                    _ => Box::new(std::iter::empty()),
                }
            }),
    )
}

/// Whether checked program `prog` has code that uses a device: a construct
/// (other than `set`, `init` and `shutdown`, which reach a device only
/// through the others) or a builtin that copies device data or tests its
/// queues. (The backend then opens the device ahead of that code.)
fn uses_device(prog: &lang::hir::Program, builtins: &lang::Builtins) -> bool {
    use lang::hir::DirectiveKind as D;
    let device_builtin = |name: &str| {
        name.starts_with("acc_memcpy")
            || name.starts_with("acc_async_test")
            || name == "acc_wait_any"
    };
    any_code(
        prog,
        builtins,
        &|c| !matches!(c.kind, D::Set | D::Init | D::Shutdown),
        &device_builtin,
    )
}

/// Does `prog` use an async queue: an `async` clause, or a builtin that
/// names one?
fn uses_async(prog: &lang::hir::Program, builtins: &lang::Builtins) -> bool {
    any_code(prog, builtins, &|c| c.clauses.async_.is_some(), &|name| {
        name.contains("async") || name.starts_with("acc_wait")
    })
}

/// Does some construct of `prog` (at any depth, in its main code or a
/// function) satisfy `construct`, or some builtin it calls `builtin` (by
/// name)?
fn any_code(
    prog: &lang::hir::Program,
    builtins: &lang::Builtins,
    construct: &dyn Fn(&lang::hir::Construct) -> bool,
    builtin: &dyn Fn(&str) -> bool,
) -> bool {
    use lang::hir::{ConstructBody, Expr, StmtKind as S};
    fn block(b: &[lang::hir::Stmt], f: &dyn Fn(&lang::hir::Construct) -> bool) -> bool {
        b.iter().any(|s| match &s.kind {
            S::If { then, els, .. } => block(then, f) || block(els, f),
            S::While { body, .. } => block(body, f),
            S::For(l) => block(&l.body, f),
            S::Block(b) => block(b, f),
            S::Construct(c) => {
                f(c) || match &c.body {
                    ConstructBody::Block(b) | ConstructBody::Loops { body: b, .. } => block(b, f),
                    ConstructBody::None => false,
                }
            }
            _ => false,
        })
    }
    std::iter::once(&prog.main)
        .chain(prog.functions.iter().map(|(_, f)| &f.body))
        .any(|b| {
            block(&b.block, construct)
                || b.exprs.iter().any(
                    |(_, e)| matches!(e, Expr::Builtin(id, _) if builtin(&builtins.get(*id).name)),
                )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(src: &str) -> (bool, bool) {
        let builtins = stdlib::builtins();
        let prog = lang::check_source(src, &builtins).unwrap().program;
        (uses_device(&prog, &builtins), uses_async(&prog, &builtins))
    }

    #[test]
    fn a_program_without_async_queues_needs_one() {
        let a = "let a = zeros(f32, 8);\n";
        assert_eq!(uses(a), (false, false));
        // `set` reaches a device only through other constructs.
        assert_eq!(uses("set device_num(0);\n"), (false, false));
        let sync = "let a = zeros(f32, 8);\nparallel loop for i in 0..8 { a[i] = 1.0; }\n";
        assert_eq!(uses(sync), (true, false));
        let clause = "let a = zeros(f32, 8);\nparallel loop async(1) for i in 0..8 { a[i] = 1.0; }\nwait(1);\n";
        assert_eq!(uses(clause), (true, true));
        // Inside a data region, in a function.
        let nested = "fn f(a: f32[]) {\n    data copy(a) {\n        parallel loop async(2) for i in 0..8 { a[i] = 1.0; }\n    }\n    wait;\n}\nlet a = zeros(f32, 8);\nf(a);\n";
        assert_eq!(uses(nested), (true, true));
        let builtin = "let a = zeros(f32, 8);\nenter data copyin(a);\nlet t = acc_async_test(3);\n";
        assert!(uses(builtin).1);
    }
}
