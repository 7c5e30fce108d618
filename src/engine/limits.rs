//! Limits that keep the host in control (rhai's `Limits` as data): an
//! operation budget (one operation per loop iteration and per call), a
//! progress callback that can abort, a time limit, the call depth and the
//! largest array a script may allocate. The time limit and the progress
//! callback also bound waits for the device: a wait is polled in short
//! slices, so a kernel that runs too long stops the script (the kernel
//! itself finishes on the device, bounded by its loop budget).

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
        self.cx.progress = Some(std::rc::Rc::new(std::cell::RefCell::new(f)));
        self.cx.progress_every = every.max(1);
        self
    }

    /// The deepest nesting of calls allowed (default 128; the command line
    /// uses 10,000). Calls run on a stack that grows on demand, so any
    /// depth is safe for the native stack.
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

    /// Stop each [`Engine::eval`] after `limit` of wall-clock time, host
    /// work and device waits alike (`accl::run::time_limit`); `None`: no limit.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_time_limit(Some(std::time::Duration::from_millis(50)));
    /// assert_eq!(e.eval("while true { }").unwrap_err().code(), "accl::run::time_limit");
    /// ```
    pub fn set_time_limit(&mut self, limit: Option<std::time::Duration>) -> &mut Self {
        self.cx.time_limit = limit;
        self
    }

    /// The memory limit: the largest array (`accl::run::array_limit`) or
    /// string, table or file read (`accl::run::memory_limit`) a script may
    /// make, in bytes; 0: only the built-in guard of 16 GiB. An allocation
    /// the system refuses below it is `accl::run::out_of_memory`, never an
    /// abort. Arrays the embedder passes in with [`Engine::set_array`] are
    /// not counted.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_max_array_bytes(1 << 20);
    /// assert!(e.eval("let a = zeros(f32, 1000);").is_ok());
    /// let err = e.eval("let b = zeros(f64, 1000, 1000);").unwrap_err();
    /// assert_eq!(err.code(), "accl::run::array_limit");
    /// ```
    pub fn set_max_array_bytes(&mut self, bytes: usize) -> &mut Self {
        self.cx.max_array_bytes = bytes;
        self
    }

    /// Cap the device memory the script's arrays may take on each device
    /// (`None`: the device's heap). An allocation past it is the diagnostic
    /// `accl::device::out_of_memory`, naming the array and the sizes, with
    /// the host array unchanged. No effect on the host backend.
    ///
    /// ```no_run
    /// let mut e = accl::Engine::vulkan(0).unwrap();
    /// e.set_max_device_bytes(Some(1 << 20));
    /// let err = e.eval("let a = zeros(f32, 1 << 20); data copyin(a) { }").unwrap_err();
    /// assert_eq!(err.code(), "accl::device::out_of_memory");
    /// ```
    pub fn set_max_device_bytes(&mut self, bytes: Option<u64>) -> &mut Self {
        self.cx.backend.set_device_memory_limit(bytes);
        self
    }

    /// Bounds-check mode for device kernels compiled from now on: every
    /// array index (against its axis, and the rows present on the device)
    /// and every integer divisor is checked. The first violation is the same
    /// diagnostic the host reference gives, at the index's span, and the
    /// kernel's results are not copied back. Async kernels wait for their
    /// queue in this mode. No effect on the host backend (it always checks).
    pub fn set_checks(&mut self, on: bool) -> &mut Self {
        self.cx.backend.set_checks(on);
        self
    }

    /// The loop watchdog: loop iterations (back-edges) one device kernel
    /// invocation may run before it stops with `accl::device::loop_budget`
    /// at the loop; 0 turns it off. Default 2^31. CPU drivers such as
    /// lavapipe have no watchdog of their own, so this is what stops a
    /// kernel that never ends.
    pub fn set_loop_budget(&mut self, n: u32) -> &mut Self {
        self.cx.backend.set_loop_budget(n);
        self
    }

    /// Treat the Vulkan device feature `name` (`shaderFloat64`,
    /// `shaderInt64`, `storageBuffer8BitAccess`, `shaderBufferInt64Atomics`,
    /// ...) as missing for kernels compiled from now on: a testing aid to
    /// see how a script fares on a smaller device. A kernel that needs it is
    /// then refused at compile time with `accl::compile::missing_feature`,
    /// naming the feature. `subgroups` turns off subgroup operations
    /// instead: gangs are then whole workgroups that fold through
    /// workgroup memory. `bufferDeviceAddress` makes an array larger than
    /// one binding (`maxStorageBufferRange`) be refused when it goes to the
    /// device, as on a device without buffer addresses. Pipelines compiled
    /// before are kept.
    pub fn disable_device_feature(&mut self, name: &str) -> Result<(), String> {
        self.cx.backend.disable_feature(name)
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

impl Engine {
    /// Wait for device work that is still running after an input stopped
    /// midway (by the progress callback, the time limit or Ctrl-C in the
    /// REPL): the kernels and copies it started and nobody waited for, on
    /// every device and queue.
    /// A fault of that work is returned here, with the spans of the input
    /// that started it, so that it is not reported by the next, unrelated
    /// input (which would otherwise also wait for it first). The limits
    /// bound this wait as any other: a callback that returns `false` again
    /// stops it (`accl::run::aborted`), leaving the work running.
    pub fn finish_device_work(&mut self) -> Result<(), crate::Error> {
        let b = self.cx.backend.clone();
        b.finish_all(&mut self.cx)
            .and_then(|_| b.complete_sync(&mut self.cx, None, None))
            .map_err(|d| match &self.cx.source {
                Some(m) => m.error(vec![*d]),
                None => crate::Error::api(d.code, d.message),
            })
    }
}
