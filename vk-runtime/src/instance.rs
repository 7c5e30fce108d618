//! The one `VkInstance` of a process, the validation-message sink, and the
//! description of every compute-capable adapter.
//!
//! Shape: [`Instance`] is a cheap, clonable handle onto an
//! `Arc<InstanceShared>`; every [`crate::Device`] keeps such an `Arc`, so the
//! instance is destroyed only after its last device (the full
//! teardown order is written down in `lib.rs`). The debug messenger's
//! callback appends WARNING and ERROR messages to an `Arc<Mutex<Vec<String>>>`
//! instead of printing them: tests assert that the list is empty, and the
//! same messenger is chained into `VkInstanceCreateInfo` so messages emitted
//! while the instance itself is created or destroyed are caught as well.
//!
//! [`AdapterInfo`] is plain data read once from the driver (properties,
//! limits, features, queue families) so that callers — the SPIR-V emitter
//! choosing work-group sizes, `accl devices` printing them — never need ash.

use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::sync::{Arc, Mutex};

use ash::vk;

use crate::error::{vkerr, Result, VkError};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to create the [`Instance`].
#[derive(Clone, Debug, Default)]
pub struct InstanceOptions {
    /// Enable `VK_LAYER_KHRONOS_validation` and record its messages (also
    /// turned on by the environment variable `ACCL_VALIDATION=1`; with
    /// validation on, `ACCL_SYNC_VALIDATION=1` also enables the layer's
    /// synchronization validation).
    pub validation: bool,
    /// Application name reported to the driver.
    pub app_name: String,
}

pub(crate) type MessageSink = Arc<Mutex<Vec<String>>>;

/// Shared internals of an [`Instance`]; devices hold an `Arc` of it.
pub(crate) struct InstanceShared {
    /// Keeps the loader library loaded while the instance exists.
    #[allow(dead_code)]
    pub(crate) entry: ash::Entry,
    pub(crate) raw: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Owned by the instance, pointed to by the messenger's user data: it
    /// must outlive the messenger and the instance (dropped after both).
    messages: MessageSink,
    pub(crate) validation: bool,
    /// Made by the program that embeds accl ([`Instance::from_external`]):
    /// never destroyed here.
    external: bool,
    start_times: StartTimes,
}

/// Where the time to make an instance went: on an NVIDIA GPU most of it is
/// the driver's libraries loading.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StartTimes {
    /// Loading the Vulkan loader library and asking what it offers.
    pub loader: std::time::Duration,
    /// `vkCreateInstance` (the loader loads each driver here).
    pub create: std::time::Duration,
}

impl Drop for InstanceShared {
    fn drop(&mut self) {
        // SAFETY: every device holds an Arc of this struct, so none is left;
        // the messenger is destroyed before the instance it belongs to.
        let _serial = crate::lifecycle_lock();
        unsafe {
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            if !self.external {
                self.raw.destroy_instance(None);
            }
        }
    }
}

/// The process's Vulkan instance (cheap to clone).
#[derive(Clone)]
pub struct Instance {
    pub(crate) shared: Arc<InstanceShared>,
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instance")
            .field("validation", &self.shared.validation)
            .finish()
    }
}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if user.is_null() || data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: `user` is `Arc::as_ptr` of the sink, which outlives the
    // messenger; `data` is valid for the duration of the call.
    let sink = unsafe { &*(user as *const Mutex<Vec<String>>) };
    let data = unsafe { &*data };
    // The loader's own notices (a layer enabled both by the environment
    // and by the application, a manifest it skips) are not validation
    // findings: a run with `VK_INSTANCE_LAYERS` set must not fail on them.
    let id = unsafe { data.message_id_name_as_c_str() };
    if types == vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
        && !severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        && id.is_some_and(|n| n.to_bytes().starts_with(b"Loader Message"))
    {
        return vk::FALSE;
    }
    let msg = unsafe { data.message_as_c_str() }
        .map(|m| m.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sev = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        "ERROR"
    } else {
        "WARNING"
    };
    let line = format!("[{sev} {types:?}] {msg}");
    if let Ok(mut v) = sink.lock() {
        v.push(line);
    }
    vk::FALSE
}

