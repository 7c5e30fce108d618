//! Device tests: run a script on the Vulkan backend (lavapipe in CI) and on
//! the host reference, then compare every variable. The validation layer is
//! on (`scripts/test` sets `ACCL_VALIDATION=1`; these helpers turn it on
//! too) and any message fails the test.
#![allow(dead_code)]

use accl::lang::{Scalar, Type};
use accl::Engine;
use std::cell::RefCell;
use std::rc::Rc;

/// What one run left behind.
pub struct Run {
    pub engine: Engine,
    pub result: Result<(), accl::Error>,
    pub out: Rc<RefCell<String>>,
    _dir: tempfile::TempDir,
}

/// A host engine, or one on the test machine's device (as
/// [`device_engine`]).
pub fn engine(device: bool) -> Engine {
    engine_on(device, None)
}

/// Sets the environment every engine of this test binary runs with, once,
/// before the first engine opens: `setenv` in one test thread while another
/// is inside the Vulkan loader or driver (which call `getenv`) is undefined
/// behaviour and can crash the process. `extra` holds the settings special
/// to one binary; every test of that binary must pass the same ones, before
/// it makes an engine.
pub fn set_env_once(extra: &'static [(&'static str, &'static str)]) {
    static SET: std::sync::OnceLock<&'static [(&'static str, &'static str)]> =
        std::sync::OnceLock::new();
    let first = SET.get_or_init(|| {
        let base = [
            // Validation on for every device engine of the tests ...
            ("ACCL_VALIDATION", "1"),
            // ... and `spirv-val` on every module the backend generates.
            ("ACCL_SPIRV_VAL", "1"),
            // Pipeline caches of test runs stay out of the user's cache.
            ("ACCL_CACHE_DIR", "off"),
        ];
        for (k, v) in base.iter().chain(extra) {
            // `scripts/test` exports the base settings: then nothing is set.
            if std::env::var_os(k).is_none_or(|now| now != *v) {
                std::env::set_var(k, v);
            }
        }
        extra
    });
    assert!(
        extra.is_empty() || *first == extra,
        "this test binary's environment was set up with {first:?}, not {extra:?}: \
         set the same settings first in every test"
    );
}

/// Device engines of one test process run one test at a time. The Khronos
/// validation layer this CI uses (1.3.239) keeps a global map from each
/// dispatchable handle to its state, which `GetLayerDataPtr` reads on every
/// Vulkan call and writes when an instance or device is created or
/// destroyed, without a lock (KhronosGroup/Vulkan-ValidationLayers#4391,
/// later fixed with a shared mutex): a test thread opening or closing its
/// validated engine while another thread's engine is busy could crash the
/// whole test binary (the SIGSEGV seen once in `host_races` under load).
/// The first device engine of a test takes this lock; the test's thread
/// gives it back when it ends, after its engines are dropped.
fn hold_device_lock() {
    use std::sync::{Mutex, MutexGuard};
    static DEVICE_TESTS: Mutex<()> = Mutex::new(());
    thread_local! {
        static HELD: RefCell<Option<MutexGuard<'static, ()>>> = const { RefCell::new(None) };
    }
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        if h.is_none() {
            *h = Some(DEVICE_TESTS.lock().unwrap_or_else(|e| e.into_inner()));
        }
    });
}

fn engine_on(device: bool, devices: Option<&str>) -> Engine {
    set_env_once(&[]);
    if device {
        hold_device_lock();
        Engine::vulkan_devices(devices, 0)
            .unwrap_or_else(|e| panic!("no Vulkan device: {}", e.render(100)))
    } else {
        Engine::new()
    }
}

/// A device engine as the tests make them (validation and `spirv-val` on).
pub fn device_engine() -> Engine {
    engine_on(true, None)
}

/// The Chrome trace (`Engine::start_trace`) of a device run of `src`,
/// parsed; the run must succeed with the validation layer silent.
pub fn trace_of(src: &str) -> serde_json::Value {
    let mut e = device_engine();
    e.start_trace().unwrap();
    e.eval(src).unwrap_or_else(|d| panic!("{}", d.render(100)));
    let json = e.stop_trace().unwrap();
    assert!(e.take_validation_messages().is_empty());
    serde_json::from_str(&json).unwrap()
}

