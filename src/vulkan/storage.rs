//! Device storage of the present table: one Vulkan storage buffer per
//! present section, holding only the rows of its leading-axis range
//! (kernels index it through a base offset, `compiler::abi`), filled and
//! read back through a persistent host-visible staging buffer. A row
//! section moves in one piece; any other box moves only its elements, one
//! copy region per contiguous run (`device/strided.rs`).
//!
//! Devices are opened on first use, so a script that never leaves device 0
//! pays for one `VkDevice` only; one that a compiled program will use
//! starts opening on a thread of its own (`opener.rs`), joined at its
//! first use.

use super::device::DevState;
use super::opener::Opening;
use crate::interp::machine::DeviceCode;
use crate::interp::present::{DeviceBox, EnvError, Fault, Region, Storage};
use crate::interp::queue::QueueId;
use crate::interp::race::{Access, Tracker};
use crate::interp::region::paired_runs;
use lang::Span;
use std::cell::Cell;
use std::rc::Rc;
use stdlib::Array;
use vk_runtime::{Buffer, CopyRegion, Instance};

/// The storage of one present section.
pub struct SecBuf {
    pub buffer: Buffer,
    /// Bytes of one row of the leading axis.
    pub row_bytes: u64,
    /// Not yet cleared: a `create` of a hidden array of private copies
    /// ([`VkStorage::defer_zero`]), cleared by the first launch that may
    /// read it.
    pub unzeroed: Rc<Cell<bool>>,
    /// Four bytes standing for a hidden array of private copies that every
    /// lane keeps in itself ([`VkStorage::placeholders`]): no launch may
    /// read it.
    pub placeholder: bool,
    _charge: Charge,
}

/// Bytes counted against a device's memory budget while a section lives.
struct Charge {
    used: Rc<Cell<u64>>,
    bytes: u64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.used.set(self.used.get().saturating_sub(self.bytes));
    }
}

/// Every device of the backend, opened lazily.
pub struct VkStorage {
    pub instance: Instance,
    /// accl device number → adapter index in `instance.adapters()`.
    pub adapters: Vec<usize>,
    pub devs: Vec<Option<DevState>>,
    /// Devices being opened on a thread of their own, by device number.
    pub opening: Vec<Option<Opening>>,
    /// Devices a compiled program will use start opening at once
    /// (`ACCL_OPEN_AHEAD=0`: at their first use, for measuring).
    pub open_ahead: bool,
    /// How many devices were opened, either way (for tests).
    pub opened: u32,
    /// Timestamps on for devices opened from now on.
    pub profiling: bool,
    /// The queue the current construct's operations go on, and its span.
    pub queue: QueueId,
    pub span: Span,
    /// The construct of the last synchronous kernel left to complete
    /// lazily (where a fault found at the end of the input is shown).
    pub lazy_span: Span,
    /// Variable names of arrays, by array id, for race diagnostics.
    pub names: rustc_hash::FxHashMap<u64, Rc<str>>,
    pub tracker: Tracker,
    /// The timeline trace being recorded, if any.
    pub trace: Option<super::trace::TraceLog>,
    /// What may stop a host wait (the running input's limits); every open
    /// device has a copy ([`VkStorage::set_limits`]).
    pub limits: crate::interp::WaitLimits,
    /// The embedder's cap on device memory per device, in bytes.
    pub mem_limit: Option<u64>,
    /// How kernels compiled from now on are specialised.
    pub kernels: super::device::KernelOptions,
    /// Arrays of private copies whose `create` is being entered: their
    /// storage is cleared at the first launch that reads it rather than at
    /// once, since a launch that keeps every lane's copy in the lane never
    /// does (set around a compute construct's data entry).
    pub defer_zero: Vec<u64>,
    /// Of those, the ones every lane of the launch keeps in itself (a
    /// function-local array, `compiler::private_copies::local_sizes`): a
    /// placeholder stands for their storage.
    pub placeholders: Vec<u64>,
}