/// Whether `VK_INSTANCE_LAYERS` (`:`-separated) names `layer`.
fn layer_in_env(layer: &CStr) -> bool {
    let Some(list) = std::env::var_os("VK_INSTANCE_LAYERS") else {
        return false;
    };
    let want = layer.to_bytes();
    list.as_encoded_bytes()
        .split(|&b| b == b':' || b == b';')
        .any(|l| l == want)
}

fn env_flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref(),
        Ok("1") | Ok("true") | Ok("on") | Ok("yes")
    )
}

impl Instance {
    /// Creates the instance (Vulkan 1.2 or later is requested).
    ///
    /// With `options.validation` (or `ACCL_VALIDATION=1`) the Khronos
    /// validation layer must be installed, else [`VkError::ValidationLayerMissing`].
    pub fn new(options: &InstanceOptions) -> Result<Instance> {
        let validation = options.validation || env_flag("ACCL_VALIDATION");
        let _serial = crate::lifecycle_lock();
        let t0 = std::time::Instant::now();
        // SAFETY: loading the system loader library; ash keeps it loaded for
        // the lifetime of `entry`, which lives in InstanceShared.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| VkError::LoaderMissing {
            reason: e.to_string(),
        })?;
        let version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(vkerr("vkEnumerateInstanceVersion"))?
            .unwrap_or(vk::API_VERSION_1_0);
        if version < vk::API_VERSION_1_2 {
            return Err(VkError::MissingFeature {
                adapter: "the Vulkan loader".into(),
                feature: "Vulkan 1.2",
            });
        }
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(vkerr("vkEnumerateInstanceLayerProperties"))?;
        let exts = unsafe { entry.enumerate_instance_extension_properties(None) }
            .map_err(vkerr("vkEnumerateInstanceExtensionProperties"))?;
        let has_ext = |name: &CStr| {
            exts.iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(name))
        };

        let mut layer_ptrs = Vec::new();
        let mut ext_ptrs = Vec::new();
        if validation {
            let present = layers
                .iter()
                .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER));
            if !present {
                return Err(VkError::ValidationLayerMissing);
            }
            // Enabled by the environment already (`VK_INSTANCE_LAYERS`, as a
            // Vulkan developer sets it): named once, by the loader.
            if !layer_in_env(VALIDATION_LAYER) {
                layer_ptrs.push(VALIDATION_LAYER.as_ptr());
            }
            // debug_utils is provided by the validation layer itself even if
            // the loader does not list it.
            ext_ptrs.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let mut flags = vk::InstanceCreateFlags::empty();
        if has_ext(ash::khr::portability_enumeration::NAME) {
            ext_ptrs.push(ash::khr::portability_enumeration::NAME.as_ptr());
            flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
        }

        let app_name = CString::new(options.app_name.replace('\0', " ")).unwrap_or_default();
        let app = vk::ApplicationInfo::default()
            .application_name(&app_name)
            .application_version(0)
            .engine_name(c"accl")
            .engine_version(0)
            .api_version(vk::API_VERSION_1_3.min(version));

        let messages: MessageSink = Arc::new(Mutex::new(Vec::new()));
        let user = Arc::as_ptr(&messages) as *mut c_void;
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(debug_callback))
            .user_data(user);

        let mut info = vk::InstanceCreateInfo::default()
            .flags(flags)
            .application_info(&app)
            .enabled_layer_names(&layer_ptrs)
            .enabled_extension_names(&ext_ptrs);
        let sync_enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&sync_enables);
        if validation {
            info = info.push_next(&mut messenger_info);
            if env_flag("ACCL_SYNC_VALIDATION") {
                info = info.push_next(&mut features);
            }
        }
        let t_create = std::time::Instant::now();
        // SAFETY: all pointers in `info` outlive the call.
        let raw =
            unsafe { entry.create_instance(&info, None) }.map_err(vkerr("vkCreateInstance"))?;
        let start_times = StartTimes {
            loader: t_create - t0,
            create: t_create.elapsed(),
        };
        let debug = if validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &raw);
            match unsafe { loader.create_debug_utils_messenger(&messenger_info, None) } {
                Ok(m) => Some((loader, m)),
                Err(e) => {
                    unsafe { raw.destroy_instance(None) };
                    return Err(VkError::from_vk("vkCreateDebugUtilsMessengerEXT", e));
                }
            }
        } else {
            None
        };
        Ok(Instance {
            shared: Arc::new(InstanceShared {
                entry,
                raw,
                debug,
                messages,
                validation,
                external: false,
                start_times,
            }),
        })
    }

    /// An instance the embedding program made (Vulkan 1.2 or later), used
    /// by accl and never destroyed here. accl records no validation
    /// messages of it (the program's own messenger sees them).
    ///
    /// # Safety
    /// `raw` is a live instance of the system's Vulkan loader that
    /// outlives this `Instance`, every `Device` made from it and their work.
    pub unsafe fn from_external(raw: vk::Instance) -> Result<Instance> {
        let entry = ash::Entry::load().map_err(|e| VkError::LoaderMissing {
            reason: e.to_string(),
        })?;
        let raw = ash::Instance::load(entry.static_fn(), raw);
        Ok(Instance {
            shared: Arc::new(InstanceShared {
                entry,
                raw,
                debug: None,
                messages: Arc::new(Mutex::new(Vec::new())),
                validation: false,
                external: true,
                start_times: StartTimes::default(),
            }),
        })
    }

    /// Where the time to make it went (zero for the embedder's instance).
    pub fn start_times(&self) -> StartTimes {
        self.shared.start_times
    }

    /// Whether the validation layer is on.
    pub fn validation_enabled(&self) -> bool {
        self.shared.validation
    }

    /// Every WARNING or ERROR message of the validation layer (or loader)
    /// recorded so far.
    pub fn validation_messages(&self) -> Vec<String> {
        self.shared
            .messages
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// Returns and clears the recorded validation messages.
    pub fn take_validation_messages(&self) -> Vec<String> {
        self.shared
            .messages
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }

    /// A handle onto the message list that stays valid after the instance
    /// is dropped (messages emitted while the instance is destroyed land
    /// there too).
    pub fn validation_sink(&self) -> Arc<Mutex<Vec<String>>> {
        self.shared.messages.clone()
    }

    /// Every physical device with a compute-capable queue family: discrete
    /// GPUs first, then integrated, virtual, CPU and others, in driver order
    /// within a class. `AdapterInfo::index` is the position in this list.
    pub fn adapters(&self) -> Result<Vec<AdapterInfo>> {
        Ok(self
            .physical_devices()?
            .into_iter()
            .map(|(_, info)| info)
            .collect())
    }

    /// Same order as [`Instance::adapters`], with the raw handles.
    pub(crate) fn physical_devices(&self) -> Result<Vec<(vk::PhysicalDevice, AdapterInfo)>> {
        let raw = &self.shared.raw;
        let pds = unsafe { raw.enumerate_physical_devices() }
            .map_err(vkerr("vkEnumeratePhysicalDevices"))?;
        let mut out = Vec::new();
        for pd in pds {
            let info = query_adapter(raw, pd)?;
            if info.queue_families.iter().any(|q| q.compute) {
                out.push((pd, info));
            }
        }
        out.sort_by_key(|(_, info)| info.device_type.rank());
        for (i, (_, info)) in out.iter_mut().enumerate() {
            info.index = i;
        }
        Ok(out)
    }
}

