//! `accl bench device`: throughput and latency of the Vulkan backend on one
//! device, from device timestamps (kernel time only, no launch or transfer
//! overhead) unless a figure says otherwise. Every figure is the median of
//! `runs` runs. Sizes are [`Sizes::GPU`], or the smaller [`Sizes::CPU`] on a
//! CPU device (lavapipe), where the full sizes take minutes.

pub mod host;
pub mod io;
mod latency;
mod private;
mod stencil;
pub use latency::bench_latency;

use crate::Engine;
use std::process::ExitCode;
use std::time::Instant;
use vk_runtime::{Buffer, Device, DeviceType, Instance, InstanceOptions, Queue};

/// Problem sizes of one bench run.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// saxpy, copy and sum: elements (f32).
    pub stream: u64,
    /// Jacobi: grid side (f32).
    pub jacobi: u64,
    /// Mandelbrot: image side (u8), 255 iterations.
    pub mandel: u64,
    /// Histogram: elements (i32 keys into 256 bins).
    pub hist: u64,
    /// SpMV: rows, 16 non-zeros per row.
    pub spmv_rows: u64,
    /// `sin(x) + exp(x) + log(x + 1)`: elements (f64, then f32).
    pub math: u64,
    /// Private array: iterations of the loop.
    pub private: u64,
}

impl Sizes {
    pub const GPU: Sizes = Sizes {
        stream: 1 << 26,
        jacobi: 4096,
        mandel: 8192,
        hist: 1 << 26,
        spmv_rows: 1 << 22,
        math: 1 << 24,
        private: 1 << 22,
    };
    pub const CPU: Sizes = Sizes {
        stream: 1 << 22,
        jacobi: 512,
        mandel: 512,
        hist: 1 << 22,
        spmv_rows: 1 << 16,
        math: 1 << 18,
        private: 1 << 18,
    };
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

struct Bench {
    e: Engine,
    runs: usize,
}

impl Bench {
    fn eval(&mut self, src: &str) -> Result<(), String> {
        self.e.eval(src).map(|_| ()).map_err(|e| e.render(100))
    }

