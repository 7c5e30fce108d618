//! Host <-> device copy bandwidth by kind of host memory and by how many
//! copy engines share a transfer, to find what holds direct copies below
//! the PCIe ceiling on a real GPU (not run in CI):
//!
//!     cargo run --release -p vk-runtime --example host_copies [MiB..] [-- reps]
//!
//! Host memory kinds: `vec` (a plain zeroed allocation, imported with
//! VK_EXT_external_memory_host), `thp` (an anonymous mapping aligned to
//! 2 MiB and advised MADV_HUGEPAGE before it is touched, imported),
//! `nothp` (the same advised MADV_NOHUGEPAGE) and `driver` (a staging
//! buffer the driver allocates: host-cached system memory). Each line: wall clock around one copy
//! submitted and waited for, median of the runs.

use std::time::{Duration, Instant};
use vk_runtime::{
    Buffer, Device, GpuBuffer, HostBuffer, Instance, InstanceOptions, Queue, StagingBuffer,
    StagingKind,
};

const HUGE: usize = 2 << 20;

/// Host memory that an import may point into.
struct Mapping {
    base: *mut u8,
    map_len: usize,
    ptr: *mut u8,
}

impl Mapping {
    fn new(len: usize, advice: Option<libc::c_int>) -> Mapping {
        let map_len = len + HUGE;
        // SAFETY: a fresh private anonymous mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(base != libc::MAP_FAILED, "mmap failed");
        let base = base as *mut u8;
        let ptr = base.wrapping_add((HUGE - base as usize % HUGE) % HUGE);
        if let Some(a) = advice {
            // SAFETY: the range lies inside the mapping.
            let r = unsafe { libc::madvise(ptr as *mut _, len, a) };
            if r != 0 {
                eprintln!("madvise({a}) failed: {}", std::io::Error::last_os_error());
            }
        }
        // Touch every page so that the import pins resident memory.
        // SAFETY: inside the mapping.
        let s = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        for (i, b) in s.iter_mut().enumerate().step_by(4096) {
            *b = i as u8;
        }
        Mapping { base, map_len, ptr }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; no import outlives it (callers
        // drop their imports and wait for their queues first).
        unsafe { libc::munmap(self.base as *mut _, self.map_len) };
    }
}

fn anon_huge_kib() -> String {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_string())
        })
        .unwrap_or_else(|| "?".into())
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2]
}

