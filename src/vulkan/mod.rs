//! The Vulkan backend: compute constructs run as SPIR-V kernels on Vulkan
//! devices.
//!
//! * [`storage`]: the present table's device storage (a buffer per present
//!   section, transfers);
//! * [`device`]: an opened device (queues and their copy-engine companions,
//!   direct and staged transfers, modules and pipelines by kernel
//!   fingerprint, on-disk pipeline cache);
//! * [`launch`]: one kernel launch;
//! * `prefetch`: kernels compiled on worker threads ahead of their first
//!   launch;
//! * `opener`: devices opened on a thread of their own while the host
//!   works, before their first use.
//!
//! The construct flow (data clauses, reference counts, errors) is the one
//! the host reference uses (`interp::construct::run_construct`); this
//! backend supplies the storage and the launch. Synchronous constructs wait
//! for their work before returning; `async(q)` work is queued on accl queue
//! `q` of the device ([`device`]) and checked for races (`crate::interp::race`).
//!
//! Devices are the GPUs in [`ordered_adapters`] order (the CPU drivers when
//! there is no GPU), or the list in `ACCL_DEVICES` ([`select_devices`]).

pub mod checks;
mod copies;
pub mod device;
pub mod launch;
mod opener;
mod prefetch;
pub mod storage;
pub mod trace;

/// The loop watchdog's default: loop back-edges one kernel invocation may
/// take (about a second of a tight loop on a GPU thread; far more than any
/// shared example needs).
pub const DEFAULT_LOOP_BUDGET: u32 = 1 << 31;

use crate::interp::machine::{Backend, CConstruct, DeviceCode};
use crate::interp::present::{Env, EnvRef, Fault, PresentRow, Table};
use crate::interp::queue::QueueId;
use crate::interp::value::{Flow, Frame, R};
use crate::interp::Ctx;
use lang::{Diag, Span};
use std::cell::RefCell;
use std::rc::Rc;
use stdlib::Array;
use storage::VkStorage;
use vk_runtime::{AdapterInfo, DeviceType, Instance, InstanceOptions};

/// Runs compute constructs on Vulkan devices.
pub struct VulkanBackend {
    table: RefCell<Table<VkStorage>>,
    infos: Vec<AdapterInfo>,
}

/// The adapters with a compute queue, discrete GPUs first (the order of
/// `accl devices` and of device numbers).
pub fn ordered_adapters(instance: &Instance) -> Result<Vec<AdapterInfo>, String> {
    let mut v: Vec<AdapterInfo> = instance
        .adapters()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|a| a.queue_families.iter().any(|q| q.compute))
        .collect();
    let rank = |t: DeviceType| match t {
        DeviceType::DiscreteGpu => 0,
        DeviceType::IntegratedGpu => 1,
        DeviceType::VirtualGpu => 2,
        DeviceType::Other => 3,
        DeviceType::Cpu => 4,
    };
    v.sort_by_key(|a| (rank(a.device_type), a.index));
    Ok(v)
}

/// The devices used when `ACCL_DEVICES` is unset: every GPU, or every CPU
/// driver when there is no GPU. A CPU driver (lavapipe) installed beside a
/// GPU would otherwise become a second device, and work spread over "every
/// device" would wait for it.
pub fn default_devices(adapters: &[AdapterInfo]) -> Vec<AdapterInfo> {
    let gpus: Vec<AdapterInfo> = adapters
        .iter()
        .filter(|a| a.device_type != DeviceType::Cpu)
        .cloned()
        .collect();
    if gpus.is_empty() {
        adapters.to_vec()
    } else {
        gpus
    }
}

