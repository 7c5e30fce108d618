//! Which functions can run on the device (OpenACC `routine seq`), judged once
//! every body is checked: a function is device-legal when it does no I/O,
//! allocates nothing, holds no device construct, is not recursive and calls
//! only device-legal functions.

use super::Checker;
use crate::diag::Diag;
use crate::hir::FnH;
use crate::span::Span;

impl Checker<'_> {
    /// Record the first thing in the current function that keeps it off the device.
    pub(super) fn note_violation(&mut self, span: Span, reason: impl Into<String>) {
        if !self.in_fn {
            return;
        }
        if let Some(f) = self.body.func {
            let facts = &mut self.fn_facts[f.index()];
            if facts.violation.is_none() {
                facts.violation = Some((span, reason.into()));
            }
        }
    }

    /// Can `from` reach `to` through calls? Returns the first call on the way.
    fn reaches(&self, from: FnH, to: FnH) -> Option<Span> {
        let mut seen = vec![false; self.fn_facts.len()];
        let mut stack: Vec<(FnH, Option<Span>)> = vec![(from, None)];
        while let Some((f, first)) = stack.pop() {
            for &(g, span) in &self.fn_facts[f.index()].callees {
                let first = first.or(Some(span));
                if g == to {
                    return first;
                }
                if !seen[g.index()] {
                    seen[g.index()] = true;
                    stack.push((g, first));
                }
            }
        }
        None
    }

    pub(super) fn judge_device_calls(&mut self) {
        let n = self.fn_facts.len();
        // Recursion first: a cycle is a violation of every function on it.
        for i in 0..n {
            let f = FnH::new(i);
            if let Some(span) = self.reaches(f, f) {
                self.out.functions[f].recursive = true;
                let name = self.out.functions[f].name.clone();
                let facts = &mut self.fn_facts[i];
                if facts.violation.is_none() {
                    facts.violation = Some((
                        span,
                        format!("`{name}` is recursive (the call here leads back to it)"),
                    ));
                }
            }
        }
        // Then propagate through calls: a fixpoint over the call graph.
        let mut legal: Vec<Result<(), (Span, String)>> = self
            .fn_facts
            .iter()
            .map(|f| f.violation.clone().map_or(Ok(()), Err))
            .collect();
        // For a function illegal only through a call: the offending line at
        // the end of the call chain, so the error can point at it too.
        let mut roots: Vec<Option<(Span, String)>> = vec![None; n];
        loop {
            let mut changed = false;
            for i in 0..n {
                if legal[i].is_err() {
                    continue;
                }
                for &(g, span) in &self.fn_facts[i].callees {
                    if legal[g.index()].is_err() {
                        let gname = self.out.functions[g].name.clone();
                        roots[i] = roots[g.index()]
                            .clone()
                            .or_else(|| legal[g.index()].clone().err());
                        legal[i] = Err((
                            span,
                            format!("calls `{gname}`, which cannot run on the device"),
                        ));
                        changed = true;
                        break;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for (i, l) in legal.iter().enumerate() {
            self.out.functions[FnH::new(i)].device = l.clone();
        }
        let calls = std::mem::take(&mut self.device_calls);
        let mut reported = std::collections::HashSet::new();
        for c in calls {
            if let Err((span, reason)) = &legal[c.callee.index()] {
                if !reported.insert(c.call_span.start) {
                    continue;
                }
                let name = self.out.functions[c.callee].name.clone();
                let mut d = Diag::error(
                    "accl::device::illegal_fn",
                    format!("`{name}` cannot be called inside a device construct"),
                    c.call_span,
                    "called from device code here",
                )
                .with_label(*span, reason.clone());
                if let Some((root_span, root_reason)) = &roots[c.callee.index()] {
                    d = d.with_label(*root_span, root_reason.clone());
                }
                self.err(
                    d.with_label(c.construct_span, "device construct")
                    .with_help(format!(
                        "device functions may not print, allocate, do I/O, recurse or contain constructs; move that out of `{name}`"
                    )),
                );
            }
        }
    }
}
