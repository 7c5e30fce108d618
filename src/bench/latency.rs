//! `accl bench latency`: what one construct costs on the host's clock,
//! wall time measured by the script's own `clock()` (execution only, not
//! the parsing and checking each `eval` does first): a tiny synchronous
//! kernel and reduction, small copies each way, Jacobi reading its error
//! every iteration, how much of an async kernel host work hides, what a
//! join and a copy between two devices cost, and the compile wait of a
//! script's first launches.

use super::{adapters, exit, wall_ms, Wall};
use crate::Engine;
use std::process::ExitCode;
use std::time::Instant;
use vk_runtime::DeviceType;

/// `accl bench latency`: see the CLI help.
pub fn bench_latency(device: usize, runs: usize) -> ExitCode {
    exit(run(device, runs.max(1)))
}

fn ev(e: &mut Engine, src: &str) -> Result<(), String> {
    e.eval(src).map(|_| ()).map_err(|e| e.render(100))
}

/// Microseconds per repetition of `body`, repeated `n` times in a loop.
fn per_op(e: &mut Engine, body: &str, n: usize, runs: usize) -> Result<Wall, String> {
    let w = wall_ms(e, &format!("for rep in 0..{n} {{ {body} }}"), runs)?;
    let k = 1e3 / n as f64;
    Ok(Wall {
        median: w.median * k,
        min: w.min * k,
        max: w.max * k,
    })
}

fn us(w: Wall) -> String {
    format!("{:.1} us ({:.1}-{:.1})", w.median, w.min, w.max)
}

