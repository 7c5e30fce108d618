//! Function signatures, declared before any body is checked (functions
//! are hoisted): name, parameters, result and `routine` level.

use super::{type_of, Checker, FnFacts};
use crate::ast;
use crate::diag::Diag;
use crate::hir;
use crate::span::Span;
use crate::types::Type;
use std::collections::HashMap;

impl Checker<'_> {
    pub(super) fn declare_fn(&mut self, f: &ast::FnDecl) {
        let name = &f.name.name;
        if self.builtins.lookup(name).is_some() {
            self.err(
                Diag::error(
                    "accl::name::shadows_builtin",
                    format!("function `{name}` has the name of a builtin"),
                    f.name.span,
                    "builtin name",
                )
                .with_help("choose another name"),
            );
            return;
        }
        if let Some(&prev) = self.fn_names.get(name) {
            let prev_span = self.out.functions[prev].span;
            self.err(
                Diag::error(
                    "accl::name::duplicate_fn",
                    format!("function `{name}` is defined twice"),
                    f.name.span,
                    "second definition",
                )
                .with_label(self.fn_name_span(prev_span), "first defined here"),
            );
            return;
        }
        let mut params_seen: HashMap<&str, Span> = HashMap::new();
        for p in &f.params {
            if let Some(prev) = params_seen.insert(&p.name.name, p.name.span) {
                self.err(
                    Diag::error(
                        "accl::name::duplicate_param",
                        format!("parameter `{}` is declared twice", p.name.name),
                        p.name.span,
                        "second declaration",
                    )
                    .with_label(prev, "first here"),
                );
            }
        }
        let ret = f.ret.map(type_of).unwrap_or(Type::Unit);
        let returns_array = ret.is_array();
        let level = match &f.routine {
            None => hir::Level::Seq,
            Some(w) => hir::Level::from_name(&w.name).unwrap_or_else(|| {
                self.err(
                    Diag::error(
                        "accl::device::routine_level",
                        format!("`{}` is not a routine level", w.name),
                        w.span,
                        "unknown level",
                    )
                    .with_help("routine levels are `gang`, `worker`, `vector` and `seq`"),
                );
                hir::Level::Seq
            }),
        };
        let h = self.out.functions.append(
            hir::Function {
                name: name.clone(),
                params: Vec::new(),
                ret,
                body: hir::Body::default(),
                span: f.span,
                device: Ok(()),
                recursive: false,
                level,
                globals: Vec::new(),
            },
            f.span,
        );
        // Parameter types are recorded as locals when the body is checked; keep
        // the written types here so calls can be checked before that.
        let params = f
            .params
            .iter()
            .map(|p| self.value_type(p.ty, "parameter"))
            .collect();
        self.fn_param_tys.push(params);
        self.fn_facts.push(FnFacts {
            violation: returns_array.then(|| {
                (
                    f.ret.map(|t| t.span).unwrap_or(f.name.span),
                    "returns an array".to_string(),
                )
            }),
            callees: Vec::new(),
            globals: Vec::new(),
            written_params: Vec::new(),
            passed_params: Vec::new(),
            nohost: false,
            bind: None,
        });
        self.routine_clauses(f, h);
        self.fn_names.insert(name.clone(), h);
    }
}
