//! Limits that keep the host in control (rhai's `Limits` as data): an
//! operation budget (one operation per loop iteration and per call), a
//! progress callback that can abort, and the call depth.

use super::Engine;

impl Engine {
    /// Stop a script after `n` operations (loop iterations and calls) per
    /// [`Engine::eval`]; 0 means no limit.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_max_operations(10_000);
    /// let err = e.eval("while true { }").unwrap_err();
    /// assert_eq!(err.code(), "accl::run::operation_limit");
    /// ```
    pub fn set_max_operations(&mut self, n: u64) -> &mut Self {
        self.cx.max_ops = n;
        self
    }

    /// Call `f(operations so far)` every `every` operations; returning
    /// `false` stops the script with `accl::run::aborted`.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.on_progress(1000, |ops| ops < 5000);
    /// assert_eq!(e.eval("for i in 0..100000 { }").unwrap_err().code(), "accl::run::aborted");
    /// ```
    pub fn on_progress(&mut self, every: u64, f: impl FnMut(u64) -> bool + 'static) -> &mut Self {
        self.cx.progress = Some(Box::new(f));
        self.cx.progress_every = every.max(1);
        self
    }

    /// The deepest nesting of calls allowed (default 128).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_max_call_depth(10);
    /// let err = e.eval("fn f(n: i32) -> i32 { if n == 0 { return 0; } return f(n - 1); } f(20)").unwrap_err();
    /// assert_eq!(err.code(), "accl::run::recursion_limit");
    /// ```
    pub fn set_max_call_depth(&mut self, n: usize) -> &mut Self {
        self.cx.max_depth = n;
        self
    }

    /// Operations counted by the last [`Engine::eval`].
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("for i in 0..10 { }").unwrap();
    /// assert_eq!(e.operations(), 10);
    /// ```
    pub fn operations(&self) -> u64 {
        self.cx.ops
    }
}