impl VkStorage {
    /// The state of device `dev`, opening it on first use.
    pub fn dev(&mut self, dev: usize) -> Result<&mut DevState, Fault> {
        let Some(&adapter) = self.adapters.get(dev) else {
            return Err(Fault::Failed(format!("there is no device {dev}")));
        };
        if self.devs[dev].is_none() {
            let t0 = crate::interp::phases::clock();
            let (mut d, behind) = match self.opening[dev].take() {
                Some(o) => {
                    let (d, took) = o.join(&self.kernels)?;
                    (d, Some(took))
                }
                None => (DevState::open(&self.instance, adapter)?, None),
            };
            crate::interp::phases::opened(t0, behind, d.open_parts());
            self.opened += 1;
            if self.profiling || self.trace.is_some() {
                d.set_profiling(true)?;
            }
            d.tracing = self.trace.is_some();
            if d.tracing {
                // Idle now: a later trace that must not wait for busy
                // queues has a calibration to use.
                let c = d.calibrate()?;
                d.calibration = Some(c);
            }
            d.limits = self.limits.clone();
            self.devs[dev] = Some(d);
        }
        Ok(self.devs[dev].as_mut().expect("opened above"))
    }

    /// A program that uses device `dev` is being compiled: start opening
    /// it on a thread, unless it is open or opening (`one_queue`: for work
    /// on one compute queue, `vk_runtime::Device::for_sync_work`).
    pub fn open_ahead(&mut self, dev: usize, one_queue: bool) {
        let Some(&adapter) = self.adapters.get(dev) else {
            return;
        };
        let idle =
            self.devs[dev].is_none() && !matches!(self.opening[dev], Some(Opening::Running(_)));
        if self.open_ahead && idle {
            self.opening[dev] = Opening::start(&self.instance, adapter, &self.kernels, one_queue);
        }
    }

    /// A program with `kernels` for device `dev` was compiled: start
    /// compiling them for the device (by the thread that opens it, if it
    /// is opening; else opening it now).
    pub fn prefetch(&mut self, dev: usize, kernels: &[Rc<DeviceCode>]) {
        if dev >= self.devs.len() {
            return;
        }
        if let Some(Opening::Running(r)) = &mut self.opening[dev] {
            if !r.ready() {
                return r.compile(kernels);
            }
        }
        let opening = self.opening[dev].is_some();
        // Open (a thread that is done is joined without a wait).
        match self.dev_and_kernels(dev) {
            Ok((d, options)) => d.prefetch(kernels, options),
            // The device's use reports why it cannot be opened.
            Err(f) if opening => self.opening[dev] = Some(Opening::Failed(f)),
            Err(_) => {}
        }
    }

    /// Join device `dev`'s opening thread, if it has one, before an
    /// operation on it starts (so that its timing holds no wait for the
    /// device); a failure is reported by the device's next use.
    pub fn settle(&mut self, dev: usize) {
        if let Some(Some(Opening::Running(_))) = self.opening.get(dev) {
            if let Err(f) = self.dev(dev) {
                self.opening[dev] = Some(Opening::Failed(f));
            }
        }
    }

    /// Device `dev` (opened on first use) and the kernel options to
    /// specialise for it.
    pub fn dev_and_kernels(
        &mut self,
        dev: usize,
    ) -> Result<(&mut DevState, &super::device::KernelOptions), Fault> {
        self.dev(dev)?;
        let d = self.devs[dev].as_mut().expect("opened above");
        Ok((d, &self.kernels))
    }

    /// The limits host waits honour, on every device (opened or not yet).
    pub fn set_limits(&mut self, limits: crate::interp::WaitLimits) {
        // Set at every construct, where most of the time only the
        // operation count moved.
        if limits.same_stops(&self.limits) {
            for d in self.devs.iter_mut().flatten() {
                d.limits.ops = limits.ops;
            }
            self.limits.ops = limits.ops;
            return;
        }
        for d in self.devs.iter_mut().flatten() {
            d.limits = limits.clone();
        }
        self.limits = limits;
    }