/// Median microseconds of recording a 4-byte fill, submitting it and
/// polling its timeline value, as accl's queues do: the floor of any
/// synchronous construct on this driver (on an H200 about 17 us, against
/// 20 us for a tiny synchronous kernel), on a logical device of its own.
fn round_trip(adapter: usize, n: usize) -> Result<f64, String> {
    use vk_runtime::{Buffer, Device, Instance, InstanceOptions, Queue};
    let s = |e: vk_runtime::VkError| e.to_string();
    let instance = Instance::new(&InstanceOptions::default()).map_err(s)?;
    let dev = Device::new(&instance, adapter).map_err(s)?;
    let b = Buffer::new(&dev, 4, "floor").map_err(s)?;
    let mut q = Queue::new(&dev, 0).map_err(s)?;
    let mut t = Vec::with_capacity(n);
    for i in 0..n + 10 {
        let t0 = Instant::now();
        q.fill(&b, 0, 4, i as u32).map_err(s)?;
        let v = q.submit().map_err(s)?;
        while !q.host_wait(v, std::time::Duration::ZERO).map_err(s)? {
            std::hint::spin_loop();
        }
        if i >= 10 {
            t.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(super::median(t))
}

fn run(device: usize, runs: usize) -> Result<(), String> {
    let (_, info) = adapters(device)?;
    let cpu = info.device_type == DeviceType::Cpu;
    outln!(
        "accl bench latency on device {device}: {} ({}), {}; median of {runs} runs (fastest-slowest), wall clock",
        info.name, info.device_type, info.driver
    );
    let mut e = Engine::vulkan(device).map_err(|e| e.render(100))?;
    ev(
        &mut e,
        "let tiny = zeros(f32, 32); enter data copyin(tiny); let s = 0.0f32; let seen_s = 0.0f32;",
    )?;

    // Tiny synchronous constructs, 1000 in a row.
    let n = 1000;
    let kernel = per_op(
        &mut e,
        "parallel loop present(tiny) for i in 0..32 { tiny[i] = tiny[i] + 1.0; }",
        n,
        runs,
    )?;
    let reduction = per_op(
        &mut e,
        "s = 0.0f32; parallel loop present(tiny) reduction(+: s) for i in 0..32 { s += tiny[i]; }",
        n,
        runs,
    )?;
    // The same reduction with its value read by the host every time: one
    // submit and one wait per construct (synchronous kernels complete
    // lazily, so the figures above are what a program pays that does not
    // look at each result at once).
    let read = per_op(
        &mut e,
        "s = 0.0f32; parallel loop present(tiny) reduction(+: s) for i in 0..32 { s += tiny[i]; } seen_s = seen_s + s;",
        n,
        runs,
    )?;
    let up = per_op(&mut e, "update device(tiny);", n, runs)?;
    let down = per_op(&mut e, "update self(tiny);", n, runs)?;
    ev(&mut e, "exit data delete(tiny);")?;
    let floor = round_trip(info.index, n)?;
    outln!(
        "driver floor      a 4-byte fill submitted and waited for (vk-runtime, no accl): {floor:.1} us"
    );
    outln!("sync kernel       tiny (32 lanes): {} each", us(kernel));
    outln!(
        "sync reduction    tiny (32 lanes): {} each, {:.2}x a sync kernel",
        us(reduction),
        reduction.median / kernel.median
    );
    outln!(
        "sync reduction    read by the host each time: {} each",
        us(read)
    );
    outln!(
        "small copies      128 bytes: update device {}, update self {}",
        us(up),
        us(down)
    );

    // Jacobi reading its max error on the host every iteration.
    let m = if cpu { 512 } else { 4096 };
    let iters = 20;
    ev(
        &mut e,
        &format!(
            "let m = {m}; let A = zeros(f32, m, m); let Anew = zeros(f32, m, m);
             for j in 0..m {{ A[0, j] = 1.0; }}
             enter data copyin(A, Anew); let err = 1.0f32; let seen = 0.0f32;"
        ),
    )?;
    let jacobi = |with_err: bool| {
        let red = if with_err { "reduction(max: err)" } else { "" };
        let upd = if with_err {
            "err = max(err, abs(Anew[i, j] - A[i, j]));"
        } else {
            ""
        };
        let read = if with_err { "seen = seen + err;" } else { "" };
        format!(
            "for it in 0..{iters} {{
                 err = 0.0f32;
                 parallel loop present(A, Anew) collapse(2) {red} for i in 1..m - 1 {{
                     for j in 1..m - 1 {{
                         Anew[i, j] = 0.25 * (A[i, j + 1] + A[i, j - 1] + A[i - 1, j] + A[i + 1, j]);
                         {upd}
                     }}
                 }}
                 parallel loop present(A, Anew) collapse(2) for i in 1..m - 1 {{
                     for j in 1..m - 1 {{ A[i, j] = Anew[i, j]; }}
                 }}
                 {read}
             }}"
        )
    };
    let per_it = |w: Wall| Wall {
        median: w.median / iters as f64,
        min: w.min / iters as f64,
        max: w.max / iters as f64,
    };
    let with_err = per_it(wall_ms(&mut e, &jacobi(true), runs)?);
    let without = per_it(wall_ms(&mut e, &jacobi(false), runs)?);
    ev(&mut e, "exit data delete(A, Anew);")?;
    outln!(
        "jacobi            {m}x{m} f32, per iteration: error read every iteration {with_err}, no reduction {without}"
    );

    // Overlap: an async kernel, then host work as long as the kernel, then
    // the wait. The wait costs little when the kernel ran during the host
    // work.
    let lanes = if cpu { 64 } else { 1 << 16 };
    let steps = if cpu { 400_000 } else { 2_000_000 };
    ev(
        &mut e,
        &format!(
            "let busy = zeros(f32, {lanes}); enter data copyin(busy);
             fn spin(dt: f64) {{ let t = clock(); while clock() - t < dt {{ }} }}"
        ),
    )?;
    let long = format!(
        "parallel loop present(busy) {{q}} for i in 0..{lanes} {{
             let x = busy[i];
             for k in 0..{steps} {{ x = x * 0.999 + 1.0; }}
             busy[i] = x;
         }}"
    );
    let sync = wall_ms(&mut e, &long.replace("{q}", ""), runs)?;
    let kernel_s = sync.median / 1e3;
    let mut waits = Vec::new();
    let mut totals = Vec::new();
    for _ in 0..runs.max(3) {
        ev(
            &mut e,
            &format!(
                "let t0 = clock(); {} spin({kernel_s}); let tw = clock(); wait(1);
                 let wait_s = clock() - tw; let total_s = clock() - t0;",
                long.replace("{q}", "async(1)")
            ),
        )?;
        waits.push(e.get::<f64>("wait_s").ok_or("lost wait_s")? * 1e3);
        totals.push(e.get::<f64>("total_s").ok_or("lost total_s")? * 1e3);
    }
    ev(&mut e, "exit data delete(busy);")?;
    outln!(
        "overlap           async kernel of {:.1} ms + as long of host work: the wait takes {:.2} ms, all {:.1} ms (no overlap: {:.1} ms)",
        sync.median,
        super::median(waits),
        super::median(totals),
        2.0 * sync.median
    );
    drop(e);
    two_devices(device, runs, cpu)?;

    // A script of three kernels, first launches on a fresh engine with an
    // empty pipeline cache, against the same script run again.
    let dir = std::env::temp_dir().join(format!("accl-bench-jit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("ACCL_CACHE_DIR", &dir);
    // Constants unique to this process, so no driver-side shader cache
    // (Mesa's and NVIDIA's keep compiled shaders on disk) has seen them.
    let salt = std::process::id() as usize % 100_000;
    let mut cold = Vec::new();
    let mut again = Vec::new();
    for r in 0..runs {
        let r = salt * 100 + r;
        let mut e = Engine::vulkan(device).map_err(|e| e.render(100))?;
        ev(&mut e, "let a = zeros(f32, 4096); let b = zeros(f32, 4096); let c = zeros(f32, 4096); enter data copyin(a, b, c); update self(a);")?;
        let script = format!(
            "parallel loop present(a) for i in 0..4096 {{ a[i] = a[i] * 1.5 + {r}.25; }}
             let t = 0.0f32;
             parallel loop present(a, b) reduction(+: t) for i in 0..4096 {{ b[i] = sqrt(abs(a[i])) + {r}.5; t += b[i]; }}
             parallel loop present(a, b, c) collapse(1) for i in 1..4095 {{ c[i] = 0.5 * (b[i - 1] + b[i + 1]) - a[i] * {r}.75; }}"
        );
        let t = Instant::now();
        ev(&mut e, &script)?;
        cold.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        ev(&mut e, &script)?;
        again.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::env::remove_var("ACCL_CACHE_DIR");
    let (c, a) = (super::median(cold), super::median(again));
    outln!(
        "jit 3 kernels     cold pipeline cache, first launches: {c:.2} ms, the same script again {a:.2} ms: {:.2} ms waiting for compiles",
        c - a
    );
    Ok(())
}

/// A join and a copy between two devices against the same on one, on two
/// logical devices of the one adapter: Vulkan devices share no timeline
/// semaphore and no memory, so the host bridges them as it would two GPUs
/// (their own link is not measured here).
fn two_devices(device: usize, runs: usize, cpu: bool) -> Result<(), String> {
    let mut e = Engine::vulkan_devices(Some(&format!("{device},{device}")), 0)
        .map_err(|e| e.render(100))?;
    let mib: usize = if cpu { 16 } else { 256 };
    ev(
        &mut e,
        &format!(
            "let t0 = zeros(f32, 32); let t1 = zeros(f32, 32);
             let big = zeros(f32, {n}); let big2 = zeros(f32, {n});
             acc_set_device_num(1); enter data copyin(t1, big);
             acc_set_device_num(0); enter data copyin(t0, big, big2);",
            n = mib << 18
        ),
    )?;
    // A tiny kernel on queue 1, one on queue 2 of device 0 after it, and
    // the host waiting for the second.
    let chain = |first: &str, join: &str| {
        format!(
            "{first} parallel loop async(1) present(t1) for i in 0..32 {{ t1[i] = t1[i] + 1.0; }}
             acc_set_device_num(0); {join}
             parallel loop async(2) present(t0) for i in 0..32 {{ t0[i] = t0[i] * 0.5; }}
             wait(2);"
        )
    };
    let n = 200;
    let same = per_op(
        &mut e,
        &chain("", "wait(1) async(2);").replace("t1", "t0"),
        n,
        runs,
    )?;
    let across = per_op(
        &mut e,
        &chain("acc_set_device_num(1);", "wait(devnum: 1, 1) async(2);"),
        n,
        runs,
    )?;
    ev(
        &mut e,
        "acc_set_device_num(1); wait; acc_set_device_num(0); wait;",
    )?;
    outln!(
        "join              tiny kernel on queue 1, then one on queue 2 after it, waited for: one device {}, two devices {} (the host bridges them)",
        us(same),
        us(across)
    );
    let gbs = |w: Wall| 2.0 * (mib << 20) as f64 / (w.median * 1e6);
    let local = wall_ms(&mut e, "acc_memcpy_device(big2, big); wait;", runs)?;
    let d2d = wall_ms(&mut e, "acc_memcpy_d2d(big, big, 0, 1);", runs)?;
    outln!(
        "device to device  {mib} MiB (read + write): acc_memcpy_device {:.1} GB/s on one device, acc_memcpy_d2d {:.1} GB/s between two ({:.2} ms, through host memory)",
        gbs(local),
        gbs(d2d),
        d2d.median
    );
    Ok(())
}
