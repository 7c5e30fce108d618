//! A name that is not in scope: the diagnostic, with a similar visible
//! name when one exists (within the checker's suggestion budget).

use super::Checker;
use crate::diag::{did_you_mean_within, Diag};
use crate::span::Span;

impl Checker<'_> {
    pub(super) fn unknown_name(&mut self, name: &str, span: Span) {
        let names = if self.suggest_budget > 0 {
            self.visible_names()
        } else {
            Vec::new()
        };
        let mut d = Diag::error(
            "accl::name::unknown",
            format!("cannot find `{name}` in this scope"),
            span,
            "not found",
        );
        let budget = &mut self.suggest_budget;
        if self.in_fn && self.top_level.contains_key(name) {
            d = d.with_help(format!(
                "`{name}` is a top-level variable: a function uses it in its code, but not in a \
                 directive's clause or a compute construct; pass it as a parameter"
            ));
        } else if let Some(s) = did_you_mean_within(name, names.iter().map(String::as_str), budget)
        {
            d = d.with_help(format!("a name with a similar spelling exists: `{s}`"));
        } else if self.in_fn {
            d = d.with_help("functions see their parameters, the variables of the top level, constants and other functions; pass the value as a parameter");
        }
        self.err(d);
    }
}