    /// Apply the async copies that completed. (What the race tracker
    /// remembers goes only when the program waits: races are found by the
    /// program's order, whatever the device's timing.)
    pub fn refresh(&mut self) -> Result<(), Fault> {
        for (i, d) in self.devs.iter_mut().enumerate() {
            if let Some(d) = d {
                if let Some(t) = &mut self.trace {
                    for (q, v, at) in d.submits.drain(..) {
                        t.submit(i, q, v, at);
                    }
                    for (name, ahead, start, end) in d.compiles.drain(..) {
                        t.compile(i, &name, ahead, start, end);
                    }
                }
                d.observe()?;
            }
        }
        Ok(())
    }

    fn name(&self, a: &Array) -> Rc<str> {
        self.names
            .get(&a.id())
            .cloned()
            .unwrap_or_else(|| Rc::from("an array"))
    }

    /// Before an operation of the current construct on `dev` that does
    /// `accesses`: an error if one races with pending work; else the
    /// timeline value the operation will complete at (None on the
    /// synchronous queue).
    pub fn guard(
        &mut self,
        dev: usize,
        accesses: &[Access],
        what: &str,
    ) -> Result<Option<u64>, EnvError> {
        // No refresh: races are decided by program order, and applying
        // finished copies here would put host memcpys on the launch path.
        self.tracker
            .check_all(dev, self.queue, accesses, self.span, what)
            .map_err(EnvError::Race)?;
        match self.queue {
            QueueId::Sync => Ok(None),
            q => {
                let d = self.dev(dev).map_err(EnvError::Device)?;
                d.order_after_copies(q, accesses)
                    .map_err(EnvError::Device)?;
                d.next_value(q).map(Some).map_err(EnvError::Device)
            }
        }
    }

    /// After an async operation: remember what it touches until it
    /// completes, at the timeline value that covers it now that it is
    /// recorded (`guard`'s `value` only says it is async). That is not
    /// always the batch that was open before: the operation may have been
    /// submitted with it, or gone to the queue's copy-engine companion,
    /// which follows the queue's submitted work; waits and joins of the
    /// value cover it either way.
    pub fn record(&mut self, dev: usize, value: Option<u64>, acc: Access, what: &'static str) {
        let queue = self.queue;
        let value = value.map(|v| {
            self.dev(dev)
                .and_then(|d| d.recorded_value(queue))
                .unwrap_or(v)
        });
        if let Some(v) = value {
            self.tracker
                .record(dev, self.queue, v, acc, self.span, what);
        }
    }
}

impl VkStorage {
    /// The storage of all of `host` in an embedder's buffer on `dev`.
    ///
    /// # Safety
    /// As [`Buffer::from_external`].
    pub unsafe fn external_section(
        &mut self,
        dev: usize,
        host: &Array,
        raw: ash::vk::Buffer,
        size: u64,
    ) -> Result<SecBuf, String> {
        let d = self.dev(dev)?;
        let rb = row_bytes(host);
        let need = rb * host.shape()[0] as u64;
        if size < need {
            return Err(format!(
                "the buffer has {size} bytes; the array needs {need}"
            ));
        }
        let max = d.device.info().limits.max_storage_buffer_range;
        if need > max {
            return Err(format!(
                "the array needs {need} bytes, more than the device's largest storage buffer ({max} bytes)"
            ));
        }
        let buffer =
            Buffer::from_external(&d.device, raw, need.max(4).min(size), "embedder's buffer");
        Ok(SecBuf {
            buffer,
            row_bytes: rb,
            unzeroed: Rc::default(),
            placeholder: false,
            _charge: Charge {
                used: d.used.clone(),
                bytes: 0,
            },
        })
    }