/// Kind of adapter, in the order accl prefers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// A discrete GPU.
    DiscreteGpu,
    /// A GPU integrated with the CPU.
    IntegratedGpu,
    /// A virtualised GPU.
    VirtualGpu,
    /// A CPU implementation (lavapipe, SwiftShader).
    Cpu,
    /// Anything else.
    Other,
}

impl DeviceType {
    fn rank(self) -> u8 {
        match self {
            DeviceType::DiscreteGpu => 0,
            DeviceType::IntegratedGpu => 1,
            DeviceType::VirtualGpu => 2,
            DeviceType::Cpu => 3,
            DeviceType::Other => 4,
        }
    }

    fn from_vk(t: vk::PhysicalDeviceType) -> Self {
        match t {
            vk::PhysicalDeviceType::DISCRETE_GPU => DeviceType::DiscreteGpu,
            vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceType::IntegratedGpu,
            vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceType::VirtualGpu,
            vk::PhysicalDeviceType::CPU => DeviceType::Cpu,
            _ => DeviceType::Other,
        }
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::DiscreteGpu => "discrete GPU",
            DeviceType::IntegratedGpu => "integrated GPU",
            DeviceType::VirtualGpu => "virtual GPU",
            DeviceType::Cpu => "CPU",
            DeviceType::Other => "other",
        })
    }
}

