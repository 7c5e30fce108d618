//! What a REPL or a tool asks of an engine: devices, the present table,
//! pending work, the last kernel.

use super::Engine;
use crate::interp::PresentRow;

/// One present section with the variable names that refer to its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentEntry {
    /// Variables holding the array (an array can have several names).
    pub names: Vec<String>,
    pub row: PresentRow,
}

impl Engine {
    /// One line per device of the backend.
    ///
    /// ```
    /// assert_eq!(accl::Engine::new().devices().len(), 1);
    /// ```
    pub fn devices(&self) -> Vec<String> {
        self.cx.backend.devices()
    }

    /// The current device number (`acc_get_device_num`).
    pub fn device(&self) -> usize {
        self.cx.device
    }

    /// Make `d` the current device, as `set device_num(d)` does.
    pub fn set_device(&mut self, d: usize) -> Result<(), String> {
        let n = self.cx.backend.num_devices();
        if d >= n {
            return Err(format!(
                "device {d} does not exist: there {} {n} device{}",
                if n == 1 { "is" } else { "are" },
                if n == 1 { "" } else { "s" }
            ));
        }
        self.cx.device = d;
        Ok(())
    }

    /// Every present section on every device, with the variables naming it.
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.eval("let a = zeros(f32, 8); enter data copyin(a[2:4]);").unwrap();
    /// let p = e.present();
    /// assert_eq!(p[0].names, ["a"]);
    /// assert_eq!((p[0].row.lo, p[0].row.hi, p[0].row.dynamic), (2, 6, 1));
    /// ```
    pub fn present(&self) -> Vec<PresentEntry> {
        self.cx
            .backend
            .present_rows(&self.cx)
            .into_iter()
            .map(|row| PresentEntry {
                names: self
                    .vars
                    .iter()
                    .filter(|v| v.array.as_ref().is_some_and(|a| a.id() == row.array))
                    .map(|v| v.name.clone())
                    .collect(),
                row,
            })
            .collect()
    }

    /// Pending device work, one line per queue (empty when idle).
    pub fn pending(&self) -> Vec<String> {
        self.cx.backend.pending()
    }

    /// Start recording a timeline trace of device work (Vulkan backend only):
    /// every kernel with its source line, copy, wait and submission.
    ///
    /// ```no_run
    /// let mut e = accl::Engine::vulkan(0).unwrap();
    /// e.start_trace().unwrap();
    /// e.eval("let a = zeros(f32, 64); parallel loop async(1) for i in 0..64 { a[i] = 1.0; } wait;").unwrap();
    /// std::fs::write("trace.json", e.stop_trace().unwrap()).unwrap();
    /// ```
    pub fn start_trace(&mut self) -> Result<(), String> {
        self.cx.backend.start_trace()
    }

    /// Wait for every queue, stop recording and return the trace in the
    /// Chrome trace-event format (JSON; Perfetto and `chrome://tracing`
    /// open it).
    pub fn stop_trace(&mut self) -> Result<String, String> {
        self.cx.backend.stop_trace()
    }

    /// Stop recording without waiting for the queues: the trace of the
    /// work finished so far, less device work that started before the
    /// trace did (the REPL's `:time` takes one per input this way; async
    /// work still running is not in it).
    ///
    /// ```no_run
    /// let mut e = accl::Engine::vulkan(0).unwrap();
    /// e.start_trace().unwrap();
    /// e.eval("let a = zeros(f32, 64); parallel loop for i in 0..64 { a[i] = 1.0; }").unwrap();
    /// let json = e.take_trace().unwrap();
    /// assert!(json.contains("kernel_0 line 1"));
    /// ```
    pub fn take_trace(&mut self) -> Result<String, String> {
        self.cx.backend.take_trace()
    }

    /// Record the device time of every operation (Vulkan backend only).
    pub fn set_profiling(&mut self, on: bool) -> Result<(), String> {
        self.cx.backend.set_profiling(on)
    }

    /// Device times of operations finished since the last call, with
    /// [`Engine::set_profiling`] on: `(label, nanoseconds)`; kernels are
    /// labelled `kernel_<n>`, transfers `copy`.
    pub fn take_device_timings(&mut self) -> Vec<(String, u64)> {
        self.cx.backend.take_timings()
    }

    /// The SPIR-V disassembly of the last kernel compiled (None on the host
    /// backend, or before any kernel ran).
    pub fn last_spirv(&self) -> Option<String> {
        self.cx.backend.last_spirv()
    }
}
