//! What of a device decides how kernels are specialised for it
//! ([`Traits`], read once from its adapter and the environment), the
//! specialisation itself, and the shape of a launch that follows from it
//! (work-group size, binding kinds). Apart from `DevState`, and importing
//! nothing of the backend: the thread that opens a device ahead of its
//! first use (`vulkan/opener.rs`) compiles the program's kernels for it
//! before any `DevState` exists, and must key them by the same
//! specialisation and shape as the launch will.

use compiler::{Features, Spec};
use vk_runtime::{Binding, Device, TexelFormat};

/// The device's answers to the specialisation's questions.
#[derive(Debug, Clone, Copy)]
pub struct Traits {
    /// The driver is llvmpipe (lavapipe).
    llvmpipe: bool,
    /// Kernels read arrays through texel buffers where they may
    /// (`compiler::Spec::texels`): on llvmpipe, unless `ACCL_TEXEL_READS=0`.
    pub texel_reads: bool,
    /// Written storage buffers are `Coherent` (`compiler::Spec::coherent_writes`).
    coherent_writes: bool,
    /// Kernels keep signed zeros, infinities and NaNs (f32, f64)
    /// (`compiler::Spec::preserve_float`).
    preserve_float: [bool; 2],
    /// Kernels keep subnormals (f32, f64) (`compiler::Spec::preserve_denorms`).
    preserve_denorms: [bool; 2],
    /// How f32 `/` and `sqrt` are correctly rounded (`compiler::Spec::exact_f32`).
    exact_f32: compiler::ExactF32,
}

impl Traits {
    pub fn of(device: &Device) -> Traits {
        let info = device.info();
        let limits = &info.limits;
        let knob_or = |k, v| match std::env::var_os(k).is_some_and(|v| v == "0") {
            true => [false; 2],
            false => v,
        };
        let llvmpipe = info.driver.contains("llvmpipe") || info.name.contains("llvmpipe");
        Traits {
            llvmpipe,
            texel_reads: llvmpipe && std::env::var_os("ACCL_TEXEL_READS").is_none_or(|v| v != "0"),
            // `ACCL_COHERENT_WRITES=0` turns it off, for measuring.
            coherent_writes: info.vendor_id == 0x10de
                && std::env::var_os("ACCL_COHERENT_WRITES").is_none_or(|v| v != "0"),
            // `ACCL_FLOAT_CONTROLS=0` turns both off, `ACCL_DENORMS=0` the
            // second, for measuring.
            preserve_float: knob_or("ACCL_FLOAT_CONTROLS", limits.signed_zero_inf_nan_preserve),
            preserve_denorms: knob_or(
                "ACCL_FLOAT_CONTROLS",
                knob_or("ACCL_DENORMS", limits.denorm_preserve),
            ),
            exact_f32: exact_f32(info),
        }
    }

    /// The specialisation of kernels for `device` (whose traits these
    /// are) under the backend's kernel options (index width set per
    /// launch).
    pub fn spec(&self, device: &Device, o: &KernelOptions) -> Spec {
        let info = device.info();
        let f = device.features();
        let l = &info.limits;
        let llvmpipe = self.llvmpipe;
        let cpu = info.device_type == vk_runtime::DeviceType::Cpu;
        Spec {
            spirv_version: if info.api_version >= (1, 2, 0) {
                (1, 5)
            } else {
                (1, 3)
            },
            workgroup_size: 256
                .min(l.max_compute_work_group_invocations)
                .min(l.max_compute_work_group_size[0])
                .max(1),
            index_width: compiler::IndexWidth::U32,
            checks: o.checks,
            loop_budget: o.loop_budget,
            loop_cap: llvmpipe,
            split_by_reciprocal: llvmpipe,
            sext_by_words: llvmpipe,
            coherent_writes: self.coherent_writes,
            preserve_float: self.preserve_float,
            preserve_denorms: self.preserve_denorms,
            exact_f32: self.exact_f32,
            exact_f32_skew: 0,
            features: without_all(
                Features {
                    float64: f.shader_float64,
                    int64: f.shader_int64,
                    storage_buffer_8bit: f.storage_buffer_8bit_access,
                    int64_atomics: f.shader_buffer_int64_atomics,
                    float32_atomic_add: f.shader_buffer_float32_atomic_add,
                    float64_atomic_add: f.shader_buffer_float64_atomic_add,
                    buffer_device_address: f.buffer_device_address,
                },
                &o.disabled,
            ),
            max_push_constants: l.max_push_constants_size.min(128),
            subgroup_size: if ["basic", "shuffle"]
                .iter()
                .all(|op| f.subgroup_operations.contains(op))
                && l.subgroup_size.is_power_of_two()
                && !o.disabled.iter().any(|d| d == "subgroups")
            {
                l.subgroup_size
            } else {
                0
            },
            max_workgroup_size: l
                .max_compute_work_group_invocations
                .min(l.max_compute_work_group_size[0]),
            // llvmpipe leaves every loop after 65,535 iterations in total
            // per SIMD group (`compiler::unroll`); unrolling divides that.
            // Elsewhere, with the watchdog on, 4: it counts one back-edge per
            // unrolled body, which on an H200 brought its cost on a tight
            // loop (the Mandelbrot kernel) from 1.31x down to 1.10x.
            // Several iterations per trip of a flat loop keep more loads in
            // flight on a GPU; a CPU driver gains nothing from it. On H200s
            // (2^28 f32, 3-9 processes per setting, two hosts) an
            // element-wise loop ran best at four (copy 3980 GB/s against
            // 3918 at eight, saxpy 4170 against 4057; 2 and 16 slower), a
            // sum at eight (3955 against 3864 at four, 3891 at 16).
            coarsen: if cpu { 1 } else { 4 },
            coarsen_reduction: if cpu { 1 } else { 8 },
            unroll: if llvmpipe {
                8
            } else if o.loop_budget != 0 {
                4
            } else {
                1
            },
            // Set per launch, by the sizes of the buffers bound.
            by_address: 0,
            texels: 0,
            local_copies: [0; 4],
        }
    }
}