/// One queue family of an adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueFamilyInfo {
    /// Vulkan queue family index.
    pub index: u32,
    /// Supports compute.
    pub compute: bool,
    /// Supports transfer (explicitly, or implied by compute/graphics).
    pub transfer: bool,
    /// Supports graphics.
    pub graphics: bool,
    /// Number of queues in the family.
    pub count: u32,
    /// Valid bits of timestamps written on this family (0: no timestamps).
    pub timestamp_valid_bits: u32,
}

impl QueueFamilyInfo {
    /// A family that transfers but neither computes nor draws (a copy engine).
    pub fn is_transfer_only(&self) -> bool {
        self.transfer && !self.compute && !self.graphics
    }
}

/// The limits accl needs.
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterLimits {
    /// Largest storage buffer range in bytes.
    pub max_storage_buffer_range: u64,
    /// Largest dispatch, per dimension.
    pub max_compute_work_group_count: [u32; 3],
    /// Largest work group, per dimension.
    pub max_compute_work_group_size: [u32; 3],
    /// Largest number of invocations in a work group.
    pub max_compute_work_group_invocations: u32,
    /// Shared (workgroup) memory in bytes.
    pub max_compute_shared_memory_size: u32,
    /// Push-constant bytes.
    pub max_push_constants_size: u32,
    /// Alignment of storage-buffer binding offsets.
    pub min_storage_buffer_offset_alignment: u64,
    /// Most elements a texel buffer view shows a kernel.
    pub max_texel_buffer_elements: u32,
    /// Alignment of texel buffer view offsets.
    pub min_texel_buffer_offset_alignment: u64,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period: f32,
    /// Whether every compute and graphics queue supports timestamps.
    pub timestamp_compute_and_graphics: bool,
    /// Default subgroup size (0 where unknown).
    pub subgroup_size: u32,
    /// Largest single memory allocation in bytes, as the driver reports it
    /// (NVIDIA reports 4 GiB and makes larger ones).
    pub max_memory_allocation_size: u64,
    /// Largest buffer in bytes (`maxBufferSize`, Vulkan 1.3); 0 where
    /// unknown.
    pub max_buffer_size: u64,
    /// Whether shaders may ask to keep the sign of zeros, infinities and
    /// NaNs in 32-bit and 64-bit floats (`SignedZeroInfNanPreserve`,
    /// Vulkan 1.2's float controls); without it a driver may assume none.
    pub signed_zero_inf_nan_preserve: [bool; 2],
    /// Whether shaders may ask to keep subnormal 32-bit and 64-bit floats
    /// (`DenormPreserve`, Vulkan 1.2's float controls), and may do so for
    /// these widths together: where the driver ties the widths' modes
    /// (`denormBehaviorIndependence`), only as it allows. Without it a
    /// driver may flush subnormals to zero.
    pub denorm_preserve: [bool; 2],
}

