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

    /// The strongly connected component of every function in the call
    /// graph (Tarjan's algorithm, with an explicit stack: a chain of calls
    /// is as long as the program). A function is on a cycle of calls when
    /// its component has another function, or it calls itself.
    fn call_components(&self) -> Vec<usize> {
        const UNSEEN: usize = usize::MAX;
        let n = self.fn_facts.len();
        let mut index = vec![UNSEEN; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut comp = vec![UNSEEN; n];
        let (mut next_index, mut next_comp) = (0, 0);
        for root in 0..n {
            if index[root] != UNSEEN {
                continue;
            }
            index[root] = next_index;
            low[root] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root] = true;
            // (function, how many of its callees are done)
            let mut dfs = vec![(root, 0usize)];
            while let Some(top) = dfs.last_mut() {
                let (v, k) = *top;
                let callees = &self.fn_facts[v].callees;
                if k < callees.len() {
                    top.1 += 1;
                    let w = callees[k].0.index();
                    if index[w] == UNSEEN {
                        index[w] = next_index;
                        low[w] = next_index;
                        next_index += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        dfs.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                dfs.pop();
                if let Some(&(u, _)) = dfs.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = next_comp;
                        if w == v {
                            break;
                        }
                    }
                    next_comp += 1;
                }
            }
        }
        comp
    }

    /// Linear in the functions and calls (a fixpoint and a search per
    /// function were quadratic: seconds for 40,000 one-line functions).
    pub(super) fn judge_device_calls(&mut self) {
        let n = self.fn_facts.len();
        // Recursion first: a cycle is a violation of every function on it.
        let comp = self.call_components();
        for i in 0..n {
            let f = FnH::new(i);
            // The call that leads back: one of itself, else the first call
            // of a function on its cycle.
            let callees = &self.fn_facts[i].callees;
            let back = callees
                .iter()
                .find(|c| c.0 == f)
                .or_else(|| callees.iter().find(|c| comp[c.0.index()] == comp[i]));
            if let Some(&(_, span)) = back {
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
        // Then through calls: every function that calls an illegal one is
        // illegal, found by a search backwards along the calls.
        let mut legal: Vec<Result<(), (Span, String)>> = self
            .fn_facts
            .iter()
            .map(|f| f.violation.clone().map_or(Ok(()), Err))
            .collect();
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, f) in self.fn_facts.iter().enumerate() {
            for &(g, _) in &f.callees {
                callers[g.index()].push(i);
            }
        }
        let mut illegal: Vec<bool> = legal.iter().map(Result::is_err).collect();
        let mut work: Vec<usize> = (0..n).filter(|&i| illegal[i]).collect();
        while let Some(g) = work.pop() {
            for &i in &callers[g] {
                if !illegal[i] {
                    illegal[i] = true;
                    work.push(i);
                }
            }
        }
        // A function illegal only through calls points at its first call of
        // an illegal function; `roots` holds the offending line at the end
        // of that chain, so the error can point at it too. (The chains end:
        // a cycle among them would be recursion, a violation of its own.)
        let via: Vec<Option<(FnH, Span)>> = (0..n)
            .map(|i| {
                if legal[i].is_err() || !illegal[i] {
                    return None;
                }
                self.fn_facts[i]
                    .callees
                    .iter()
                    .find(|c| illegal[c.0.index()])
                    .copied()
            })
            .collect();
        let mut roots: Vec<Option<(Span, String)>> = vec![None; n];
        let mut chain = Vec::new();
        for i in 0..n {
            if via[i].is_none() || roots[i].is_some() {
                continue;
            }
            // Walk to a function with its own violation or a known root.
            let mut end = i;
            while let Some((g, _)) = via[end] {
                if roots[end].is_some() {
                    break;
                }
                chain.push(end);
                end = g.index();
            }
            let root = roots[end].clone().or_else(|| legal[end].clone().err());
            for j in chain.drain(..) {
                roots[j] = root.clone();
            }
        }
        for i in 0..n {
            if let Some((g, span)) = via[i] {
                let gname = &self.out.functions[g].name;
                legal[i] = Err((
                    span,
                    format!("calls `{gname}`, which cannot run on the device"),
                ));
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
                        "device functions may not print, allocate, do I/O, recurse, contain constructs or use top-level variables; move that out of `{name}`"
                    )),
                );
            }
        }
    }
}