    /// A copy of rows `r` between `host` and the section's buffer.
    fn transfer_rows(
        &mut self,
        dev: usize,
        sec: &SecBuf,
        sec_lo: usize,
        host: &Array,
        r: &Region,
        to_host: bool,
    ) -> Result<(), EnvError> {
        let (lo, hi) = (r.lo, r.hi);
        let (acc, what) = Access::copy(host.id(), self.name(host), (lo, hi), to_host);
        let value = self.guard(dev, std::slice::from_ref(&acc), what)?;
        let queue = self.queue;
        let d = self.dev(dev).map_err(EnvError::Device)?;
        let rb = sec.row_bytes;
        if !r.is_rows() {
            let (base, runs) = (sec_lo * rb as usize, byte_runs(host, r));
            if to_host {
                d.download_runs(queue, &sec.buffer, base, host, &runs)
            } else {
                d.upload_runs(queue, &sec.buffer, base, host, &runs)
            }
            .map_err(EnvError::Device)?;
            self.record(dev, value, acc, what);
            return Ok(());
        }
        let off = (lo - sec_lo) as u64 * rb;
        let (a, b) = ((lo as u64 * rb) as usize, (hi as u64 * rb) as usize);
        if to_host {
            d.download_into(queue, &sec.buffer, off, host, a, b - a)
                .map_err(EnvError::Device)?;
        } else {
            d.upload(queue, &sec.buffer, off, host, a, b - a)
                .map_err(EnvError::Device)?;
        }
        self.record(dev, value, acc, what);
        Ok(())
    }
}

fn row_bytes(host: &Array) -> u64 {
    (host.row_len() * host.scalar().size()) as u64
}

/// The contiguous runs of box `r` of `host` in bytes: `(offset, length)`.
fn byte_runs(host: &Array, r: &Region) -> Vec<(usize, usize)> {
    let size = host.scalar().size();
    r.runs(host.shape())
        .map(|(start, n)| (start * size, n * size))
        .collect()
}

impl Storage for VkStorage {
    type Arr = ();
    type Sec = SecBuf;

    fn new_array(&mut self, _dev: usize, _host: &Array) -> Result<(), EnvError> {
        Ok(())
    }