/// Which widths a shader may ask to keep subnormals for, given what the
/// driver allows per width and how it ties the widths' modes: with
/// `32_BIT_ONLY` the 16-bit and 64-bit modes must match (accl sets no
/// 16-bit mode, so the 64-bit one stays the driver's); with `NONE` every
/// width's must (both or neither).
fn denorm_preserve(f32: bool, f64: bool, tie: vk::ShaderFloatControlsIndependence) -> [bool; 2] {
    match tie {
        vk::ShaderFloatControlsIndependence::ALL => [f32, f64],
        vk::ShaderFloatControlsIndependence::TYPE_32_ONLY => [f32, false],
        _ => [f32 && f64; 2],
    }
}

/// Optional features of an adapter that accl uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdapterFeatures {
    /// 64-bit floats in shaders.
    pub shader_float64: bool,
    /// 64-bit integers in shaders.
    pub shader_int64: bool,
    /// 16-bit integers in shaders.
    pub shader_int16: bool,
    /// 8-bit integers in shaders.
    pub shader_int8: bool,
    /// 8-bit types in storage buffers.
    pub storage_buffer_8bit_access: bool,
    /// 16-bit types in storage buffers.
    pub storage_buffer_16bit_access: bool,
    /// Timeline semaphores (required by accl).
    pub timeline_semaphore: bool,
    /// Atomic add on f32 in storage buffers (VK_EXT_shader_atomic_float).
    pub shader_buffer_float32_atomic_add: bool,
    /// Atomic add on f64 in storage buffers (VK_EXT_shader_atomic_float).
    pub shader_buffer_float64_atomic_add: bool,
    /// 64-bit integer atomics on storage buffers.
    pub shader_buffer_int64_atomics: bool,
    /// Robust buffer access (out-of-bounds accesses are harmless).
    pub robust_buffer_access: bool,
    /// Buffer device addresses (Vulkan 1.2): kernels reach buffers larger
    /// than `maxStorageBufferRange` through 64-bit pointers.
    pub buffer_device_address: bool,
    /// Subgroup operations supported in compute shaders (empty if none).
    pub subgroup_operations: Vec<&'static str>,
    /// Whether `VK_EXT_shader_atomic_float` exists.
    pub ext_shader_atomic_float: bool,
}

/// Everything accl wants to know about a physical device.
#[derive(Clone, Debug)]
pub struct AdapterInfo {
    /// Position in [`Instance::adapters`].
    pub index: usize,
    /// Device name.
    pub name: String,
    /// Kind of device.
    pub device_type: DeviceType,
    /// Vendor and device ids.
    pub vendor_id: u32,
    /// Device id.
    pub device_id: u32,
    /// Vulkan API version of the device, as (major, minor, patch).
    pub api_version: (u32, u32, u32),
    /// Driver name and info (from VkPhysicalDeviceDriverProperties).
    pub driver: String,
    /// Raw driver version.
    pub driver_version: u32,
    /// Total size of the device-local heaps in bytes.
    pub device_local_memory: u64,
    /// Queue families.
    pub queue_families: Vec<QueueFamilyInfo>,
    /// Limits.
    pub limits: AdapterLimits,
    /// Features.
    pub features: AdapterFeatures,
    /// Device extensions present.
    pub extensions: Vec<String>,
}

impl AdapterInfo {
    /// Whether the device has the named extension.
    pub fn has_extension(&self, name: &str) -> bool {
        self.extensions.iter().any(|e| e == name)
    }
}