/// The accl devices `spec` (the value of `ACCL_DEVICES`) selects from the
/// ordered adapters: a comma-separated list of adapter numbers (`0,2`), or
/// `gpu` (every GPU), `cpu` (every CPU driver) or `all`; empty means the
/// default ([`default_devices`]). A number may repeat:
/// `0,0` opens two logical devices on adapter 0, each with its own present
/// table, queues and memory. That is a testing aid, so that every
/// multi-device path runs on a machine with one GPU or only lavapipe; the
/// devices share the adapter's hardware.
pub fn select_devices(spec: &str, adapters: &[AdapterInfo]) -> Result<Vec<AdapterInfo>, String> {
    let spec = spec.trim();
    let pick = |gpu: bool| -> Vec<AdapterInfo> {
        adapters
            .iter()
            .filter(|a| (a.device_type == DeviceType::Cpu) != gpu)
            .cloned()
            .collect()
    };
    let v = match spec {
        "" => default_devices(adapters),
        "all" => adapters.to_vec(),
        "gpu" => pick(true),
        "cpu" => pick(false),
        list => {
            let mut v = Vec::new();
            for part in list.split(',') {
                let n: usize = part.trim().parse().map_err(|_| {
                    format!("ACCL_DEVICES: `{part}` is not a device number (use e.g. `0,1`, `gpu` or `cpu`)")
                })?;
                let a = adapters.get(n).ok_or_else(|| {
                    format!(
                        "ACCL_DEVICES: there is no device {n} (`accl devices` lists {})",
                        adapters.len()
                    )
                })?;
                v.push(a.clone());
            }
            v
        }
    };
    if v.is_empty() {
        return Err(format!("ACCL_DEVICES=`{spec}` selects no device"));
    }
    Ok(v)
}

impl VulkanBackend {
    /// Open the Vulkan instance and list the devices (each is opened on its
    /// first use). Validation is on when `ACCL_VALIDATION=1`; `ACCL_DEVICES`
    /// selects devices ([`select_devices`]).
    pub fn new() -> Result<VulkanBackend, String> {
        VulkanBackend::with_devices(None)
    }

    /// Like [`VulkanBackend::new`] with the device list `devices` (the
    /// syntax of `ACCL_DEVICES`, which `None` reads).
    pub fn with_devices(devices: Option<&str>) -> Result<VulkanBackend, String> {
        let instance = Instance::new(&InstanceOptions {
            validation: false,
            app_name: "accl".into(),
        })
        .map_err(|e| e.to_string())?;
        let t_adapters = std::time::Instant::now();
        let mut infos = ordered_adapters(&instance)?;
        let started = instance.start_times();
        crate::interp::phases::backend_started(crate::interp::phases::StartParts {
            loader: started.loader,
            instance: started.create,
            adapters: t_adapters.elapsed(),
        });
        if infos.is_empty() {
            return Err("no Vulkan device with a compute queue".into());
        }
        let env = std::env::var("ACCL_DEVICES").ok();
        infos = select_devices(devices.or(env.as_deref()).unwrap_or(""), &infos)?;
        Ok(VulkanBackend::on(instance, infos))
    }

    /// One device the embedding program made (its instance and device are
    /// never destroyed here): device 0 of the backend.
    ///
    /// # Safety
    /// As [`vk_runtime::Instance::from_external`] and
    /// [`vk_runtime::Device::from_external`].
    pub unsafe fn external(
        instance: ash::vk::Instance,
        ext: &vk_runtime::ExternalDevice,
    ) -> Result<VulkanBackend, String> {
        let instance = Instance::from_external(instance).map_err(|e| e.to_string())?;
        let device =
            vk_runtime::Device::from_external(&instance, ext).map_err(|e| e.to_string())?;
        let info = device.info().clone();
        let b = VulkanBackend::on(instance, vec![info]);
        let d = device::DevState::with_device(device)?;
        b.table.borrow_mut().store.devs[0] = Some(d);
        Ok(b)
    }

    fn on(instance: Instance, infos: Vec<AdapterInfo>) -> VulkanBackend {
        let store = VkStorage {
            instance,
            adapters: infos.iter().map(|a| a.index).collect(),
            devs: infos.iter().map(|_| None).collect(),
            opening: infos.iter().map(|_| None).collect(),
            open_ahead: std::env::var_os("ACCL_OPEN_AHEAD").is_none_or(|v| v != "0"),
            opened: 0,
            profiling: false,
            queue: QueueId::Sync,
            span: Span::default(),
            lazy_span: Span::default(),
            names: Default::default(),
            tracker: Default::default(),
            trace: None,
            limits: Default::default(),
            mem_limit: None,
            kernels: device::KernelOptions {
                loop_budget: DEFAULT_LOOP_BUDGET,
                ..Default::default()
            },
            defer_zero: Vec::new(),
            placeholders: Vec::new(),
        };
        VulkanBackend {
            table: RefCell::new(Table::new(store)),
            infos,
        }
    }