    fn new_section(
        &mut self,
        dev: usize,
        _arr: &mut (),
        host: &Array,
        r: &Region,
        copyin: bool,
    ) -> Result<SecBuf, EnvError> {
        let (lo, hi) = (r.lo, r.hi);
        let (acc, what) = Access::allocation(host.id(), self.name(host), (lo, hi), copyin);
        let value = self.guard(dev, std::slice::from_ref(&acc), what)?;
        let queue = self.queue;
        let mem_limit = self.mem_limit;
        let addresses_off = self
            .kernels
            .disabled
            .iter()
            .any(|f| f == "bufferDeviceAddress");
        let defer_zero = self.defer_zero.contains(&host.id());
        let placeholder = self.placeholders.contains(&host.id());
        let traced = self.trace.is_some();
        let d = self.dev(dev).map_err(EnvError::Device)?;
        let rb = row_bytes(host);
        let bytes = (hi - lo) as u64 * rb;
        // Kernels reach a buffer past one binding by its address.
        let (max, limit) = if addresses_off {
            (
                d.device.info().limits.max_storage_buffer_range,
                "maxStorageBufferRange",
            )
        } else {
            Buffer::max_size(&d.device)
        };
        if bytes > max {
            return Err(EnvError::Device(Fault::Failed(format!(
                "{} needs {bytes} bytes on the device, more than its largest buffer \
                 ({max} bytes, {limit}); keep a smaller section of it on the \
                 device at a time (`copyin(a[lo:n])`)",
                if lo == 0 && hi == host.shape()[0] {
                    "the array".to_string()
                } else {
                    format!("the section [{lo}:{}]", hi - lo)
                }
            ))));
        }
        // At least 4 bytes and a multiple of 4: a `u8` array of any length
        // can be bound and filled.
        let size = match placeholder {
            true => 4,
            false => bytes.max(4).div_ceil(4) * 4,
        };
        // Refused before the driver is asked: a driver that overcommits
        // (lavapipe takes system memory) would fail later, or never.
        let heap = d.device.info().device_local_memory;
        let used = d.used.get();
        let budget = mem_limit.map_or(heap, |l| l.min(heap));
        let section = || {
            if lo == 0 && hi == host.shape()[0] {
                format!("all {hi} rows")
            } else {
                format!("rows {lo}..{hi} of {}", host.shape()[0])
            }
        };
        if used.saturating_add(size) > budget {
            let cap = match mem_limit {
                Some(l) if l < heap => format!(", capped at {l} by the embedder"),
                _ => String::new(),
            };
            return Err(EnvError::Device(Fault::OutOfMemory(format!(
                "{} need {size} bytes, but the device has {heap} bytes of memory{cap} \
                 and accl's arrays use {used} of them",
                section()
            ))));
        }
        let buffer = Buffer::new(&d.device, size, "accl array").map_err(|e| {
            EnvError::Device(match Fault::from(e) {
                Fault::OutOfMemory(m) => Fault::OutOfMemory(format!(
                    "{} need {size} bytes and the driver refused them ({m}); \
                     accl's arrays use {used} bytes of the device's {heap}",
                    section()
                )),
                f => f,
            })
        })?;
        d.used.set(used + size);
        let sec = SecBuf {
            buffer,
            row_bytes: rb,
            unzeroed: Rc::default(),
            placeholder,
            _charge: Charge {
                used: d.used.clone(),
                bytes: size,
            },
        };
        let t_copy = (copyin && traced).then(std::time::Instant::now);
        if copyin && r.is_rows() {
            let (a, b) = ((lo as u64 * rb) as usize, (hi as u64 * rb) as usize);
            d.upload(queue, &sec.buffer, 0, host, a, b - a)
                .map_err(EnvError::Device)?;
        } else if copyin {
            // The rows outside the box read as zeros, as the host
            // reference's device copy does before anything is copied in.
            d.zero(queue, &sec.buffer).map_err(EnvError::Device)?;
            d.upload_runs(
                queue,
                &sec.buffer,
                lo * rb as usize,
                host,
                &byte_runs(host, r),
            )
            .map_err(EnvError::Device)?;
        } else if placeholder {
            // Nothing to clear: no launch reads it.
        } else if defer_zero {
            // Copies a launch may keep in its lanes instead: cleared when
            // one reads them (`launch::clear_copies`).
            sec.unzeroed.set(true);
        } else {
            // `create` storage reads as zeros, as the host reference's does.
            d.zero(queue, &sec.buffer).map_err(EnvError::Device)?;
        }
        if let (Some(t0), Some(t)) = (t_copy, &mut self.trace) {
            // The host's side of the copy in (a synchronous one waits for
            // it), as `transfer` shows an update's.
            let name = self.names.get(&host.id()).cloned();
            let name = name.as_deref().unwrap_or("an array");
            t.host(
                format!(
                    "copy {name} to the device on device {dev} {}",
                    queue.track()
                ),
                "host copy",
                t0,
            );
        }
        self.record(dev, value, acc, what);
        Ok(sec)
    }

    fn transfer(
        &mut self,
        dev: usize,
        _arr: &(),
        sec: &SecBuf,
        sec_lo: usize,
        host: &Array,
        r: &Region,
        to_host: bool,
    ) -> Result<(), EnvError> {
        let t0 = self.trace.is_some().then(std::time::Instant::now);
        self.transfer_rows(dev, sec, sec_lo, host, r, to_host)?;
        if let (Some(t), Some(t0)) = (&mut self.trace, t0) {
            // The host's side of a copy: an async one that takes long here
            // is waiting for something (a full queue, the driver).
            let dir = if to_host {
                "to the host"
            } else {
                "to the device"
            };
            let name = self.names.get(&host.id()).cloned();
            let name = name.as_deref().unwrap_or("an array");
            t.host(
                format!("copy {name} {dir} on device {dev} {}", self.queue.track()),
                "host copy",
                t0,
            );
        }
        Ok(())
    }