fn subgroup_op_names(ops: vk::SubgroupFeatureFlags) -> Vec<&'static str> {
    let table = [
        (vk::SubgroupFeatureFlags::BASIC, "basic"),
        (vk::SubgroupFeatureFlags::VOTE, "vote"),
        (vk::SubgroupFeatureFlags::ARITHMETIC, "arithmetic"),
        (vk::SubgroupFeatureFlags::BALLOT, "ballot"),
        (vk::SubgroupFeatureFlags::SHUFFLE, "shuffle"),
        (
            vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
            "shuffle_relative",
        ),
        (vk::SubgroupFeatureFlags::CLUSTERED, "clustered"),
        (vk::SubgroupFeatureFlags::QUAD, "quad"),
    ];
    table
        .iter()
        .filter(|(f, _)| ops.contains(*f))
        .map(|(_, n)| *n)
        .collect()
}

pub(crate) fn query_adapter(raw: &ash::Instance, pd: vk::PhysicalDevice) -> Result<AdapterInfo> {
    // SAFETY: `pd` comes from this instance; every struct chained below is
    // core in the API version checked before it is chained.
    unsafe {
        let props = raw.get_physical_device_properties(pd);
        let api = props.api_version;
        let is12 = api >= vk::API_VERSION_1_2;
        let exts: Vec<String> = raw
            .enumerate_device_extension_properties(pd)
            .map_err(vkerr("vkEnumerateDeviceExtensionProperties"))?
            .iter()
            .filter_map(|e| e.extension_name_as_c_str().ok())
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let has_atomic_float = exts
            .iter()
            .any(|e| e.as_bytes() == ash::ext::shader_atomic_float::NAME.to_bytes());

        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut maint3 = vk::PhysicalDeviceMaintenance3Properties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut subgroup)
            .push_next(&mut maint3);
        if is12 {
            props2 = props2.push_next(&mut driver);
        }
        let mut maint4 = vk::PhysicalDeviceMaintenance4Properties::default();
        if api >= vk::API_VERSION_1_3 {
            props2 = props2.push_next(&mut maint4);
        }
        let mut float_controls = vk::PhysicalDeviceFloatControlsProperties::default();
        if is12 {
            props2 = props2.push_next(&mut float_controls);
        }
        raw.get_physical_device_properties2(pd, &mut props2);
        let limits = props2.properties.limits;

        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fatomic = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut feats2 = vk::PhysicalDeviceFeatures2::default();
        if is12 {
            feats2 = feats2.push_next(&mut f11).push_next(&mut f12);
        }
        if has_atomic_float {
            feats2 = feats2.push_next(&mut fatomic);
        }
        raw.get_physical_device_features2(pd, &mut feats2);
        let f10 = feats2.features;

        let mem = raw.get_physical_device_memory_properties(pd);
        let device_local_memory = mem
            .memory_heaps_as_slice()
            .iter()
            .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|h| h.size)
            .sum();

        let queue_families = raw
            .get_physical_device_queue_family_properties(pd)
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let compute = q.queue_flags.contains(vk::QueueFlags::COMPUTE);
                let graphics = q.queue_flags.contains(vk::QueueFlags::GRAPHICS);
                QueueFamilyInfo {
                    index: i as u32,
                    compute,
                    graphics,
                    transfer: q.queue_flags.contains(vk::QueueFlags::TRANSFER)
                        || compute
                        || graphics,
                    count: q.queue_count,
                    timestamp_valid_bits: q.timestamp_valid_bits,
                }
            })
            .collect();

        let name = props
            .device_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        let driver_str = if is12 {
            let n = driver
                .driver_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            let i = driver
                .driver_info_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            if i.is_empty() {
                n
            } else {
                format!("{n} ({i})")
            }
        } else {
            String::new()
        };
        let compute_subgroups = subgroup
            .supported_stages
            .contains(vk::ShaderStageFlags::COMPUTE);

        Ok(AdapterInfo {
            index: 0,
            name,
            device_type: DeviceType::from_vk(props.device_type),
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            api_version: (
                vk::api_version_major(api),
                vk::api_version_minor(api),
                vk::api_version_patch(api),
            ),
            driver: driver_str,
            driver_version: props.driver_version,
            device_local_memory,
            queue_families,
            limits: AdapterLimits {
                max_storage_buffer_range: limits.max_storage_buffer_range as u64,
                max_compute_work_group_count: limits.max_compute_work_group_count,
                max_compute_work_group_size: limits.max_compute_work_group_size,
                max_compute_work_group_invocations: limits.max_compute_work_group_invocations,
                max_compute_shared_memory_size: limits.max_compute_shared_memory_size,
                max_push_constants_size: limits.max_push_constants_size,
                min_storage_buffer_offset_alignment: limits.min_storage_buffer_offset_alignment,
                max_texel_buffer_elements: limits.max_texel_buffer_elements,
                min_texel_buffer_offset_alignment: limits.min_texel_buffer_offset_alignment,
                timestamp_period: limits.timestamp_period,
                timestamp_compute_and_graphics: limits.timestamp_compute_and_graphics == vk::TRUE,
                subgroup_size: subgroup.subgroup_size,
                max_memory_allocation_size: maint3.max_memory_allocation_size,
                max_buffer_size: maint4.max_buffer_size,
                signed_zero_inf_nan_preserve: [
                    is12 && float_controls.shader_signed_zero_inf_nan_preserve_float32 == vk::TRUE,
                    is12 && float_controls.shader_signed_zero_inf_nan_preserve_float64 == vk::TRUE,
                ],
                denorm_preserve: denorm_preserve(
                    is12 && float_controls.shader_denorm_preserve_float32 == vk::TRUE,
                    is12 && float_controls.shader_denorm_preserve_float64 == vk::TRUE,
                    float_controls.denorm_behavior_independence,
                ),
            },
            features: AdapterFeatures {
                shader_float64: f10.shader_float64 == vk::TRUE,
                shader_int64: f10.shader_int64 == vk::TRUE,
                shader_int16: f10.shader_int16 == vk::TRUE,
                shader_int8: is12 && f12.shader_int8 == vk::TRUE,
                storage_buffer_8bit_access: is12 && f12.storage_buffer8_bit_access == vk::TRUE,
                storage_buffer_16bit_access: is12 && f11.storage_buffer16_bit_access == vk::TRUE,
                timeline_semaphore: is12 && f12.timeline_semaphore == vk::TRUE,
                shader_buffer_float32_atomic_add: has_atomic_float
                    && fatomic.shader_buffer_float32_atomic_add == vk::TRUE,
                shader_buffer_float64_atomic_add: has_atomic_float
                    && fatomic.shader_buffer_float64_atomic_add == vk::TRUE,
                shader_buffer_int64_atomics: is12 && f12.shader_buffer_int64_atomics == vk::TRUE,
                robust_buffer_access: f10.robust_buffer_access == vk::TRUE,
                buffer_device_address: is12 && f12.buffer_device_address == vk::TRUE,
                subgroup_operations: if compute_subgroups {
                    subgroup_op_names(subgroup.supported_operations)
                } else {
                    Vec::new()
                },
                ext_shader_atomic_float: has_atomic_float,
            },
            extensions: exts,
        })
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes % (1 << 30) == 0 {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{bytes} B")
    }
}