    /// The kernel specialisation of device `d` (opening it).
    pub fn spec(&self, d: usize) -> Result<compiler::Spec, String> {
        let mut t = self.table.borrow_mut();
        let (dev, kernels) = t.store.dev_and_kernels(d)?;
        Ok(dev.spec(kernels))
    }
}

impl Backend for VulkanBackend {
    fn name(&self) -> &'static str {
        "vulkan"
    }
    /// Compile the program's kernels for the current device on worker
    /// threads while the host starts running it: the first launch of each
    /// usually finds its pipeline ready (or waits only for the rest of its
    /// compile), and a script's kernels compile side by side instead of one
    /// after another at their first launches. A device still opening
    /// ([`Backend::will_use`]) compiles them as soon as it is open.
    fn prefetch(&self, kernels: &[Rc<DeviceCode>], cx: &Ctx) {
        if !kernels.is_empty() {
            self.table.borrow_mut().store.prefetch(cx.device, kernels);
        }
    }
    /// Open the device on a thread of its own while the program compiles
    /// and its host code runs (`opener.rs`).
    fn will_use(&self, cx: &Ctx, one_queue: bool) {
        self.table
            .borrow_mut()
            .store
            .open_ahead(cx.device, one_queue);
    }
    fn num_devices(&self) -> usize {
        self.infos.len()
    }
    fn env<'a>(&'a self, _cx: &'a mut Ctx) -> EnvRef<'a> {
        EnvRef::Shared(std::cell::RefMut::map(self.table.borrow_mut(), |t| {
            t as &mut dyn Env
        }))
    }
    fn launch(&self, c: &CConstruct, fr: &mut Frame, cx: &mut Ctx) -> R<Flow> {
        launch::launch(&self.table, c, fr, cx)
    }
    fn devices(&self) -> Vec<String> {
        self.infos
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{i}: {} ({})", a.name, a.device_type))
            .collect()
    }
    fn device_props(&self, dev: usize) -> Option<crate::interp::device::DeviceProps> {
        use vk_runtime::DeviceType as T;
        let a = self.infos.get(dev)?;
        Some(crate::interp::device::DeviceProps {
            name: a.name.clone(),
            vendor: match a.vendor_id {
                0x10DE => "NVIDIA".into(),
                0x1002 => "AMD".into(),
                0x8086 => "Intel".into(),
                0x13B5 => "ARM".into(),
                0x5143 => "Qualcomm".into(),
                0x106B => "Apple".into(),
                0x10005 => "Mesa".into(),
                v => format!("0x{v:x}"),
            },
            driver: a.driver.clone(),
            kind: match a.device_type {
                T::DiscreteGpu | T::IntegratedGpu | T::VirtualGpu => "gpu",
                T::Cpu => "cpu",
                T::Other => "other",
            },
            memory: a.device_local_memory,
            free_memory: a.device_local_memory.saturating_sub(
                self.table
                    .try_borrow()
                    .ok()
                    .and_then(|t| {
                        t.store
                            .devs
                            .get(dev)
                            .and_then(|d| d.as_ref().map(|d| d.used.get()))
                    })
                    .unwrap_or(0),
            ),
        })
    }
    fn vulkan_device(&self, dev: usize) -> Result<crate::interop::VulkanDevice, String> {
        let mut t = self.table.borrow_mut();
        let d = t.store.dev(dev)?;
        let h = d.device.raw_handles();
        let q = d.queue(QueueId::Sync)?.vk_queue();
        Ok(crate::interop::VulkanDevice {
            device_number: dev,
            instance: h.instance,
            physical_device: h.physical_device,
            device: h.device,
            api_version: h.api_version,
            queue_family: q.family,
            queue_index: q.index,
            queue_families: d.device.queue_families(),
        })
    }
    fn device_buffers(
        &self,
        cx: &mut Ctx,
        dev: usize,
        a: &stdlib::Array,
    ) -> Result<Vec<crate::interop::DeviceBuffer>, String> {
        let mut t = self.table.borrow_mut();
        let table = &mut *t;
        let Some(m) = table.mapping(dev, a) else {
            return Ok(Vec::new());
        };
        // A section's buffer holds whole rows of its leading-axis range.
        let mut bufs: Vec<_> = m
            .sections
            .iter()
            .map(|(s, sec)| crate::interop::DeviceBuffer {
                device_number: dev,
                buffer: sec.buffer.raw_handle(),
                offset: 0,
                size: (s.bx.hi - s.bx.lo) as u64 * sec.row_bytes,
                first_row: s.bx.lo,
                rows: s.bx.hi - s.bx.lo,
            })
            .collect();
        bufs.sort_by_key(|b| b.first_row);
        // Everything accl queued on the device is done before the host
        // program's own work can start.
        table.store.set_limits(cx.wait_limits());
        let d = table.store.dev(dev)?;
        d.wait_all()?;
        Ok(bufs)
    }
    unsafe fn map_external(
        &self,
        dev: usize,
        a: &stdlib::Array,
        buffer: ash::vk::Buffer,
        size: u64,
    ) -> Result<(), String> {
        use crate::interp::present::Env;
        let mut t = self.table.borrow_mut();
        if t.has_any(dev, a) {
            return Err(format!("it is already present on device {dev}"));
        }
        let sec = t.store.external_section(dev, a, buffer, size)?;
        t.map_external(dev, a, sec);
        Ok(())
    }
    fn present_rows(&self, _cx: &Ctx) -> Vec<PresentRow> {
        self.table.borrow().rows()
    }
    fn last_spirv(&self) -> Option<String> {
        let t = self.table.borrow();
        t.store
            .devs
            .iter()
            .flatten()
            .filter_map(|d| d.last_module.clone())
            .next_back()
            .map(|w| compiler::disassemble(&w))
    }
    fn take_jit_time(&self) -> std::time::Duration {
        let mut t = self.table.borrow_mut();
        t.store
            .devs
            .iter_mut()
            .flatten()
            .map(|d| std::mem::take(&mut d.jit_time))
            .sum()
    }
    fn set_profiling(&self, on: bool) -> Result<(), String> {
        let mut t = self.table.borrow_mut();
        t.store.profiling = on;
        for d in t.store.devs.iter_mut().flatten() {
            d.set_profiling(on)?;
        }
        Ok(())
    }
    fn take_timings(&self) -> Vec<(String, u64)> {
        let mut t = self.table.borrow_mut();
        t.store
            .devs
            .iter_mut()
            .flatten()
            .flat_map(|d| {
                d.queues
                    .iter_mut()
                    .chain(&mut d.copies)
                    .flat_map(|(_, q)| q.take_timings())
            })
            .map(|o| (o.label, o.end_ns.saturating_sub(o.start_ns)))
            .collect()
    }
    fn pending(&self) -> Vec<String> {
        let mut t = self.table.borrow_mut();
        let _ = t.store.refresh();
        let store = &mut t.store;
        let mut out = Vec::new();
        for (i, d) in store.devs.iter_mut().enumerate() {
            let Some(d) = d else { continue };
            for (id, q) in &mut d.queues {
                let done = q.poll().unwrap_or(0);
                let sub = q.submitted_value();
                let open = q.pending_ops();
                if open == 0 && done >= sub {
                    continue;
                }
                out.push(format!(
                    "device {i} {id}: {open} operation(s) recorded and not submitted, {} batch(es) submitted and not finished",
                    sub - done.min(sub)
                ));
            }
        }
        out
    }
    fn begin(
        &self,
        cx: &mut Ctx,
        queue: QueueId,
        span: Span,
        names: &[(u64, std::rc::Rc<str>)],
    ) -> R<()> {
        if queue != QueueId::Sync {
            // Async work follows the synchronous work before it (which the
            // host would have waited for): those kernels complete first.
            self.complete_sync(cx, Some(cx.device), Some(span))?;
        }
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        store.set_limits(cx.wait_limits());
        store.settle(cx.device);
        store.queue = queue;
        store.span = span;
        if store.tracker.is_empty() && store.names.len() > 4096 {
            store.names.clear();
        }
        for (id, n) in names {
            store.names.insert(*id, n.clone());
        }
        Ok(())
    }
    fn complete_sync(&self, cx: &mut Ctx, dev: Option<usize>, span: Option<Span>) -> R<()> {
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        // Asked at every async construct and `clock()`: nothing to do
        // unless some device left synchronous kernels running.
        let open = |i: usize, d: &Option<device::DevState>| {
            dev.is_none_or(|n| n == i) && d.as_ref().is_some_and(|d| d.sync_open())
        };
        if !store.devs.iter().enumerate().any(|(i, d)| open(i, d)) {
            return Ok(());
        }
        let t0 = std::time::Instant::now();
        let span = span.unwrap_or(store.lazy_span);
        store.set_limits(cx.wait_limits());
        for (i, d) in store.devs.iter_mut().enumerate() {
            if !open(i, d) {
                continue;
            }
            let d = d.as_mut().expect("open devices exist");
            d.complete_sync().map_err(|f| {
                crate::interp::error::fault(span, "a synchronous kernel", &f, |m| {
                    Box::new(Diag::error(
                        "accl::device::wait",
                        m,
                        span,
                        "waiting for the synchronous kernels before here",
                    ))
                })
            })?;
        }
        if let Some(tr) = &mut store.trace {
            tr.host(
                format!("completion of synchronous kernels ({})", cx.line_of(span)),
                "wait",
                t0,
            );
        }
        Ok(())
    }
    fn finish_all(&self, cx: &mut Ctx) -> R<()> {
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        let span = store.lazy_span;
        store.set_limits(cx.wait_limits());
        for d in store.devs.iter_mut().flatten() {
            d.wait_all().map_err(|f| {
                crate::interp::error::fault(span, "the device work", &f, |m| {
                    Box::new(Diag::error(
                        "accl::device::wait",
                        m,
                        span,
                        "the device work started by this input",
                    ))
                })
            })?;
        }
        Ok(())
    }
    fn async_test(&self, cx: &mut Ctx, queues: Option<&[i64]>, span: Span) -> R<bool> {
        let done = {
            let mut t = self.table.borrow_mut();
            let fail = |f: Fault| {
                crate::interp::error::fault(span, "the test", &f, |m| {
                    Box::new(Diag::error("accl::device::wait", m, span, "testing here"))
                })
            };
            let d = t.store.dev(cx.device).map_err(fail)?;
            let targets = target_queues(d, queues);
            let mut done = true;
            for q in targets {
                if d.queues.iter().any(|(id, _)| *id == q) && !d.queue_finished(q).map_err(fail)? {
                    done = false;
                    break;
                }
            }
            done
        };
        // Finished: land the results as `wait` does (nothing to wait for).
        if done {
            self.wait(cx, queues, None, span)?;
        }
        Ok(done)
    }
    fn wait(
        &self,
        cx: &mut Ctx,
        queues: Option<&[i64]>,
        join: Option<QueueId>,
        span: Span,
    ) -> R<()> {
        let t0 = std::time::Instant::now();
        self.table.borrow_mut().store.set_limits(cx.wait_limits());
        let r = self.wait_inner(cx, queues, join, span);
        if let Some(t) = &mut self.table.borrow_mut().store.trace {
            let qs = match queues {
                Some(qs) => qs
                    .iter()
                    .map(|q| q.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                None => String::new(),
            };
            let name = match join {
                None if qs.is_empty() => "wait".to_string(),
                None => format!("wait({qs})"),
                Some(q) => format!("wait({qs}) {}: device-side join", q.track()),
            };
            t.host(format!("{name} ({})", cx.line_of(span)), "wait", t0);
        }
        r
    }
    fn start_trace(&self) -> Result<(), String> {
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        let profiling = store.profiling;
        let on = store.devs.iter_mut().flatten().try_for_each(|d| {
            d.set_profiling(true)?;
            d.tracing = true;
            Ok::<(), Fault>(())
        });
        if let Err(f) = on {
            // No half-started trace: every device as it was.
            for d in store.devs.iter_mut().flatten() {
                d.tracing = false;
                let _ = d.set_profiling(profiling);
            }
            return Err(f.into());
        }
        store.trace = Some(trace::TraceLog::new());
        Ok(())
    }
    fn stop_trace(&self) -> Result<String, String> {
        self.finish_trace(true)
    }
    fn take_trace(&self) -> Result<String, String> {
        self.finish_trace(false)
    }
    fn host_access(
        &self,
        _cx: &mut Ctx,
        a: &Array,
        (lo, hi): (usize, usize),
        write: bool,
        span: Span,
    ) -> R<bool> {
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        if store.tracker.is_empty() {
            return Ok(false);
        }
        store.refresh().map_err(|f| {
            crate::interp::error::fault(span, "the array", &f, |m| {
                Box::new(Diag::error("accl::device::wait", m, span, "here"))
            })
        })?;
        store.tracker.host_check(a.id(), lo, hi, write, span)?;
        Ok(!store.tracker.is_empty())
    }
    fn set_wait_limits(&self, limits: crate::interp::WaitLimits) {
        self.table.borrow_mut().store.set_limits(limits);
    }
    fn set_device_memory_limit(&self, bytes: Option<u64>) {
        self.table.borrow_mut().store.mem_limit = bytes;
    }
    fn set_checks(&self, on: bool) {
        self.table.borrow_mut().store.kernels.checks = on;
    }
    fn set_loop_budget(&self, n: u32) {
        self.table.borrow_mut().store.kernels.loop_budget = n;
    }
    fn disable_feature(&self, name: &str) -> Result<(), String> {
        // `subgroups`: no subgroup operations (gangs are whole workgroups).
        if name != "subgroups" && compiler::Features::default().without(name).is_none() {
            return Err(format!(
                "`{name}` is not a device feature accl uses (those are: {}, subgroups)",
                compiler::Features::default()
            ));
        }
        self.table
            .borrow_mut()
            .store
            .kernels
            .disabled
            .push(name.to_string());
        Ok(())
    }
    fn copies_ahead(&self, c: Option<(&CConstruct, &Frame)>) {
        let mut t = self.table.borrow_mut();
        let s = &mut t.store;
        s.defer_zero.clear();
        s.placeholders.clear();
        if let Some((c, fr)) = c {
            (s.defer_zero, s.placeholders) = copies::hidden_copies(c, fr, s.kernels.checks);
        }
    }
    fn has_pending(&self, _cx: &Ctx) -> bool {
        !self.table.borrow().store.tracker.is_empty()
    }
    fn holds_async_work(&self) -> bool {
        let Ok(t) = self.table.try_borrow() else {
            return true;
        };
        t.store.devs.iter().flatten().any(|d| d.holds_async_work())
    }
    fn submit_idle(&self) -> bool {
        let Ok(mut t) = self.table.try_borrow_mut() else {
            return true;
        };
        let mut held = false;
        for d in t.store.devs.iter_mut().flatten() {
            // A failure here (a lost device) is reported by the next wait.
            held |= d.submit_idle().unwrap_or(false);
        }
        held
    }
    fn validation_messages(&self) -> Vec<String> {
        self.table
            .borrow()
            .store
            .instance
            .take_validation_messages()
    }
    fn release_unreachable(&self, _cx: &mut crate::interp::Ctx) -> usize {
        self.table.borrow_mut().release_unreachable()
    }
    fn device_memory_in_use(&self) -> Vec<(u64, u64)> {
        self.table
            .borrow()
            .store
            .devs
            .iter()
            .map(|d| d.as_ref().map_or((0, 0), |d| d.device.memory_in_use()))
            .collect()
    }
}