    /// Device nanoseconds of the kernels of one evaluation of `src`, per
    /// run, after one untimed evaluation (compiles, first touches).
    fn kernel_ns(&mut self, src: &str) -> Result<Vec<f64>, String> {
        let mut v = Vec::new();
        self.eval(src)?;
        self.e.take_device_timings();
        for _ in 0..self.runs {
            self.eval(src)?;
            let ns: u64 = self
                .e
                .take_device_timings()
                .into_iter()
                .filter(|(l, _)| l.starts_with("kernel"))
                .map(|(_, t)| t)
                .sum();
            v.push(ns as f64);
        }
        Ok(v)
    }
}

/// The plain buffer-to-buffer copy bandwidth of the device in GB/s (bytes
/// read plus bytes written per nanosecond), on a logical device of its own.
fn copy_ceiling(adapter: usize, bytes: u64, runs: usize) -> Result<f64, String> {
    let s = |e: vk_runtime::VkError| e.to_string();
    let instance = Instance::new(&InstanceOptions::default()).map_err(s)?;
    let dev = Device::new(&instance, adapter).map_err(s)?;
    let a = Buffer::new(&dev, bytes, "copy src").map_err(s)?;
    let b = Buffer::new(&dev, bytes, "copy dst").map_err(s)?;
    let mut q = Queue::new(&dev, 0).map_err(s)?;
    q.enable_timestamps(true).map_err(s)?;
    q.zero(&a, 0, bytes).map_err(s)?;
    q.finish().map_err(s)?;
    q.take_timings();
    let mut t = Vec::new();
    for _ in 0..runs {
        q.copy_buffer(&a, 0, &b, 0, bytes).map_err(s)?;
        q.finish().map_err(s)?;
        t.extend(
            q.take_timings()
                .into_iter()
                .map(|o| (o.end_ns - o.start_ns) as f64),
        );
    }
    Ok(2.0 * bytes as f64 / median(t))
}

/// saxpy over arrays of 1 GiB, which one binding shows a kernel, and of
/// 8 GiB, which kernels reach by address: the same GB/s is the goal. Only
/// on a GPU with room for the two 8 GiB arrays and more.
fn large_arrays(b: &mut Bench, _: &Sizes, info: &vk_runtime::AdapterInfo) -> Result<(), String> {
    const BIG: u64 = 8 << 30;
    if info.device_type == DeviceType::Cpu || info.device_local_memory < 3 * BIG {
        outln!("large arrays: skipped (needs a GPU with more than 24 GiB)");
        return Ok(());
    }
    for bytes in [1u64 << 30, BIG] {
        let n = bytes / 4;
        let all = std::env::var_os("ACCL_BY_ADDRESS").is_some_and(|v| v == "all");
        let how = if all || bytes > info.limits.max_storage_buffer_range {
            "by address"
        } else {
            "bound"
        };
        b.eval(&format!(
            "let n = {n}i64; let x = rand(f32, 1, n); let y = rand(f32, 2, n); let a = 2.0f32;
             enter data copyin(x, y);"
        ))?;
        let t = median(
            b.kernel_ns("parallel loop present(x, y) for i in 0..n { y[i] = a * x[i] + y[i]; }")?,
        );
        // The host copies go too, before the next arrays.
        b.eval("exit data delete(x, y); let x = zeros(f32, 1); let y = zeros(f32, 1);")?;
        outln!(
            "saxpy {:>2} GiB      n = {n} f32: {:8.1} GB/s ({:.3} ms); arrays {how}",
            bytes >> 30,
            gbs(12.0 * n as f64, t),
            t / 1e6,
        );
    }
    Ok(())
}

/// A loop with a private array against the same loops without it and
/// against scalar locals (`private`).
fn private_arrays(b: &mut Bench, z: &Sizes, _: &vk_runtime::AdapterInfo) -> Result<(), String> {
    let n = z.private;
    let len = private::LEN;
    b.eval(&format!(
        "let n = {n}; let out = zeros(f32, n); let tmp = zeros(f32, {len}); \
         enter data create(out);"
    ))?;
    for (vl, label) in [
        ("", "default"),
        ("vector_length(64)", "vl 64"),
        ("vector_length(256)", "vl 256"),
    ] {
        let arr = median(b.kernel_ns(&private::array_src(vl))?);
        b.eval(&private::check_src(n))?;
        let lps = median(b.kernel_ns(&private::loops_src(vl))?);
        let loc = median(b.kernel_ns(&private::locals_src(vl))?);
        outln!(
            "private f32[{len}]  {n} it, {label:7}: {:8.3} ms private array, \
             {:8.3} ms same loops without it, {:8.3} ms scalar locals",
            arr / 1e6,
            lps / 1e6,
            loc / 1e6,
        );
    }
    b.eval("exit data delete(out);")?;
    Ok(())
}

/// One workload of `accl bench device`: it makes its data, measures, and
/// deletes its data, so it leaves the device as it found it.
type Workload = fn(&mut Bench, &Sizes, &vk_runtime::AdapterInfo) -> Result<(), String>;

/// The workloads in the order they run, by the names `--only` takes.
pub const WORKLOAD_NAMES: [&str; 9] = [
    "jit",
    "streams",
    "large",
    "jacobi",
    "mandelbrot",
    "math",
    "histogram",
    "spmv",
    "private",
];

const WORKLOADS: [(&str, Workload); 8] = [
    ("streams", streams),
    ("large", large_arrays),
    ("jacobi", jacobi),
    ("mandelbrot", mandelbrot),
    ("math", math),
    ("histogram", histogram),
    ("spmv", spmv),
    ("private", private_arrays),
];

/// Which workloads to run: all, or those `--only` names.
#[derive(Clone, Debug, Default)]
pub struct Only(Option<Vec<String>>);

impl Only {
    /// From `--only a,b,..`; an unknown name is an error naming the known ones.
    pub fn parse(list: Option<&str>) -> Result<Only, String> {
        let Some(list) = list else {
            return Ok(Only(None));
        };
        let names: Vec<String> = list.split(',').map(|w| w.trim().to_string()).collect();
        if let Some(bad) = names.iter().find(|w| !WORKLOAD_NAMES.contains(&w.as_str())) {
            return Err(format!(
                "--only takes workloads among {}, not `{bad}`",
                WORKLOAD_NAMES.join(", ")
            ));
        }
        Ok(Only(Some(names)))
    }

