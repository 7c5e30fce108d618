//! Where output goes and whether scripts may touch files.

use super::Engine;
use std::path::PathBuf;

impl Engine {
    /// Send `print`/`println` output to `sink` instead of stdout.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// let out = Rc::new(RefCell::new(String::new()));
    /// let o = out.clone();
    /// let mut e = accl::Engine::new();
    /// e.set_print(move |s| o.borrow_mut().push_str(s));
    /// e.eval("println(\"x = \", 1.5);").unwrap();
    /// assert_eq!(*out.borrow(), "x = 1.5\n");
    /// ```
    pub fn set_print(&mut self, sink: impl FnMut(&str) + 'static) -> &mut Self {
        self.cx.out = Box::new(sink);
        self
    }

    /// Allow `write_png`, `load_npy*` and `save_npy`, resolving relative
    /// paths against `base` (None turns access off again, the default).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// assert_eq!(e.eval("save_npy(zeros(f32, 2), \"a.npy\");").unwrap_err().code(), "accl::run::fs_disabled");
    /// let dir = std::env::temp_dir();
    /// e.set_fs_access(Some(dir.clone()));
    /// e.eval("save_npy(zeros(f32, 2), \"accl_doc_fs.npy\");").unwrap();
    /// assert!(dir.join("accl_doc_fs.npy").exists());
    /// ```
    pub fn set_fs_access(&mut self, base: Option<PathBuf>) -> &mut Self {
        self.cx.fs = base;
        self
    }
}