/// The events of the Chrome trace of a device run of `src` (see
/// [`trace_of`]).
pub fn trace_events(src: &str) -> Vec<serde_json::Value> {
    match trace_of(src)["traceEvents"].take() {
        serde_json::Value::Array(v) => v,
        other => panic!("a trace without an event list: {other}"),
    }
}

/// The diagnostics of a program that must fail, as the user sees them
/// (`render_plain` at 80 columns; host backend).
pub fn rendered_failure(src: &str) -> String {
    let mut e = Engine::new();
    e.set_print(|_| {});
    match e.eval_source("test.accl", src) {
        Ok(_) => panic!("expected an error from:\n{src}"),
        Err(err) => lang::diag::render_plain(&err.source, &err.diags, 80),
    }
}

/// Run `src` on the device (`true`) or the host reference.
pub fn run(src: &str, device: bool) -> Run {
    run_on(src, device, None)
}

/// Run `src` on the Vulkan devices `devices` (`ACCL_DEVICES` syntax: `"0,0"`
/// is two logical devices on device 0).
pub fn run_devices(src: &str, devices: &str) -> Run {
    run_on(src, true, Some(devices))
}

/// Run `src` on the device (`true`) or the host reference with the script
/// parameters `args` (`arg(i)`).
pub fn run_args(src: &str, device: bool, args: &[&str]) -> Run {
    run_configured(src, device, None, |e| {
        e.set_args(args);
    })
}

fn run_on(src: &str, device: bool, devices: Option<&str>) -> Run {
    run_configured(src, device, devices, |_| {})
}

/// Run `src` on the device with the device features named treated as
/// missing (`Engine::disable_device_feature`).
pub fn run_without(src: &str, features: &[&str]) -> Run {
    run_configured(src, true, None, |e| {
        for f in features {
            e.disable_device_feature(f).unwrap();
        }
    })
}

/// [`run`] with `configure` applied to the engine first (host arrays set
/// from Rust, say).
pub fn run_with(src: &str, device: bool, configure: impl FnOnce(&mut Engine)) -> Run {
    run_configured(src, device, None, configure)
}

fn run_configured(
    src: &str,
    device: bool,
    devices: Option<&str>,
    configure: impl FnOnce(&mut Engine),
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let out = Rc::new(RefCell::new(String::new()));
    let o = out.clone();
    let mut e = engine_on(device, devices);
    configure(&mut e);
    e.set_fs_access(Some(dir.path().to_path_buf()));
    e.set_print(move |s| o.borrow_mut().push_str(s));
    let result = e.eval_source("test.accl", src).map(|_| ());
    let msgs = e.take_validation_messages();
    assert!(msgs.is_empty(), "validation messages:\n{}", msgs.join("\n"));
    Run {
        engine: e,
        result,
        out,
        _dir: dir,
    }
}

/// How close float results must be.
#[derive(Clone, Copy, Debug)]
pub enum Floats {
    /// Bit for bit.
    Exact,
    /// Relative error at most this (absolute near zero), for results whose
    /// operations run in another order on the device (reductions) or whose
    /// functions are not correctly rounded there (f32 transcendentals).
    Within(f64),
}

/// Run `src` on both backends and require that both succeed with the same
/// values of every variable (integers and booleans bit for bit, floats as
/// `floats` says): a variable one engine has and the other lacks is a
/// failure. Two runs that fail alike are a failure too (a script that is
/// meant to fail uses [`same_failure`]). The caller still checks the known
/// answer where there is one: a bug both backends share (parser, checker,
/// stdlib) is invisible to this comparison.
pub fn same_as_host(src: &str, floats: Floats) -> (Run, Run) {
    let host = run(src, false);
    let dev = run(src, true);
    match (&host.result, &dev.result) {
        (Ok(()), Ok(())) => {}
        (Err(h), Err(d)) => panic!(
            "fails on both backends:\nhost:\n{}\ndevice:\n{}",
            h.render(100),
            d.render(100)
        ),
        (Err(h), Ok(())) => panic!("fails on the host only:\n{}", h.render(100)),
        (Ok(()), Err(d)) => panic!("fails on the device only:\n{}", d.render(100)),
    }
    compare_all(&host, &dev, floats);
    (host, dev)
}