    fn wants(&self, name: &str) -> bool {
        self.0.as_ref().is_none_or(|v| v.iter().any(|w| w == name))
    }
}

fn gbs(bytes: f64, ns: f64) -> f64 {
    bytes / ns
}

/// `accl bench device`, its kernels compiled as `mode` says.
pub fn bench_device(
    device: usize,
    runs: usize,
    sizes: Option<Sizes>,
    mode: crate::cli::KernelFlags,
    only: Only,
) -> ExitCode {
    exit(run(device, runs.max(1), sizes, mode, only))
}

fn exit(r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            errln!("error: {m}");
            ExitCode::FAILURE
        }
    }
}

/// Every adapter, in device order, and device `device`'s.
fn adapters(
    device: usize,
) -> Result<(Vec<vk_runtime::AdapterInfo>, vk_runtime::AdapterInfo), String> {
    let instance = Instance::new(&InstanceOptions::default()).map_err(|e| e.to_string())?;
    let infos = crate::vulkan::ordered_adapters(&instance)?;
    let info = infos
        .get(device)
        .ok_or_else(|| format!("there is no device {device}"))?
        .clone();
    Ok((infos, info))
}

fn run(
    device: usize,
    runs: usize,
    sizes: Option<Sizes>,
    mode: crate::cli::KernelFlags,
    only: Only,
) -> Result<(), String> {
    let (_, info) = adapters(device)?;
    let z = sizes.unwrap_or(if info.device_type == DeviceType::Cpu {
        Sizes::CPU
    } else {
        Sizes::GPU
    });
    outln!(
        "accl bench on device {device}: {} ({}), {}; median of {runs} runs, device timestamps",
        info.name,
        info.device_type,
        info.driver
    );

    // JIT latency first, while nothing is cached in this process.
    if only.wants("jit") {
        jit_latency(device, runs)?;
    }

    let mut b = Bench {
        e: Engine::vulkan(device).map_err(|e| e.render(100))?,
        runs,
    };
    b.e.set_profiling(true)?;
    mode.apply(&mut b.e);
    outln!(
        "kernels: bounds checks {}, loop budget {}",
        if mode.checks { "on" } else { "off" },
        match mode
            .loop_budget
            .unwrap_or(crate::vulkan::DEFAULT_LOOP_BUDGET)
        {
            0 => "off".to_string(),
            n => n.to_string(),
        }
    );

    for (name, workload) in WORKLOADS {
        if only.wants(name) {
            workload(&mut b, &z, &info)?;
        }
    }
    let msgs = b.e.take_validation_messages();
    if !msgs.is_empty() {
        return Err(format!("validation messages:\n{}", msgs.join("\n")));
    }
    Ok(())
}

fn streams(b: &mut Bench, z: &Sizes, info: &vk_runtime::AdapterInfo) -> Result<(), String> {
    // Streams: copy ceiling, saxpy, sum (random data; the copy ceiling's
    // vkCmdCopyBuffer on a zeroed buffer).
    let n = z.stream;
    let dma = copy_ceiling(info.index, n * 4, b.runs)?;
    b.eval(&format!(
        "let n = {n}; let x = rand(f32, 1, n); let y = rand(f32, 2, n); let a = 2.0f32;
         enter data copyin(x, y);"
    ))?;
    let t = median(b.kernel_ns("parallel loop present(x, y) for i in 0..n { y[i] = x[i]; }")?);
    let kcopy = gbs(8.0 * n as f64, t);
    let ceiling = dma.max(kcopy);
    outln!(
        "copy ceiling      n = {n} f32: {ceiling:8.1} GB/s (read + write; vkCmdCopyBuffer {dma:.1}, copy kernel {kcopy:.1})"
    );
    let t = median(
        b.kernel_ns("parallel loop present(x, y) for i in 0..n { y[i] = a * x[i] + y[i]; }")?,
    );
    let saxpy = gbs(12.0 * n as f64, t);
    outln!(
        "saxpy             n = {n} f32: {saxpy:8.1} GB/s ({:.1}% of the copy ceiling), {:.3} ms",
        100.0 * saxpy / ceiling,
        t / 1e6
    );
    let t = median(b.kernel_ns(
        "let s = 0.0f32; parallel loop present(x) reduction(+: s) for i in 0..n { s += x[i]; }",
    )?);
    let sum = gbs(4.0 * n as f64, t);
    outln!(
        "sum reduction     n = {n} f32: {sum:8.1} GB/s ({:.1}% of the copy ceiling), {:.3} ms",
        100.0 * sum / ceiling,
        t / 1e6
    );
    b.eval("exit data delete(x, y);")?;
    Ok(())
}