impl fmt::Display for AdapterInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ma, mi, pa) = self.api_version;
        writeln!(f, "[{}] {} ({})", self.index, self.name, self.device_type)?;
        writeln!(f, "    Vulkan {ma}.{mi}.{pa}, driver {}", self.driver)?;
        writeln!(
            f,
            "    device-local memory: {}",
            mib(self.device_local_memory)
        )?;
        writeln!(f, "    queue families:")?;
        for q in &self.queue_families {
            let mut caps = Vec::new();
            if q.graphics {
                caps.push("graphics");
            }
            if q.compute {
                caps.push("compute");
            }
            if q.transfer {
                caps.push("transfer");
            }
            writeln!(
                f,
                "      #{}: {} x {}, timestamps {} bits",
                q.index,
                q.count,
                caps.join("+"),
                q.timestamp_valid_bits
            )?;
        }
        let l = &self.limits;
        writeln!(
            f,
            "    max storage buffer: {} ({} bytes), max allocation {}, max buffer {}, buffer addresses {}",
            mib(l.max_storage_buffer_range),
            l.max_storage_buffer_range,
            mib(l.max_memory_allocation_size),
            if l.max_buffer_size == 0 {
                "unknown".to_string()
            } else {
                mib(l.max_buffer_size)
            },
            yes(self.features.buffer_device_address)
        )?;
        writeln!(
            f,
            "    work groups: count {:?}, size {:?}, {} invocations, {} bytes shared",
            l.max_compute_work_group_count,
            l.max_compute_work_group_size,
            l.max_compute_work_group_invocations,
            l.max_compute_shared_memory_size
        )?;
        writeln!(
            f,
            "    push constants {} bytes, storage offset alignment {}, subgroup size {}, timestamp period {} ns",
            l.max_push_constants_size,
            l.min_storage_buffer_offset_alignment,
            l.subgroup_size,
            l.timestamp_period
        )?;
        let ft = &self.features;
        writeln!(
            f,
            "    f64 {}, i64 {}, i8 {}, 8-bit storage {}, timeline semaphores {}, robust access {}",
            yes(ft.shader_float64),
            yes(ft.shader_int64),
            yes(ft.shader_int8),
            yes(ft.storage_buffer_8bit_access),
            yes(ft.timeline_semaphore),
            yes(ft.robust_buffer_access)
        )?;
        writeln!(
            f,
            "    atomic add f32 {}, f64 {}, i64 atomics {}; signed zeros, inf and NaN kept on request: f32 {}, f64 {}",
            yes(ft.shader_buffer_float32_atomic_add),
            yes(ft.shader_buffer_float64_atomic_add),
            yes(ft.shader_buffer_int64_atomics),
            yes(self.limits.signed_zero_inf_nan_preserve[0]),
            yes(self.limits.signed_zero_inf_nan_preserve[1])
        )?;
        writeln!(
            f,
            "    subnormals kept on request (DenormPreserve): f32 {}, f64 {}; otherwise as the driver does",
            yes(self.limits.denorm_preserve[0]),
            yes(self.limits.denorm_preserve[1])
        )?;
        writeln!(
            f,
            "    host memory import (direct copies) {}, copy engines {}, push descriptors {}",
            yes(self.has_extension("VK_EXT_external_memory_host")),
            yes(self.queue_families.iter().any(|q| q.is_transfer_only())),
            yes(self.has_extension("VK_KHR_push_descriptor"))
        )?;
        write!(
            f,
            "    subgroup ops in compute: {}",
            if ft.subgroup_operations.is_empty() {
                "none".to_string()
            } else {
                ft.subgroup_operations.join(", ")
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnormals_are_kept_only_for_widths_whose_modes_may_be_set_apart() {
        use vk::ShaderFloatControlsIndependence as I;
        assert_eq!(denorm_preserve(true, true, I::ALL), [true, true]);
        assert_eq!(denorm_preserve(true, false, I::ALL), [true, false]);
        assert_eq!(denorm_preserve(false, true, I::ALL), [false, true]);
        // The 64-bit mode is tied to the 16-bit one, which accl leaves.
        assert_eq!(denorm_preserve(true, true, I::TYPE_32_ONLY), [true, false]);
        // Every width's mode the same: both or neither.
        assert_eq!(denorm_preserve(true, true, I::NONE), [true, true]);
        assert_eq!(denorm_preserve(true, false, I::NONE), [false, false]);
        assert_eq!(denorm_preserve(false, true, I::NONE), [false, false]);
    }
}
