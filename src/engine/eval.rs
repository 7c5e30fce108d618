//! Evaluating source text: parse, check against the kept state, compile,
//! run, and commit the new state only when every step succeeded.

use super::compiled::{OwnDecl, Prepared};
use super::sources::{Decl, SourceMap};
use super::{Engine, Error, Val};
use lang::ast::StmtKind as AK;
use lang::{Global, Source};
use std::collections::{HashMap, HashSet};
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

    /// Parse and check `src` against the kept state: the checked text (the
    /// earlier declarations it needs in front) with where its pieces came
    /// from, the checked program and the input's own declarations.
    ///
    /// Only the declarations the input can reach are checked with it: those
    /// it names, those they name, and so on, plus every declaration that
    /// (transitively) names one the input declares again, since a
    /// replacement must still fit its callers. The others cannot change the
    /// outcome, so a session with hundreds of declarations does not check
    /// them all at every input. An input that fails is checked again with
    /// every declaration, for the diagnostics a full check gives (did you
    /// mean, ...).
    ///
    /// The files the input imports (relative paths start at the folder of
    /// `name` when it is a path, else the current folder) are checked in
    /// front of it, after the earlier declarations, unless an earlier
    /// input of this engine imported them.
    pub(super) fn front_end(&self, name: &str, src: &str) -> Result<Prepared, Error> {
        let files = self.imports_of(name, src)?;
        let mut own_decls: Vec<OwnDecl> = Vec::new();
        for f in &files {
            own_decls.extend(decls_of(&f.source.text, Some(&f.source)));
        }
        own_decls.extend(decls_of(src, None));
        let imported: Vec<Decl> = files
            .iter()
            .map(|f| Decl {
                name: String::new(),
                text: f.source.text.to_string(),
                input: f.source.clone(),
                at: 0,
            })
            .collect();
        let redeclared: HashSet<&str> = own_decls.iter().map(|d| d.name.as_str()).collect();
        let mut reach = String::new();
        for f in &files {
            reach.push_str(&f.source.text);
            reach.push('\n');
        }
        reach.push_str(src);
        let needed = self.needed_decls(&reach, &redeclared);
        let paths = || files.iter().map(|f| f.path.clone()).collect();
        match self.front_end_with(name, src, &imported, &redeclared, Some(&needed)) {
            Ok(mut p) => {
                p.decls = own_decls;
                p.imported = paths();
                Ok(p)
            }
            Err(e) if needed.len() < self.decls.len() => {
                match self.front_end_with(name, src, &imported, &redeclared, None) {
                    Err(full) => Err(full),
                    Ok(_) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// The files `src` (named `name`) imports that this engine has not run.
    fn imports_of(&self, name: &str, src: &str) -> Result<Vec<lang::imports::Imported>, Error> {
        if !src.contains("import") {
            return Ok(Vec::new());
        }
        let dir = Path::new(name)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        lang::imports::gather(
            &Source::new(name, src),
            dir,
            &self.imported,
            &mut lang::imports::read_file,
        )
        .map_err(|e| Error {
            diags: e.diags,
            source: e.source,
        })
    }

    /// Which earlier declarations the input can reach (by index).
    fn needed_decls(&self, src: &str, redeclared: &HashSet<&str>) -> HashSet<usize> {
        let mut needed = HashSet::new();
        if self.decls.is_empty() {
            return needed;
        }
        let at: HashMap<&str, usize> = self
            .decls
            .iter()
            .enumerate()
            .filter(|(_, d)| !redeclared.contains(d.name.as_str()))
            .map(|(i, d)| (d.name.as_str(), i))
            .collect();
        let mut todo: Vec<usize> = Vec::new();
        // Callers of what the input declares again, and their callers.
        if !redeclared.is_empty() {
            let mut callers: HashMap<&str, Vec<usize>> = HashMap::new();
            for &i in at.values() {
                for x in &self.decl_idents[i] {
                    callers.entry(x.as_str()).or_default().push(i);
                }
            }
            let mut changed: Vec<&str> = redeclared.iter().copied().collect();
            while let Some(n) = changed.pop() {
                for &i in callers.get(n).map(Vec::as_slice).unwrap_or_default() {
                    if needed.insert(i) {
                        todo.push(i);
                        changed.push(self.decls[i].name.as_str());
                    }
                }
            }
        }
        // What the input names, and what that names.
        for x in super::program::lang_idents(src) {
            if let Some(&i) = at.get(x.as_str()) {
                if needed.insert(i) {
                    todo.push(i);
                }
            }
        }
        while let Some(i) = todo.pop() {
            for x in &self.decl_idents[i] {
                if let Some(&j) = at.get(x.as_str()) {
                    if needed.insert(j) {
                        todo.push(j);
                    }
                }
            }
        }
        needed
    }

    /// The front end with the declarations `needed` (None: all) in front.
    fn front_end_with(
        &self,
        name: &str,
        src: &str,
        imported: &[Decl],
        redeclared: &HashSet<&str>,
        needed: Option<&HashSet<usize>>,
    ) -> Result<Prepared, Error> {
        let earlier = self.decls.iter().enumerate().filter_map(|(i, d)| {
            (!redeclared.contains(d.name.as_str()) && needed.is_none_or(|s| s.contains(&i)))
                .then_some(d)
        });
        let map = SourceMap::new(name, src, earlier.chain(imported));
        let (ast, diags) = lang::parse(&map.text);
        let globals: Vec<Global> = self
            .vars
            .iter()
            .map(|v| Global {
                name: v.name.clone(),
                ty: v.ty,
                constant: v.constant,
            })
            .collect();
        if !diags.is_empty() {
            let all = lang::after_parse_errors(&ast, &map.text, &self.builtins, &globals, diags);
            return Err(map.error(all));
        }
        let prog = match lang::check(&ast, &map.text, &self.builtins, &globals) {
            Ok(c) => c.program,
            Err(d) => return Err(map.error(d)),
        };
        Ok(Prepared {
            map,
            prog,
            decls: Vec::new(),
            imported: Vec::new(),
        })
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
        // Parsing, checking, compiling and running recurse as deep as the
        // input's expressions and calls: on a large stack segment.
        lang::stack::large(|| self.eval_named_here(name, src))
    }

    fn eval_named_here(&mut self, name: &str, src: &str) -> Result<Option<Val>, Error> {
        let t = std::time::Instant::now();
        let p = self.front_end(name, src);
        self.timings = super::Timings {
            check: t.elapsed(),
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let p = self.finish_compile(p?);
        self.timings.compile = t.elapsed();
        let r = self.run_program(&p);
        self.release_unreachable();
        r
    }

    /// Keep the declarations of an input (`input`) that ran: a name
    /// declared again replaces the earlier one in place.
    pub(super) fn keep_decls(&mut self, decls: &[OwnDecl], input: &Source) {
        if decls.is_empty() {
            return;
        }
        self.decl_gen += 1;
        let mut at: HashMap<String, usize> = self
            .decls
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i))
            .collect();
        for d in decls {
            let idents = super::program::lang_idents(&d.text);
            let decl = Decl {
                name: d.name.clone(),
                text: d.text.clone(),
                input: d.from.clone().unwrap_or_else(|| input.clone()),
                at: d.at,
            };
            match at.get(&d.name) {
                Some(&i) => {
                    self.decls[i] = decl;
                    self.decl_idents[i] = idents;
                }
                None => {
                    at.insert(d.name.clone(), self.decls.len());
                    self.decls.push(decl);
                    self.decl_idents.push(idents);
                }
            }
        }
    }
}

/// The top-level `fn` and `const` declarations of `src` (the text of the
/// imported file `from`, or of the input).
fn decls_of(src: &str, from: Option<&Source>) -> Vec<OwnDecl> {
    let (own, _) = lang::parse(src);
    own.stmts
        .iter()
        .filter_map(|s| {
            let n = decl_name(s)?;
            let mut text = src.get(s.span.range())?.to_string();
            if !text.trim_end().ends_with(';') && !text.trim_end().ends_with('}') {
                text.push(';');
            }
            Some(OwnDecl {
                name: n.to_string(),
                text,
                at: s.span.start as usize,
                from: from.cloned(),
            })
        })
        .collect()
}

/// The name a top-level `fn` or `const` declares.
fn decl_name(s: &lang::ast::Stmt) -> Option<&str> {
    match &s.kind {
        AK::Fn(f) => Some(&f.name.name),
        AK::Const { name, .. } => Some(&name.name),
        _ => None,
    }
}
