//! Typed errors of the Vulkan runtime.
//!
//! Every fallible call of this crate returns [`VkError`], a `thiserror` enum
//! that is also a `miette::Diagnostic` with a stable `accl::vk::*` code and
//! help text, so the binary can print it as it prints language errors.
//! Driver results are never `unwrap`ped: [`VkError::from_vk`]
//! maps a `vk::Result` onto the variants a user can act on (out of memory,
//! device lost) and keeps the raw result for the rest.

use ash::vk;
use miette::Diagnostic;
use thiserror::Error;

/// Result alias used throughout the crate.
pub type Result<T, E = VkError> = std::result::Result<T, E>;

/// Everything that can go wrong in the Vulkan runtime.
#[derive(Debug, Error, Diagnostic)]
pub enum VkError {
    /// The Vulkan loader (`libvulkan.so.1`) could not be loaded.
    #[error("cannot load the Vulkan loader: {reason}")]
    #[diagnostic(
        code(accl::vk::loader),
        help("install a Vulkan loader and driver; on Debian run `. scripts/setup.sh`")
    )]
    LoaderMissing {
        /// Why loading failed, as the dynamic loader said it.
        reason: String,
    },

    /// Validation was asked for but the Khronos validation layer is absent.
    #[error("validation was requested but VK_LAYER_KHRONOS_validation is not installed")]
    #[diagnostic(
        code(accl::vk::validation_layer),
        help(
            "run `. scripts/setup.sh` (installs vulkan-validationlayers), or unset ACCL_VALIDATION"
        )
    )]
    ValidationLayerMissing,

    /// A required instance extension is missing.
    #[error("the Vulkan instance lacks the extension {name}")]
    #[diagnostic(
        code(accl::vk::instance_extension),
        help("update the Vulkan loader; on Debian run `. scripts/setup.sh`")
    )]
    InstanceExtensionMissing {
        /// Extension name.
        name: String,
    },

    /// No adapter with the given index.
    #[error("no Vulkan adapter with index {index} ({count} compute-capable adapters found)")]
    #[diagnostic(
        code(accl::vk::no_adapter),
        help("`accl devices` lists the adapters; with no GPU install lavapipe (`. scripts/setup.sh`)")
    )]
    NoAdapter {
        /// Index asked for.
        index: usize,
        /// Number of adapters found.
        count: usize,
    },

    /// The adapter lacks a feature accl cannot work without.
    #[error("adapter '{adapter}' lacks {feature}, which accl requires")]
    #[diagnostic(
        code(accl::vk::missing_feature),
        help("use another adapter (`accl devices`) or update its driver")
    )]
    MissingFeature {
        /// Adapter name.
        adapter: String,
        /// The missing feature.
        feature: &'static str,
    },

    /// A buffer larger than the device allows was asked for.
    #[error(
        "a buffer of {requested} bytes was requested but this device's \
         {limit} is {max} bytes"
    )]
    #[diagnostic(
        code(accl::vk::buffer_too_large),
        help("split the data across several buffers of at most {max} bytes each")
    )]
    BufferTooLarge {
        /// Requested size in bytes.
        requested: u64,
        /// The device limit in bytes.
        max: u64,
        /// The limit's Vulkan name (`maxStorageBufferRange`, or
        /// `maxBufferSize` where kernels reach buffers by address).
        limit: &'static str,
    },

    /// The device or host ran out of memory.
    #[error("out of {kind} memory while allocating {requested} bytes for {what}")]
    #[diagnostic(
        code(accl::vk::out_of_memory),
        help("free device arrays that are no longer needed, or use smaller arrays")
    )]
    OutOfMemory {
        /// "device" or "host".
        kind: &'static str,
        /// Requested size in bytes (0 where the driver did not say).
        requested: u64,
        /// What was being allocated.
        what: String,
    },

    /// The device was lost (driver crash, GPU reset, or a hung kernel).
    #[error("the Vulkan device was lost during {call}")]
    #[diagnostic(
        code(accl::vk::device_lost),
        help("the device cannot be used any more; a kernel may have run too long or faulted")
    )]
    DeviceLost {
        /// The call that reported it.
        call: &'static str,
    },

    /// Any other error result of a Vulkan call.
    #[error("{call} failed: {result}")]
    #[diagnostic(
        code(accl::vk::call),
        help("this is a driver or runtime error; run with ACCL_VALIDATION=1 for details")
    )]
    Vulkan {
        /// The call that failed.
        call: &'static str,
        /// What the driver returned.
        result: vk::Result,
    },

    /// An error of the memory allocator other than running out of memory.
    #[error("memory allocation of {requested} bytes for {what} failed: {message}")]
    #[diagnostic(code(accl::vk::allocator))]
    Allocator {
        /// Requested size.
        requested: u64,
        /// What was being allocated.
        what: String,
        /// The allocator's message.
        message: String,
    },

    /// The shader module or compute pipeline could not be created.
    #[error("cannot create the compute pipeline for entry point '{entry}': {result}")]
    #[diagnostic(
        code(accl::vk::pipeline),
        help("validate the module with `spirv-val --target-env vulkan1.2`; run with ACCL_VALIDATION=1")
    )]
    Pipeline {
        /// Entry point name.
        entry: String,
        /// What the driver returned.
        result: vk::Result,
    },

    /// A call of this crate was used wrongly (sizes, offsets, bindings...).
    #[error("invalid use of the Vulkan runtime: {message}")]
    #[diagnostic(code(accl::vk::usage))]
    Usage {
        /// What was wrong.
        message: String,
    },

    /// Direct host access to a buffer whose memory is not host-visible.
    #[error("the buffer's memory is not host-visible; copy through a staging buffer")]
    #[diagnostic(code(accl::vk::not_host_visible))]
    NotHostVisible,

    /// A queue was asked to wait for a timeline value nobody submitted yet.
    #[error("cannot wait on timeline value {value}: the other queue has only submitted up to {submitted}")]
    #[diagnostic(
        code(accl::vk::wait_not_submitted),
        help("call submit() on the other queue first and wait on the value it returns")
    )]
    WaitNotSubmitted {
        /// Value asked for.
        value: u64,
        /// Highest value submitted so far.
        submitted: u64,
    },

    /// Reading or writing a pipeline cache file failed.
    #[error("pipeline cache file {path}: {source}")]
    #[diagnostic(code(accl::vk::pipeline_cache_io))]
    CacheIo {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl VkError {
    /// Maps the error result of the Vulkan call `call` onto a variant.
    pub fn from_vk(call: &'static str, result: vk::Result) -> Self {
        Self::from_vk_sized(call, result, 0, call)
    }

    /// Like [`VkError::from_vk`], naming the size and object of an allocation
    /// so that out-of-memory errors say what was asked for.
    pub fn from_vk_sized(
        call: &'static str,
        result: vk::Result,
        requested: u64,
        what: &str,
    ) -> Self {
        match result {
            vk::Result::ERROR_DEVICE_LOST => VkError::DeviceLost { call },
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => VkError::OutOfMemory {
                kind: "device",
                requested,
                what: what.to_string(),
            },
            vk::Result::ERROR_OUT_OF_HOST_MEMORY => VkError::OutOfMemory {
                kind: "host",
                requested,
                what: what.to_string(),
            },
            result => VkError::Vulkan { call, result },
        }
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        VkError::Usage {
            message: message.into(),
        }
    }
}

/// Shorthand: `.map_err(vkerr("vkCreateBuffer"))`.
pub(crate) fn vkerr(call: &'static str) -> impl Fn(vk::Result) -> VkError {
    move |r| VkError::from_vk(call, r)
}