fn jacobi(b: &mut Bench, z: &Sizes, _: &vk_runtime::AdapterInfo) -> Result<(), String> {
    // Jacobi with its max-reduction, per iteration (two kernels).
    let m = z.jacobi;
    b.eval(&format!(
        "let m = {m}; let A = zeros(f32, m, m); let Anew = zeros(f32, m, m);
         for j in 0..m {{ A[0, j] = 1.0; }}
         enter data copyin(A, Anew);"
    ))?;
    let t = median(b.kernel_ns(
        "let err = 0.0f32;
         parallel loop present(A, Anew) collapse(2) reduction(max: err) for i in 1..m - 1 {
             for j in 1..m - 1 {
                 Anew[i, j] = 0.25 * (A[i, j + 1] + A[i, j - 1] + A[i - 1, j] + A[i + 1, j]);
                 err = max(err, abs(Anew[i, j] - A[i, j]));
             }
         }
         parallel loop present(A, Anew) collapse(2) for i in 1..m - 1 {
             for j in 1..m - 1 { A[i, j] = Anew[i, j]; }
         }",
    )?);
    outln!(
        "jacobi            {m}x{m} f32: {:8.3} ms per iteration, {:.1} GB/s effective (4 array passes)",
        t / 1e6,
        gbs(16.0 * (m * m) as f64, t)
    );
    b.eval("exit data delete(A, Anew);")?;
    Ok(())
}

fn mandelbrot(b: &mut Bench, z: &Sizes, _: &vk_runtime::AdapterInfo) -> Result<(), String> {
    // Mandelbrot, one pixel per iteration of a collapsed nest.
    let w = z.mandel;
    b.eval(&format!(
        "let w = {w}; let img = zeros(u8, w, w); enter data create(img);"
    ))?;
    let t = median(b.kernel_ns(
        "parallel loop present(img) collapse(2) for py in 0..w {
             for px in 0..w {
                 let x0 = -2.0f32 + px as f32 * (3.0f32 / w as f32);
                 let y0 = -1.5f32 + py as f32 * (3.0f32 / w as f32);
                 let x = 0.0f32; let y = 0.0f32; let k = 0;
                 while x * x + y * y < 4.0f32 && k < 255 {
                     let xt = x * x - y * y + x0;
                     y = 2.0f32 * x * y + y0;
                     x = xt;
                     k += 1;
                 }
                 img[py, px] = k as u8;
             }
         }",
    )?);
    outln!(
        "mandelbrot        {w}x{w}, 255 it: {:8.3} ms kernel, {:.0} Mpixel/s",
        t / 1e6,
        (w * w) as f64 / t * 1e3
    );
    b.eval("exit data delete(img);")?;
    Ok(())
}

fn math(b: &mut Bench, z: &Sizes, _: &vk_runtime::AdapterInfo) -> Result<(), String> {
    // Transcendentals: f64 (accl's own functions) next to f32 (GLSL.std.450).
    let nm = z.math;
    b.eval(&format!(
        "let nm = {nm}; let xd = zeros(f64, nm); let yd = zeros(f64, nm);
         let xs = zeros(f32, nm); let ys = zeros(f32, nm);
         enter data create(xd, yd, xs, ys);
         parallel loop present(xd, xs) for i in 0..nm {{
             xd[i] = (i as f64) * (8.0 / nm as f64);
             xs[i] = xd[i] as f32;
         }}"
    ))?;
    for (t, x, y) in [("f64", "xd", "yd"), ("f32", "xs", "ys")] {
        let ns = median(b.kernel_ns(&format!(
            "parallel loop present({x}, {y}) for i in 0..nm {{
                 {y}[i] = sin({x}[i]) + exp({x}[i]) + log({x}[i] + 1.0);
             }}"
        ))?);
        outln!(
            "sin+exp+log       n = {nm} {t}: {:8.1} M elements/s, {:.3} ms",
            nm as f64 / ns * 1e3,
            ns / 1e6
        );
    }
    b.eval("exit data delete(xd, yd, xs, ys);")?;
    Ok(())
}