impl VulkanBackend {
    /// Stop the trace being recorded and return it: after waiting for
    /// every queue (`wait`), or with the device work finished so far,
    /// less what started before the trace did, without waiting for any
    /// (the clock calibration is the last one while a device is busy).
    fn finish_trace(&self, wait: bool) -> Result<String, String> {
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        if store.trace.is_none() {
            return Err("no trace is being recorded".into());
        }
        if wait {
            for d in store.devs.iter_mut().flatten() {
                d.wait_all()?;
            }
        }
        store.refresh()?;
        let mut log = store.trace.take().expect("checked above");
        log.since_start_only = !wait;
        let profiling = store.profiling;
        for (i, d) in store.devs.iter_mut().enumerate() {
            let Some(d) = d else { continue };
            let track = |q: &QueueId, copies: bool| match copies {
                false => q.track(),
                true => format!("{} copies", q.track()),
            };
            let ops: Vec<_> = d
                .queues
                .iter_mut()
                .map(|(id, q)| (track(id, false), q))
                .chain(d.copies.iter_mut().map(|(id, q)| (track(id, true), q)))
                .flat_map(|(t, q)| q.take_timings().into_iter().map(move |o| (t.clone(), o)))
                .collect();
            let (end, seen) = if wait {
                let c = d.calibrate()?;
                d.calibration = Some(c);
                c
            } else {
                d.calibration_now()?
            };
            log.calibrate(i, end, seen);
            for (t, o) in ops {
                log.device(i, t, o.label, o.start_ns, o.end_ns);
            }
            d.tracing = false;
            d.set_profiling(profiling)?;
        }
        drop(t);
        Ok(log.to_json(&self.devices()))
    }

