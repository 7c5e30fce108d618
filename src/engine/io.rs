//! Where output goes, whether scripts may touch files and the environment,
//! and the script's parameters.

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

    /// Send `eprint`/`eprintln` output to `sink` instead of stderr.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// let got = Rc::new(RefCell::new(String::new()));
    /// let g = got.clone();
    /// let mut e = accl::Engine::new();
    /// e.set_eprint(move |s| g.borrow_mut().push_str(s));
    /// e.eval("eprintln(\"warning: \", 2); print(1);").unwrap();
    /// assert_eq!(*got.borrow(), "warning: 2\n");
    /// ```
    pub fn set_eprint(&mut self, sink: impl FnMut(&str) + 'static) -> &mut Self {
        self.cx.err = Box::new(sink);
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

    /// The script's parameters, read by `nargs()`, `arg(i)`, `arg_i32(i)`
    /// and `arg_f64(i)` (`accl run FILE -- a b` passes them).
    ///
    /// ```
    /// let mut e = accl::Engine::new();
    /// e.set_args(["heat.npy", "100"]);
    /// assert_eq!(e.eval_as::<i32>("arg_i32(1) + nargs()").unwrap(), 102);
    /// ```
    pub fn set_args<S: AsRef<str>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Self {
        self.cx.args = args.into_iter().map(|a| a.as_ref().into()).collect();
        self
    }

    /// Let `getenv(name)` read the process environment (off by default:
    /// scripts then see every variable as unset).
    pub fn set_env_access(&mut self, on: bool) -> &mut Self {
        self.cx.env_access = on;
        self
    }
}