    fn copy_device(
        &mut self,
        dev: usize,
        dst: DeviceBox<'_, Self>,
        src: DeviceBox<'_, Self>,
    ) -> Result<(), EnvError> {
        let accs = Access::device_copy(
            (src.host.id(), self.name(src.host), (src.r.lo, src.r.hi)),
            (dst.host.id(), self.name(dst.host), (dst.r.lo, dst.r.hi)),
        );
        let what = "device-to-device copy";
        let value = self.guard(dev, &accs, what)?;
        let queue = self.queue;
        let size = src.host.scalar().size() as u64;
        // Offsets into each section's buffer, which starts at its first row.
        let (dbase, sbase) = (
            dst.sec_lo as u64 * dst.sec.row_bytes,
            src.sec_lo as u64 * src.sec.row_bytes,
        );
        let pieces = paired_runs((dst.r, dst.host.shape()), (src.r, src.host.shape()));
        let d = self.dev(dev).map_err(EnvError::Device)?;
        let same = std::ptr::eq(dst.sec, src.sec);
        // Boxes of one buffer (which may overlap) go through a scratch
        // buffer: a copy's regions may not share a buffer.
        let scratch = if same {
            let bytes = pieces.iter().map(|p| p.2 as u64).sum::<u64>() * size;
            Some(
                Buffer::new(&d.device, bytes.max(4), "device copy scratch")
                    .map_err(|e| EnvError::Device(e.into()))?,
            )
        } else {
            None
        };
        let q = d.queue(queue).map_err(EnvError::Device)?;
        q.set_label("copy device to device");
        let vk = |e: vk_runtime::VkError| EnvError::Device(e.into());
        match &scratch {
            None => {
                let regions: Vec<CopyRegion> = pieces
                    .iter()
                    .map(|&(dt, sf, n)| CopyRegion {
                        src_offset: sf as u64 * size - sbase,
                        dst_offset: dt as u64 * size - dbase,
                        size: n as u64 * size,
                    })
                    .collect();
                q.copy_regions(&src.sec.buffer, &dst.sec.buffer, &regions)
                    .map_err(vk)?;
            }
            Some(tmp) => {
                let (mut into, mut out) = (Vec::new(), Vec::new());
                let mut at = 0;
                for &(dt, sf, n) in &pieces {
                    let bytes = n as u64 * size;
                    into.push(CopyRegion {
                        src_offset: sf as u64 * size - sbase,
                        dst_offset: at,
                        size: bytes,
                    });
                    out.push(CopyRegion {
                        src_offset: at,
                        dst_offset: dt as u64 * size - dbase,
                        size: bytes,
                    });
                    at += bytes;
                }
                q.copy_regions(&src.sec.buffer, tmp, &into).map_err(vk)?;
                q.copy_regions(tmp, &dst.sec.buffer, &out).map_err(vk)?;
            }
        }
        d.settle(queue).map_err(EnvError::Device)?;
        let [a, b] = accs;
        self.record(dev, value, a, what);
        self.record(dev, value, b, what);
        Ok(())
    }

    fn release(
        &mut self,
        dev: usize,
        host: &Array,
        lo: usize,
        hi: usize,
        copyout: bool,
    ) -> Result<(), EnvError> {
        if self.tracker.is_empty() {
            return Ok(());
        }
        // Freeing is a write of the device copy; the memory itself stays
        // alive until queued work using it retires (the queues hold it).
        let acc = Access::release(host.id(), self.name(host), (lo, hi), copyout);
        self.refresh().map_err(EnvError::Device)?;
        self.tracker
            .check(dev, self.queue, &acc, self.span, "release of device memory")
            .map_err(EnvError::Race)
    }
}