    fn wait_inner(
        &self,
        cx: &mut Ctx,
        queues: Option<&[i64]>,
        join: Option<QueueId>,
        span: Span,
    ) -> R<()> {
        let dev = cx.device;
        let mut t = self.table.borrow_mut();
        let store = &mut t.store;
        let fail = |f: Fault| {
            crate::interp::error::fault(span, "the wait", &f, |m| {
                Box::new(Diag::error("accl::device::wait", m, span, "waiting here"))
            })
        };
        if join.is_none() {
            // The host blocks below: the other devices' held-back work goes
            // out first, so that they compute meanwhile.
            for (i, o) in store.devs.iter_mut().enumerate() {
                if let (true, Some(o)) = (i != dev, o) {
                    o.submit_held().map_err(fail)?;
                }
            }
        }
        let d = store.dev(dev).map_err(fail)?;
        let targets = target_queues(d, queues);
        match join {
            None => {
                let mut waited = Vec::new();
                for q in targets {
                    if d.queues.iter().any(|(id, _)| *id == q) {
                        d.wait_queue(q).map_err(fail)?;
                        waited.push((q, d.queue(q).map_err(fail)?.submitted_value()));
                    }
                }
                for (q, v) in waited {
                    store.tracker.waited(dev, q, v);
                }
            }
            Some(into) => {
                let mut joins = Vec::new();
                for p in targets {
                    if let Some(v) = d.join(into, p).map_err(fail)? {
                        joins.push((p, v));
                    }
                }
                for (p, v) in joins {
                    store.tracker.join(dev, into, p, v);
                }
            }
        }
        store.refresh().map_err(fail)?;
        Ok(())
    }
}

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        // Device memory goes before the devices (the table holds buffers).
        let t0 = std::time::Instant::now();
        let t = self.table.get_mut();
        t.clear();
        let t1 = std::time::Instant::now();
        // Opening threads are joined (their devices go as open ones do).
        t.store.opening.clear();
        t.store.devs.clear();
        crate::interp::phases::backend_ended(crate::interp::phases::EndParts {
            present: t1 - t0,
            devices: t1.elapsed(),
        });
    }
}

/// The queues `wait(queues)` names on device `d` (None: every async queue
/// it has used).
fn target_queues(d: &device::DevState, queues: Option<&[i64]>) -> Vec<QueueId> {
    match queues {
        Some(qs) => qs.iter().map(|&n| QueueId::Async(n)).collect(),
        None => d
            .queues
            .iter()
            .map(|(q, _)| *q)
            .filter(|q| *q != QueueId::Sync)
            .collect(),
    }
}