fn histogram(b: &mut Bench, z: &Sizes, _: &vk_runtime::AdapterInfo) -> Result<(), String> {
    // Histogram with atomics.
    let h = z.hist;
    b.eval(&format!(
        "let nh = {h}; let keys = zeros(i32, nh); let bins = zeros(i32, 256);
         enter data create(keys, bins);
         parallel loop present(keys) for i in 0..nh {{
             keys[i] = (((i as u32) * 2654435761u32) >> 24u32) as i32;
         }}"
    ))?;
    let t = median(b.kernel_ns(
        "parallel loop present(keys, bins) for i in 0..nh { atomic bins[keys[i]] += 1; }",
    )?);
    outln!(
        "histogram         n = {h}, 256 bins: {:8.1} M elements/s, {:.3} ms",
        h as f64 / t * 1e3,
        t / 1e6
    );
    // The same counts as an array reduction, and a weighted f32 one.
    let t = median(b.kernel_ns(
        "parallel loop present(keys) reduction(+: bins) for i in 0..nh { bins[keys[i]] += 1; }",
    )?);
    let tf = median(b.kernel_ns(
        "let wb = zeros(f32, 256);
         parallel loop present(keys) reduction(+: wb) for i in 0..nh { wb[keys[i]] += 0.5; }",
    )?);
    outln!(
        "array reduction   n = {h}, 256 bins: {:8.1} M elements/s i32, {:.1} f32 ({:.3} / {:.3} ms)",
        h as f64 / t * 1e3,
        h as f64 / tf * 1e3,
        t / 1e6,
        tf / 1e6
    );
    b.eval("exit data delete(keys, bins);")?;
    Ok(())
}

fn spmv(b: &mut Bench, z: &Sizes, _: &vk_runtime::AdapterInfo) -> Result<(), String> {
    // CSR SpMV, 16 non-zeros per row, one gang per row.
    let r = z.spmv_rows;
    b.eval(&format!(
        "let nr = {r}; let nnz = nr * 16;
         let rowptr = zeros(i32, nr + 1); let cols = zeros(i32, nnz);
         let vals = zeros(f32, nnz); let v = full(f32, 1.0, nr); let out = zeros(f32, nr);
         enter data create(rowptr, cols, vals, out) copyin(v);
         parallel loop present(rowptr) for i in 0..nr + 1 {{ rowptr[i] = i * 16; }}
         parallel loop present(cols, vals) for k in 0..nnz {{
             let row = k / 16;
             cols[k] = (row + (k % 16) * 97) % nr;
             vals[k] = 0.5;
         }}"
    ))?;
    // The three steps of the classic OpenACC SpMV tuning: a row per lane,
    // a row per gang of 32 vector lanes, a row per worker of 32 lanes.
    let body = "let s = 0.0f32;
             loop vector reduction(+: s) for k in rowptr[i]..rowptr[i + 1] {
                 s += vals[k] * v[cols[k]];
             }
             out[i] = s;";
    let steps = [
        (
            "flat",
            "parallel loop present(rowptr, cols, vals, v, out) for i in 0..nr {
                 let s = 0.0f32;
                 for k in rowptr[i]..rowptr[i + 1] { s += vals[k] * v[cols[k]]; }
                 out[i] = s;
             }"
            .to_string(),
        ),
        (
            "gang vector(32)",
            format!(
                "parallel loop gang vector_length(32) present(rowptr, cols, vals, v, out) for i in 0..nr {{ {body} }}"
            ),
        ),
        (
            "+ worker(32)",
            format!(
                "parallel loop gang worker vector_length(32) num_workers(32) present(rowptr, cols, vals, v, out) for i in 0..nr {{ {body} }}"
            ),
        ),
    ];
    for (name, src) in steps {
        let t = median(b.kernel_ns(&src)?);
        outln!(
            "spmv {name:<16} {r} rows, 16 nnz/row: {:8.2} GFLOP/s, {:.3} ms",
            2.0 * (r * 16) as f64 / t,
            t / 1e6
        );
    }
    b.eval("exit data delete(rowptr, cols, vals, out, v);")?;
    Ok(())
}