/// How kernels are compiled, for every device of a backend: bounds-check
/// mode, the loop watchdog's budget, and features treated as missing (a
/// testing aid, [`crate::Engine::disable_device_feature`]).
#[derive(Debug, Clone, Default)]
pub struct KernelOptions {
    pub checks: bool,
    pub loop_budget: u32,
    pub disabled: Vec<String>,
}

/// `f` with the features named turned off (unknown names were refused
/// when set).
fn without_all(f: Features, names: &[String]) -> Features {
    names.iter().fold(f, |f, n| f.without(n).unwrap_or(f))
}

/// The work-group size of a launch of `total` iterations.
pub fn work_group_size(
    kernel: &compiler::Kernel,
    spec: &compiler::Spec,
    vector_length: Option<u32>,
    total: u64,
) -> u32 {
    // Few iterations (a row per iteration, each running a long sequential
    // loop, as the block Mandelbrot does): small work groups spread them
    // over more compute units instead of packing them into a couple, so one
    // kernel finishes sooner and kernels of other queues find idle units.
    // Aim at ~1024 groups; never below a warp (32).
    if let Some(t) = compiler::plan::teams(kernel, spec) {
        return t.workgroup_size();
    }
    if let Some((a, b)) = kernel.tile {
        return a * b;
    }
    vector_length.unwrap_or_else(|| {
        if kernel.shape == compiler::Shape::Flat && kernel.reductions.is_empty() {
            (total / 1024).next_power_of_two().clamp(
                32.min(spec.workgroup_size as u64),
                spec.workgroup_size as u64,
            ) as u32
        } else {
            spec.workgroup_size
        }
    })
}

/// The kind of each of a pipeline's `n` bindings under `spec`: arrays
/// read through texels ([`texels`]), every other binding a storage buffer.
pub fn binding_kinds(kernel: &compiler::Kernel, spec: &compiler::Spec, n: u32) -> Vec<Binding> {
    (0..n as usize)
        .map(|i| match spec.texel_elem(kernel, i) {
            Some(e) => Binding::Texels(TexelFormat::of(e.is_float(), e.is_signed_int())),
            None => Binding::Storage,
        })
        .collect()
}

/// How kernels on the device make f32 `/` and `sqrt` correctly rounded
/// (`compiler::Spec::exact_f32`; every route needs f64): none on lavapipe,
/// which rounds them correctly itself; the `fma` route on NVIDIA's GPUs,
/// whose `Fma` was measured fused on an H100; elsewhere the f64 route,
/// which needs no fused `Fma` (lavapipe's rounds twice, and Vulkan allows
/// it; other drivers were not measured). `ACCL_EXACT_F32` decides, for measuring and
/// testing: `0` (the driver's instructions), `1` (the route a GPU of this
/// vendor takes, even on lavapipe), `fma`, `fma-f64`, `f64`.
pub(crate) fn exact_f32(info: &vk_runtime::AdapterInfo) -> compiler::ExactF32 {
    use compiler::ExactF32;
    let lavapipe = info.driver.contains("llvmpipe") || info.name.contains("llvmpipe");
    let fused = info.vendor_id == 0x10de && !lavapipe;
    match std::env::var("ACCL_EXACT_F32").as_deref() {
        Ok("0") => ExactF32::Off,
        Ok("fma") => ExactF32::Fma,
        Ok("fma-f64") => ExactF32::FmaByF64,
        Ok("f64") => ExactF32::InF64,
        _ if fused => ExactF32::Fma,
        Ok("1") => ExactF32::InF64,
        _ if lavapipe => ExactF32::Off,
        _ => ExactF32::InF64,
    }
}
