//! Records the git commit the crate is built from, for `accl --version`:
//! `ACCL_GIT_COMMIT` is `git rev-parse --short HEAD`, or `unknown` outside
//! a git checkout of this crate (a crates.io download, no git installed).

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    // Only a checkout of this crate: not a repository that happens to
    // enclose an unpacked copy of it.
    let ours = git(&dir, &["rev-parse", "--show-toplevel"])
        .and_then(|t| std::fs::canonicalize(t).ok())
        .is_some_and(|t| std::fs::canonicalize(&dir).is_ok_and(|d| d == t));
    let commit = ours
        .then(|| git(&dir, &["rev-parse", "--short", "HEAD"]))
        .flatten()
        .unwrap_or_else(|| "unknown".to_string());
    if ours {
        // Built again when HEAD moves: a commit, a checkout, a new branch tip.
        let mut watch = Vec::new();
        if let Some(d) = git(&dir, &["rev-parse", "--git-dir"]) {
            watch.push(dir.join(d).join("HEAD"));
        }
        if let Some(common) = git(&dir, &["rev-parse", "--git-common-dir"]) {
            let common = dir.join(common);
            if let Some(r) = git(&dir, &["rev-parse", "--symbolic-full-name", "HEAD"]) {
                watch.push(common.join(r));
            }
            watch.push(common.join("packed-refs"));
        }
        for p in watch.iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    println!("cargo:rustc-env=ACCL_GIT_COMMIT={commit}");
}