/// Source text to the first finished dispatch of a small kernel, measured
/// around `Engine::eval` on an engine whose device is already open: cold
/// (a kernel the driver has never seen, empty pipeline cache) and warm (the
/// same kernel again in a new engine that loaded the on-disk pipeline cache).
fn jit_latency(device: usize, runs: usize) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("accl-bench-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("ACCL_CACHE_DIR", &dir);
    let kernel = |k: usize| {
        format!(
            "parallel loop present(x) for i in 0..1024 {{ x[i] = x[i] * 1.5 + {k}.25; if x[i] > 1000.0 {{ x[i] = 0.0; }} }}"
        )
    };
    let fresh = || -> Result<Engine, String> {
        let mut e = Engine::vulkan(device).map_err(|e| e.render(100))?;
        // Open the device: that is start-up, not JIT.
        // Open the device and make its staging buffers: start-up, not JIT.
        e.eval("let x = zeros(f32, 1024); enter data copyin(x); update self(x);")
            .map_err(|e| e.render(100))?;
        Ok(e)
    };
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for r in 0..runs {
        // Unique to this process: no driver-side shader cache has seen it.
        let src = kernel(std::process::id() as usize % 100_000 * 100 + r);
        let mut e = fresh()?;
        let t = Instant::now();
        e.eval(&src).map_err(|e| e.render(100))?;
        cold.push(t.elapsed().as_secs_f64() * 1e3);
        drop(e); // saves the pipeline cache
        let mut e = fresh()?;
        let t = Instant::now();
        e.eval(&src).map_err(|e| e.render(100))?;
        warm.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::env::remove_var("ACCL_CACHE_DIR");
    outln!(
        "JIT latency       source to first finished dispatch: cold {:.2} ms, warm pipeline cache {:.2} ms",
        median(cold),
        median(warm)
    );
    Ok(())
}

/// The Mandelbrot of the shared examples as a function of the image side.
fn mandel_fn(side: usize) -> String {
    format!(
        "const W = {side}; const H = {side}; const MAX_ITERS = 255;
         fn mandelbrot(px: i32, py: i32) -> u8 {{
             let x0 = -2.0 + px as f64 * (3.0 / W as f64);
             let y0 = -1.5 + py as f64 * (3.0 / H as f64);
             let x = 0.0; let y = 0.0; let i = 0;
             while x * x + y * y < 4.0 && i < MAX_ITERS {{
                 let xt = x * x - y * y + x0; y = 2.0 * x * y + y0; x = xt; i += 1;
             }}
             return (255 * i / MAX_ITERS) as u8;
         }}"
    )
}

/// Blocks of rows, each computed and (with `copy`) copied back;
/// `queue(block)` is the async clause of block `block` (empty:
/// synchronous), `device(block)` the `set device_num` before it (empty:
/// none).
fn mandel_blocks(blocks: usize, queue: &str, device: &str, copy: bool) -> String {
    let back = if copy {
        format!("update self(image[ystart:rows]) {queue};")
    } else {
        String::new()
    };
    format!(
        "for block in 0..{blocks} {{
             let rows = H / {blocks};
             let ystart = block * rows;
             {device}
             parallel loop {queue} for y in ystart..ystart + rows {{
                 for x in 0..W {{ image[y, x] = mandelbrot(x, y); }}
             }}
             {back}
         }}"
    )
}

/// How long a figure's program runs untimed before its timed runs.
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(500);

/// Wall milliseconds of `runs` runs of `src`: median, fastest, slowest.
#[derive(Clone, Copy)]
struct Wall {
    median: f64,
    min: f64,
    max: f64,
}

