//! The Vulkan backend: compute constructs run as SPIR-V kernels on Vulkan
//! devices (DESIGN.md 2.1).
//!
//! * [`storage`]: the present table's device storage (a buffer per present
//!   section, staging transfers);
//! * [`device`]: an opened device (queue, staging, modules, pipelines,
//!   on-disk pipeline cache);
//! * [`launch`]: one kernel launch.
//!
//! The construct flow (data clauses, reference counts, errors) is the one
//! the host reference uses (`interp::construct::run_construct`); this
//! backend supplies the storage and the launch. Work is synchronous: every
//! transfer and kernel is waited for before the construct returns.

pub mod device;
pub mod launch;
pub mod storage;

use crate::interp::construct::{Backend, CConstruct, EnvRef, PresentRow};
use crate::interp::present::{Env, Table};
use crate::interp::value::{Flow, Frame, R};
use crate::interp::Ctx;
use std::cell::RefCell;
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

impl VulkanBackend {
    /// Open the Vulkan instance and list the devices (each is opened on its
    /// first use). Validation is on when `ACCL_VALIDATION=1`.
    pub fn new() -> Result<VulkanBackend, String> {
        let instance = Instance::new(&InstanceOptions {
            validation: false,
            app_name: "accl".into(),
        })
        .map_err(|e| e.to_string())?;
        let infos = ordered_adapters(&instance)?;
        if infos.is_empty() {
            return Err("no Vulkan device with a compute queue".into());
        }
        let store = VkStorage {
            instance,
            adapters: infos.iter().map(|a| a.index).collect(),
            devs: infos.iter().map(|_| None).collect(),
            profiling: false,
        };
        Ok(VulkanBackend {
            table: RefCell::new(Table::new(store)),
            infos,
        })
    }

    /// The kernel specialisation of device `d` (opening it).
    pub fn spec(&self, d: usize) -> Result<compiler::Spec, String> {
        Ok(self.table.borrow_mut().store.dev(d)?.spec())
    }
}

impl Backend for VulkanBackend {
    fn name(&self) -> &'static str {
        "vulkan"
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
            d.queue.enable_timestamps(on).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
    fn take_timings(&self) -> Vec<(String, u64)> {
        let mut t = self.table.borrow_mut();
        t.store
            .devs
            .iter_mut()
            .flatten()
            .flat_map(|d| d.queue.take_timings())
            .map(|o| (o.label, o.end_ns.saturating_sub(o.start_ns)))
            .collect()
    }
    fn validation_messages(&self) -> Vec<String> {
        self.table
            .borrow()
            .store
            .instance
            .take_validation_messages()
    }
}

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        // Device memory goes before the devices (the table holds buffers).
        let t = self.table.get_mut();
        t.clear();
        t.store.devs.clear();
    }
}