/// Every variable of either run, compared; one missing from the other
/// engine is a failure.
fn compare_all(host: &Run, dev: &Run, floats: Floats) {
    let hv = host.engine.variables();
    let dv = dev.engine.variables();
    for (name, ty) in &dv {
        assert!(
            hv.iter().any(|(n, t)| n == name && t == ty),
            "`{name}: {ty:?}` is on the device engine only"
        );
    }
    for (name, ty) in hv {
        assert!(
            dv.iter().any(|(n, t)| *n == name && *t == ty),
            "`{name}: {ty:?}` is on the host engine only"
        );
        compare_var(&host.engine, &dev.engine, &name, ty, floats);
    }
}

/// Run `src`, which must fail, on both backends: the same error codes,
/// `code` first.
pub fn same_failure(src: &str, code: &str) -> (Run, Run) {
    let host = run(src, false);
    let dev = run(src, true);
    match (&host.result, &dev.result) {
        (Err(h), Err(d)) => {
            assert_eq!(h.code(), code, "host:\n{}", h.render(100));
            assert_eq!(
                h.diags.iter().map(|x| x.code).collect::<Vec<_>>(),
                d.diags.iter().map(|x| x.code).collect::<Vec<_>>(),
                "host and device fail differently:\nhost:\n{}\ndevice:\n{}",
                h.render(100),
                d.render(100)
            );
        }
        _ => panic!(
            "expected {code} on both backends; host ok: {}, device ok: {}",
            host.result.is_ok(),
            dev.result.is_ok()
        ),
    }
    (host, dev)
}

/// Require the same values of the variables `names` in two finished runs,
/// floats as `floats` says.
pub fn same_values(a: &Run, b: &Run, names: &[&str], floats: Floats) {
    a.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    b.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    let vars = a.engine.variables();
    for n in names {
        let Some((name, ty)) = vars.iter().find(|(v, _)| v == n) else {
            panic!("`{n}` is not a variable of the first run");
        };
        compare_var(&a.engine, &b.engine, name, *ty, floats);
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

fn compare_var(h: &Engine, d: &Engine, name: &str, ty: Type, floats: Floats) {
    if ty == Type::Str {
        assert_eq!(
            h.get_str(name),
            d.get_str(name),
            "`{name}` differs (host vs device)"
        );
        return;
    }
    match ty.scalar() {
        Some(s) if !ty.is_array() => {
            let (a, b) = (h.get_value(name).unwrap(), d.get_value(name).unwrap());
            match (s, floats) {
                (Scalar::F32 | Scalar::F64, Floats::Within(t)) => assert!(
                    close(a.as_f64().unwrap(), b.as_f64().unwrap(), t),
                    "`{name}`: host {a}, device {b}"
                ),
                _ => assert_eq!(
                    format!("{a:?}"),
                    format!("{b:?}"),
                    "`{name}` differs (host vs device)"
                ),
            }
        }
        _ => {
            let (Some(a), Some(b)) = (h.array(name), d.array(name)) else {
                panic!(
                    "`{name}` is an array on one engine only (host: {}, device: {})",
                    h.array(name).is_some(),
                    d.array(name).is_some()
                );
            };
            assert_eq!(a.shape(), b.shape(), "`{name}`: shapes differ");
            let (ad, bd) = (a.data(), b.data());
            let (ab, bb) = (ad.bytes(), bd.bytes());
            if ab == bb {
                return;
            }
            let tol = match (a.scalar(), floats) {
                (Scalar::F32 | Scalar::F64, Floats::Within(t)) => t,
                _ => {
                    let i = ab.iter().zip(bb).position(|(x, y)| x != y).unwrap();
                    panic!(
                        "`{name}` differs (host vs device) from byte {i} (element {})",
                        i / a.scalar().size()
                    );
                }
            };
            for i in 0..a.len() {
                let (x, y) = (
                    ad.get(i).and_then(|v| v.as_f64()).unwrap(),
                    bd.get(i).and_then(|v| v.as_f64()).unwrap(),
                );
                assert!(close(x, y, tol), "`{name}`[{i}]: host {x}, device {y}");
            }
        }
    }
}

/// Run `src` on both backends, which must succeed, and check the values of
/// the named variables (as `get_value` prints them) on each: the known
/// answer, so a bug both backends share is caught too.
pub fn values_on_both(src: &str, want: &[(&str, &str)]) {
    for device in [false, true] {
        let r = run(src, device);
        r.result
            .as_ref()
            .unwrap_or_else(|e| panic!("{}", e.render(100)));
        for (name, value) in want {
            let got = r.engine.get_value(name).unwrap().to_string();
            assert_eq!(&got, value, "device {device}: {name}");
        }
    }
}