impl std::fmt::Display for Wall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2} ms ({:.2}-{:.2})", self.median, self.min, self.max)
    }
}

/// Wall milliseconds of `runs` runs of `src`, timed by the script's own
/// clock around it: execution only. The source is compiled once
/// ([`Engine::compile`]) and the program run again and again, as a
/// script's loop or an embedding program would: an `eval` each time adds
/// the first-launch work of a fresh program (its kernels looked up again,
/// its closures cold), measured on 2 H200s at 0.13 ms of 1.47 ms for the
/// two-device Mandelbrot.
///
/// The timed runs follow [`WARM_UP`] of untimed ones, so that every device
/// the program uses is at its working clocks: a GPU idle for a few seconds
/// (the second one, while the bench used only the first) drops its clocks
/// and raises them again only after some time of work.
fn wall_ms(e: &mut Engine, src: &str, runs: usize) -> Result<Wall, String> {
    Ok(timed(e, src, runs, None)?.0)
}

/// [`wall_ms`], and the median of the seconds the script leaves in the
/// variable `extra` each run (which `src` sets from `bench_t0`, the
/// clock at the start of the run), in milliseconds.
fn timed(
    e: &mut Engine,
    src: &str,
    runs: usize,
    extra: Option<&str>,
) -> Result<(Wall, Option<f64>), String> {
    let timed = format!("let bench_t0 = clock(); {src} let bench_dt = clock() - bench_t0;");
    let program = e.compile(&timed).map_err(|e| e.render(100))?;
    // The first run also compiles the kernels and makes staging buffers.
    let warm = Instant::now();
    loop {
        e.run(&program).map_err(|e| e.render(100))?;
        if warm.elapsed() >= WARM_UP {
            break;
        }
    }
    let mut v = Vec::new();
    let mut x = Vec::new();
    for _ in 0..runs {
        e.run(&program).map_err(|e| e.render(100))?;
        let dt = e
            .get::<f64>("bench_dt")
            .ok_or("the bench script lost its clock")?;
        v.push(dt * 1e3);
        if let Some(name) = extra {
            let t = e
                .get::<f64>(name)
                .ok_or("the bench script lost its clock")?;
            x.push(t * 1e3);
        }
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    let wall = Wall {
        median: median(v),
        min,
        max,
    };
    Ok((wall, extra.map(|_| median(x))))
}

/// `accl bench async`: see the CLI help.
pub fn bench_async(
    device: usize,
    runs: usize,
    side: Option<usize>,
    devices: Option<usize>,
) -> ExitCode {
    exit(run_async(device, runs.max(1), side, devices))
}

fn run_async(
    device: usize,
    runs: usize,
    side: Option<usize>,
    devices: Option<usize>,
) -> Result<(), String> {
    let (infos, info) = adapters(device)?;
    let cpu = info.device_type == DeviceType::Cpu;
    let side = side.unwrap_or(if cpu { 1024 } else { 8192 });
    // Every GPU (every device on a CPU-only machine), or the first
    // `devices` of them, against one.
    let mut all: Vec<usize> = infos
        .iter()
        .enumerate()
        .filter(|(_, a)| (a.device_type == DeviceType::Cpu) == cpu)
        .map(|(i, _)| i)
        .collect();
    if let Some(n) = devices {
        if n == 0 || n > all.len() {
            let kind = match (cpu, all.len()) {
                (true, 1) => "CPU device",
                (true, _) => "CPU devices",
                (false, 1) => "GPU",
                (false, _) => "GPUs",
            };
            return Err(format!(
                "--devices {n}: this machine has {} {kind} (`accl devices` lists them)",
                all.len()
            ));
        }
        all.truncate(n);
    }
    outln!(
        "accl bench async on device {device}: {} ({}), {}; median of {runs} runs (fastest-slowest), wall clock",
        info.name, info.device_type, info.driver
    );
    let open = |devices: Option<&str>| -> Result<Engine, String> {
        let mut e = Engine::vulkan_devices(devices, 0).map_err(|e| e.render(100))?;
        e.eval(&mandel_fn(side)).map_err(|e| e.render(100))?;
        Ok(e)
    };

    // Pipelined Mandelbrot: 16 blocks on 2 queues against the same blocks
    // synchronously, copy back included, in one engine.
    let one = device.to_string();
    let mut e = open(Some(&one))?;
    e.eval("let image = zeros(u8, H, W); enter data create(image);")
        .map_err(|e| e.render(100))?;
    let sync = wall_ms(&mut e, &mandel_blocks(16, "", "", true), runs)?;
    let piped = wall_ms(
        &mut e,
        &format!("{} wait;", mandel_blocks(16, "async(block % 2)", "", true)),
        runs,
    )?;
    // The same without the copies back: what the copies add each way, and
    // the floor of the pipelined run (its kernels alone).
    let sync0 = wall_ms(&mut e, &mandel_blocks(16, "", "", false), runs)?;
    let piped0 = wall_ms(
        &mut e,
        &format!("{} wait;", mandel_blocks(16, "async(block % 2)", "", false)),
        runs,
    )?;
    e.eval("exit data delete(image);")
        .map_err(|e| e.render(100))?;
    outln!(
        "mandelbrot {side}x{side}, 16 blocks + copy back: synchronous {sync}, 2 async queues {piped}: {:.2}x",
        sync.median / piped.median
    );
    outln!(
        "  without the copy back: synchronous {sync0}, 2 async queues {piped0}; the copies add {:.2} ms synchronously and {:.2} ms pipelined (hiding them all: {:.2}x at most)",
        sync.median - sync0.median,
        piped.median - piped0.median,
        sync.median / piped0.median
    );

    // Launch cost: a chain of 10,000 tiny dependent kernels on one queue.
    let n = 10_000;
    e.eval("let tiny = zeros(f32, 32); enter data copyin(tiny);")
        .map_err(|e| e.render(100))?;
    let chain = format!(
        "for k in 0..{n} {{ parallel loop async(1) present(tiny) for i in 0..32 {{ tiny[i] = tiny[i] + 1.0; }} }} wait(1);"
    );
    let ms = wall_ms(&mut e, &chain, runs)?;
    e.eval("exit data delete(tiny);")
        .map_err(|e| e.render(100))?;
    outln!(
        "launch cost       {n} tiny async kernels in a chain: {:.2} us per kernel (host interpreter, launch, submit and the final wait)",
        ms.median * 1e3 / n as f64
    );
    drop(e);

    let list = all
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    // With the time the host took to issue the blocks: the first blocks
    // are cheap, so a slow host leaves the devices waiting at the start,
    // two devices more than one.
    let multi = |devices: &str| -> Result<(Wall, f64, usize), String> {
        let mut e = open(Some(devices))?;
        e.eval(
            "let image = zeros(u8, H, W); let ndev = acc_get_num_devices();
             for d in 0..ndev { set device_num(d); enter data create(image); }",
        )
        .map_err(|e| e.render(100))?;
        let (ms, issue) = timed(
            &mut e,
            &format!(
                "{} let bench_issue = clock() - bench_t0; for d in 0..ndev {{ set device_num(d); wait; }}",
                mandel_blocks(16, "async(block)", "set device_num(block % ndev);", true)
            ),
            runs,
            Some("bench_issue"),
        )?;
        let ndev = e.get::<i32>("ndev").unwrap_or(1) as usize;
        Ok((ms, issue.unwrap_or(0.0), ndev))
    };
    let (t1, issue1, _) = multi(&one)?;
    let (tn, issuen, ndev) = multi(&list)?;
    outln!(
        "mandelbrot multi  {side}x{side}, 16 blocks: 1 device {t1}, {ndev} device{} ({}) {tn}: {:.2}x",
        if ndev == 1 { "" } else { "s" },
        all.iter()
            .map(|&i| infos[i].name.clone())
            .collect::<Vec<_>>()
            .join(" + "),
        t1.median / tn.median
    );
    outln!(
        "  the host issued the 16 blocks in {issue1:.2} ms on 1 device and {issuen:.2} ms on {ndev} (medians): on a slow host the devices wait for their first blocks"
    );
    Ok(())
}
