//! Evaluating source text: parse, check against the kept state, compile,
//! run, and commit the new state only when every step succeeded.

use super::sources::{Decl, SourceMap};
use super::{Engine, Error, Val, Var};
use crate::interp::{self, Frame};
use lang::ast::StmtKind as AK;
use lang::hir::StmtKind;
use lang::Global;
use std::path::Path;

impl Engine {
    /// Evaluate `src` (statements, optionally ending in an expression
    /// without `;` whose value is returned). Variables, functions and
    /// constants persist to later calls; on error nothing new is kept.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("fn sq(x: f64) -> f64 { return x * x; } const K = 3.0;").unwrap();
    /// let v = e.eval("sq(K)").unwrap().unwrap();
    /// assert_eq!(v.to_string(), "9");
    /// assert!(e.eval("let y: i32 = 1.5;").is_err());
    /// assert!(e.get::<i32>("y").is_none());
    /// ```
    pub fn eval(&mut self, src: &str) -> Result<Option<Val>, Error> {
        self.name_counter += 1;
        let name = format!("<input {}>", self.name_counter);
        self.eval_named(&name, src)
    }

    /// Read and run a script file (with the same persistence as [`Engine::eval`]).
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("accl_doc_run_file");
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let f = dir.join("t.accl");
    /// std::fs::write(&f, "let n = len(zeros(u8, 7));").unwrap();
    /// let mut e = accl::Engine::new();
    /// e.run_file(&f).unwrap();
    /// assert_eq!(e.get::<i32>("n"), Some(7));
    /// ```
    pub fn run_file(&mut self, path: impl AsRef<Path>) -> Result<Option<Val>, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::api(
                "accl::run::io",
                format!("cannot read `{}`: {e}", path.display()),
            )
        })?;
        self.eval_named(&path.display().to_string(), &text)
    }

    /// Like [`Engine::eval`], naming the source in diagnostics.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// let err = e.eval_source("demo.accl", "let x = 1 / 0;").unwrap_err();
    /// assert!(err.render(80).contains("demo.accl"));
    /// ```
    pub fn eval_source(&mut self, name: &str, src: &str) -> Result<Option<Val>, Error> {
        self.eval_named(name, src)
    }

    /// Parse and check `src` against the kept state: the checked text
    /// (earlier declarations in front) with where its pieces came from,
    /// the AST and the checked program.
    fn front_end(&self, name: &str, src: &str) -> Result<Prepared, Error> {
        // Earlier declarations go in front of the input, less those it declares again.
        let (own, _) = lang::parse(src);
        let redeclared: std::collections::HashSet<&str> =
            own.stmts.iter().filter_map(decl_name).collect();
        let map = SourceMap::new(
            name,
            src,
            self.decls
                .iter()
                .filter(|d| !redeclared.contains(&d.name.as_str())),
        );
        let (ast, diags) = lang::parse(&map.text);
        if !diags.is_empty() {
            return Err(map.error(diags));
        }
        let globals: Vec<Global> = self
            .vars
            .iter()
            .map(|v| Global {
                name: v.name.clone(),
                ty: v.ty,
            })
            .collect();
        let prog = match lang::check(&ast, &map.text, &self.builtins, &globals) {
            Ok(c) => c.program,
            Err(d) => return Err(map.error(d)),
        };
        Ok(Prepared { map, ast, prog })
    }

    /// How the compute constructs of `src` would map onto the device (the
    /// `--explain` report), in the current state, without running it.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let y = zeros(f32, 8);").unwrap();
    /// let r = e.explain("parallel loop for i in 0..8 { y[i] = 1.0; }").unwrap();
    /// assert!(r.contains("one iteration per lane"));
    /// ```
    pub fn explain(&self, src: &str) -> Result<String, Error> {
        let p = self.front_end("<input>", src)?;
        Ok(crate::explain::report(
            "<input>",
            &p.map.text,
            p.map.offset,
            &p.prog,
            &self.builtins,
            None,
        ))
    }

    /// The type of expression `src` in the current state, without running it.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let a = zeros(f64, 3, 4);").unwrap();
    /// assert_eq!(e.type_of("a[1, 2] * 2.0").unwrap().to_string(), "f64");
    /// assert_eq!(e.type_of("a").unwrap().to_string(), "f64[,]");
    /// ```
    pub fn type_of(&self, src: &str) -> Result<lang::Type, Error> {
        let p = self.front_end("<type>", src)?;
        match p.prog.tail {
            Some(t) => Ok(p.prog.main.types[t.index()]),
            None => Err(Error::api(
                "accl::type::not_an_expression",
                format!("`{}` is not an expression", src.trim()),
            )),
        }
    }

    fn eval_named(&mut self, name: &str, src: &str) -> Result<Option<Val>, Error> {
        let Prepared { map, ast, prog } = {
            let t = std::time::Instant::now();
            let p = self.front_end(name, src);
            self.timings = super::Timings {
                check: t.elapsed(),
                ..Default::default()
            };
            p?
        };
        let t = std::time::Instant::now();
        let compiled = interp::compile(&prog, &self.builtins);
        self.cx.backend.prefetch(&compiled.kernels, &self.cx);
        self.timings.compile = t.elapsed();
        let mut fr = Frame::new(compiled.main_locals);
        for (v, l) in self.vars.iter().zip(&prog.globals) {
            fr.s[l.index()] = v.bits;
            fr.a[l.index()] = v.array.clone();
            fr.t[l.index()] = v.text.clone();
        }
        self.cx.ops = 0;
        let map = std::rc::Rc::new(map);
        self.cx.source = Some(map.clone());
        let t = std::time::Instant::now();
        self.cx.backend.take_jit_time();
        let out = interp::run(&compiled, &mut fr, &mut self.cx);
        let jit = self.cx.backend.take_jit_time();
        self.timings.compile += jit;
        self.timings.run = t.elapsed().saturating_sub(jit);
        let out = out.map_err(|d| map.error(vec![*d]))?;
        // Commit: globals' new values, new top-level variables, declarations.
        for (v, l) in self.vars.iter_mut().zip(&prog.globals) {
            v.bits = fr.s[l.index()];
            v.array = fr.a[l.index()].clone();
            v.text = fr.t[l.index()].clone();
        }
        // By name, so that keeping an input's many declarations is linear.
        let mut var_at: std::collections::HashMap<String, usize> = self
            .vars
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.clone(), i))
            .collect();
        for st in &prog.main.block {
            if let StmtKind::Let { local, .. } = st.kind {
                let loc = &prog.main.locals[local];
                let var = Var {
                    name: loc.name.clone(),
                    ty: loc.ty,
                    bits: fr.s[local.index()],
                    array: fr.a[local.index()].clone(),
                    text: fr.t[local.index()].clone(),
                };
                match var_at.get(&var.name) {
                    Some(&i) => self.vars[i] = var,
                    None => {
                        var_at.insert(var.name.clone(), self.vars.len());
                        self.vars.push(var);
                    }
                }
            }
        }
        let mut decl_at: std::collections::HashMap<String, usize> = self
            .decls
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i))
            .collect();
        for s in &ast.stmts {
            let Some(n) = decl_name(s) else { continue };
            let Some(at) = (s.span.start as usize).checked_sub(map.offset) else {
                continue;
            };
            let mut text = map.text[s.span.range()].to_string();
            if !text.trim_end().ends_with(';') && !text.trim_end().ends_with('}') {
                text.push(';');
            }
            let decl = Decl {
                name: n.to_string(),
                text,
                input: map.input.clone(),
                at,
            };
            match decl_at.get(n) {
                Some(&i) => self.decls[i] = decl,
                None => {
                    decl_at.insert(n.to_string(), self.decls.len());
                    self.decls.push(decl);
                }
            }
        }
        Ok(out.filter(|v| !matches!(v, Val::Unit)))
    }
}

/// The name a top-level `fn` or `const` declares.
fn decl_name(s: &lang::ast::Stmt) -> Option<&str> {
    match &s.kind {
        AK::Fn(f) => Some(&f.name.name),
        AK::Const { name, .. } => Some(&name.name),
        _ => None,
    }
}

struct Prepared {
    map: SourceMap,
    ast: lang::ast::Program,
    prog: lang::hir::Program,
}