/// GB/s of copying `len` bytes between `host` and `dev`, split evenly
/// over `queues`, each queue's share in `split` vkCmdCopyBuffer commands.
#[allow(clippy::too_many_arguments)]
fn time_copies(
    queues: &mut [Queue],
    split: u64,
    host: &dyn GpuBuffer,
    host_off: u64,
    dev: &Buffer,
    len: u64,
    to_device: bool,
    reps: usize,
) -> f64 {
    let k = queues.len() as u64 * split;
    let piece = (len / k).div_ceil(256) * 256;
    let mut t = Vec::new();
    for r in 0..reps + 1 {
        let t0 = Instant::now();
        let mut vals = Vec::new();
        for (i, q) in queues.iter_mut().enumerate() {
            for j in 0..split {
                let at = (i as u64 * split + j) * piece;
                let n = piece.min(len - at.min(len));
                if n == 0 {
                    continue;
                }
                if to_device {
                    q.copy_buffer(host, host_off + at, dev, at, n).unwrap();
                } else {
                    q.copy_buffer(dev, at, host, host_off + at, n).unwrap();
                }
            }
            vals.push(q.submit().unwrap());
        }
        for (q, v) in queues.iter_mut().zip(vals) {
            q.host_wait(v, Duration::MAX).unwrap();
        }
        if r > 0 {
            t.push(t0.elapsed().as_secs_f64());
        }
    }
    len as f64 / median(t) / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (sizes, reps) = match args.iter().position(|a| a == "--") {
        Some(p) => (&args[..p], args[p + 1].parse().unwrap()),
        None => (&args[..], 9usize),
    };
    let sizes: Vec<usize> = if sizes.is_empty() {
        vec![256, 8192]
    } else {
        sizes.iter().map(|s| s.parse().unwrap()).collect()
    };
    println!(
        "THP: {}",
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default()
            .trim()
    );
    let inst = Instance::new(&InstanceOptions::default()).unwrap();
    let dev = Device::new(&inst, 0).unwrap();
    println!(
        "device: {}; transfer-only queues: {}",
        dev.info().name,
        dev.transfer_queues().len()
    );
    let hw: Vec<_> = {
        let t = dev.transfer_queues();
        if t.is_empty() {
            dev.compute_queues()
        } else {
            t
        }
    };
    for q in &hw {
        println!("  transfer queue: family {} index {}", q.family, q.index);
    }
    let mut one = vec![Queue::on_vk_queue(&dev, hw[0]).unwrap()];
    let mut fams: Vec<Queue> = {
        let mut seen = Vec::new();
        hw.iter()
            .filter(|q| {
                let new = !seen.contains(&q.family);
                seen.push(q.family);
                new
            })
            .map(|&h| Queue::on_vk_queue(&dev, h).unwrap())
            .collect()
    };
    let mut all: Vec<Queue> = hw
        .iter()
        .map(|&h| Queue::on_vk_queue(&dev, h).unwrap())
        .collect();
    let mut two: Vec<Queue> = hw
        .iter()
        .take(2)
        .map(|&h| Queue::on_vk_queue(&dev, h).unwrap())
        .collect();
    let mut compute = vec![Queue::new(&dev, 0).unwrap()];
    for &mib in &sizes {
        let len = mib << 20;
        let d = Buffer::new(&dev, len as u64, "dst").unwrap();
        let mut line = |what: &str, host: &dyn GpuBuffer, off: u64| {
            for (qn, which, split) in [
                ("1 copy queue", 0, 1),
                ("1 q 8 pieces", 0, 8),
                ("1 q 64 pieces", 0, 64),
                ("2 copy queues", 1, 1),
                ("1 per family", 2, 1),
                ("all transfer", 3, 1),
                ("compute queue", 4, 1),
            ] {
                let qs: &mut [Queue] = match which {
                    0 => &mut one,
                    1 => &mut two,
                    2 => &mut fams,
                    3 => &mut all,
                    _ => &mut compute,
                };
                let up = time_copies(qs, split, host, off, &d, len as u64, true, reps);
                let down = time_copies(qs, split, host, off, &d, len as u64, false, reps);
                println!("{mib:>6} MiB {what:<8} {qn:<14} H2D {up:6.1} GB/s  D2H {down:6.1} GB/s");
            }
        };
        {
            let v = vec![1u8; len];
            // SAFETY: `v` outlives the import; the queues are idle at the end.
            match unsafe { HostBuffer::import(&dev, v.as_ptr(), len, "vec") }.unwrap() {
                Some(hb) => line("vec", &hb, hb.offset()),
                None => println!("{mib:>6} MiB vec: the driver does not import this size"),
            }
        }
        for (name, adv) in [
            ("thp", Some(libc::MADV_HUGEPAGE)),
            ("nothp", Some(libc::MADV_NOHUGEPAGE)),
        ] {
            let m = Mapping::new(len, adv);
            println!("  {name}: AnonHugePages {} kB", anon_huge_kib());
            // SAFETY: the mapping outlives the import.
            match unsafe { HostBuffer::import(&dev, m.ptr, len, name) }.unwrap() {
                Some(hb) => line(name, &hb, hb.offset()),
                None => println!("{mib:>6} MiB {name}: the driver does not import this size"),
            }
            // Every copy was waited for: no queue still uses the mapping.
            drop(m);
        }
        // Host memory the driver allocates and pins itself (the download
        // kind: host-cached system memory; the upload kind may be device
        // memory the host can map, which no PCIe copy crosses).
        if let Ok(s) = StagingBuffer::new(&dev, len as u64, StagingKind::Download, "driver") {
            line("driver", &s, 0);
        } else {
            println!("{mib:>6} MiB driver: no staging buffer of this size");
        }
    }
}
