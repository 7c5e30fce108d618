//! The OpenACC V&V ports (`tests/vv/*.accl`, one per C test of the
//! OpenACCV-V suite, see docs/conformance.md): every script runs on the host
//! reference backend and on the Vulkan device (lavapipe in CI, validation
//! layer and `spirv-val` on). A script passes when it runs to its end with
//! its asserts holding (and, on the device, the validation layer silent).
//!
//! `tests/vv/expected.txt` lists the status of every script on both
//! backends; the test fails when any status differs from it, in either
//! direction, so a regression fails and so does a port that starts to pass
//! (then run `scripts/conformance`, which regenerates the list and
//! docs/conformance.md from this run's report). The report of each run is
//! `target/vv-report.tsv`: name, host, device, host reason, device reason
//! (the first line of the error: code and message).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn vv_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vv")
}

/// One backend's outcome: `Ok` when the script ran to its end, otherwise
/// the first line of its error (code: message at file:line:col).
type Outcome = Result<(), String>;

fn one_line(s: &str) -> String {
    s.lines()
        .next()
        .unwrap_or("")
        .replace('\t', " ")
        .trim()
        .to_string()
}

/// Device runs go one at a time: the validation layer CI uses (1.3.239)
/// writes a global map without a lock when an instance or device is made
/// or destroyed, while every Vulkan call of another thread reads it
/// (KhronosGroup/Vulkan-ValidationLayers#4391); two ports' engines at once
/// crashed this binary with SIGSEGV now and then.
static DEVICE_RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_one(path: &Path, device: bool) -> Outcome {
    let _one_device_run = device.then(|| DEVICE_RUNS.lock().unwrap_or_else(|e| e.into_inner()));
    let src = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let mut e = if device {
        accl::Engine::vulkan_devices(None, 0)
            .map_err(|e| format!("no Vulkan device: {}", one_line(&e.to_string())))?
    } else {
        accl::Engine::new()
    };
    e.set_fs_access(Some(dir.path().to_path_buf()));
    e.set_print(|_| {});
    // A port that hangs (a wait that never ends) fails instead of stalling CI.
    e.set_time_limit(Some(Duration::from_secs(60)));
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let result = e.eval_source(&name, &src).map(|_| ());
    let msgs = if device {
        e.take_validation_messages()
    } else {
        Vec::new()
    };
    drop(e);
    match result {
        Err(err) => Err(one_line(&err.to_string())),
        Ok(()) if !msgs.is_empty() => Err(format!("validation: {}", one_line(&msgs[0]))),
        Ok(()) => Ok(()),
    }
}

fn word(o: &Outcome) -> &'static str {
    if o.is_ok() {
        "pass"
    } else {
        "fail"
    }
}

/// `name host=pass|fail device=pass|fail reason..` per line; `#` comments.
fn expected() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(vv_dir().join("expected.txt")).unwrap_or_default();
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut w = line.split_whitespace();
        let name = w.next().unwrap().to_string();
        let host = w
            .next()
            .and_then(|s| s.strip_prefix("host="))
            .unwrap_or("?");
        let dev = w
            .next()
            .and_then(|s| s.strip_prefix("device="))
            .unwrap_or("?");
        m.insert(name, (host.to_string(), dev.to_string()));
    }
    m
}

#[test]
fn openacc_vv_ports() {
    const LVP: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
    static PIN: [(&str, &str); 1] = [("VK_ICD_FILENAMES", LVP)];
    if std::env::var_os("VK_ICD_FILENAMES").is_none()
        && std::env::var_os("VK_DRIVER_FILES").is_none()
        && Path::new(LVP).exists()
    {
        // Pinned as scripts/test pins it: the expected list is lavapipe's.
        common::set_env_once(&PIN);
    } else {
        common::set_env_once(&[]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(vv_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "accl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no tests/vv/*.accl");

    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<BTreeMap<String, (Outcome, Outcome)>> = Mutex::new(BTreeMap::new());
    // One port at a time: the ports are small. (A SIGSEGV of this binary
    // now and then was lavapipe's submit thread touching a semaphore a
    // dropped engine had destroyed; queues now drain the driver first.)
    let threads = 1;
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(path) = files.get(i) else { break };
                let name = path.file_stem().unwrap().to_string_lossy().to_string();
                let host = run_one(path, false);
                let dev = run_one(path, true);
                results.lock().unwrap().insert(name, (host, dev));
            });
        }
    });
    let results = results.into_inner().unwrap();
    let wall = start.elapsed();

    let mut tsv = String::from("name\thost\tdevice\thost_reason\tdevice_reason\n");
    for (name, (h, d)) in &results {
        tsv.push_str(&format!(
            "{name}\t{}\t{}\t{}\t{}\n",
            word(h),
            word(d),
            h.as_ref().err().map_or("", |s| s.as_str()),
            d.as_ref().err().map_or("", |s| s.as_str())
        ));
    }
    let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("vv-report.tsv");
    std::fs::write(&report, tsv).unwrap();

    let exp = expected();
    let mut diffs = Vec::new();
    for (name, (h, d)) in &results {
        match exp.get(name) {
            None => diffs.push(format!("{name}: not in tests/vv/expected.txt")),
            Some((eh, ed)) => {
                for (backend, got, want) in [("host", h, eh), ("device", d, ed)] {
                    if word(got) != want {
                        let why = match got {
                            Err(e) => format!("regression: {e}"),
                            Ok(()) => "now passes: run scripts/conformance to update \
                                       tests/vv/expected.txt and docs/conformance.md"
                                .to_string(),
                        };
                        diffs.push(format!("{name} on {backend}: expected {want}, {why}"));
                    }
                }
            }
        }
    }
    for name in exp.keys() {
        if !results.contains_key(name) {
            diffs.push(format!(
                "{name}: listed in tests/vv/expected.txt but no tests/vv/{name}.accl"
            ));
        }
    }
    let pass = |dev: bool| {
        results
            .values()
            .filter(|(h, d)| if dev { d.is_ok() } else { h.is_ok() })
            .count()
    };
    eprintln!(
        "vv: {} ports, host {} pass, device {} pass, {:.1} s on {threads} threads; report {}",
        results.len(),
        pass(false),
        pass(true),
        wall.as_secs_f64(),
        report.display()
    );
    assert!(
        diffs.is_empty(),
        "{} ports differ from tests/vv/expected.txt:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
