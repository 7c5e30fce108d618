//! Shared test helpers: accl source to kernels, `spirv-val`, and a launcher
//! that runs a kernel on the first Vulkan device (lavapipe in CI) with the
//! validation layer on; any validation message fails the test.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use compiler::{ArgLayout, ArgLocation, ArrayArgs, Kernel, LaunchArgs, Spec};
use lang::hir::{self, StmtKind};
use lang::{Scalar, Value};
use vk_runtime::{Binding, Buffer, BufferBinding, ComputePipeline, Device, Queue, TexelFormat};

pub const FOREVER: Duration = Duration::from_secs(120);

/// Runs `body` on device 0 with validation; fails on any validation message.
pub fn with_device(body: impl FnOnce(&Device)) {
    let r = vk_runtime::testing::with_validation("compiler tests", |instance| {
        let dev = Device::new(instance, 0).expect("device");
        body(&dev);
    });
    if let Err(messages) = r {
        panic!("validation messages:\n{}", messages.join("\n"));
    }
}

#[allow(unused_imports)] // not every test binary needs it
pub use vk_runtime::testing::temp_path;

/// Fails the test if `spirv-val --target-env vulkan1.2` rejects the module or is missing.
pub fn spirv_val(words: &[u32]) {
    if let Err(e) = vk_runtime::testing::spirv_val(words) {
        panic!("spirv-val failed:\n{e}\n{}", compiler::disassemble(words));
    }
}

/// A checked program and its `parallel loop` constructs (in source order).
pub struct Source {
    pub program: hir::Program,
    pub builtins: lang::Builtins,
}

impl Source {
    pub fn new(src: &str) -> Source {
        let builtins = stdlib::builtins();
        let program = match lang::check_source(src, &builtins) {
            Ok(c) => c.program,
            Err(d) => panic!("check failed: {d:#?}"),
        };
        Source { program, builtins }
    }

    pub fn constructs(&self) -> Vec<&hir::Construct> {
        fn walk<'a>(b: &'a hir::Block, out: &mut Vec<&'a hir::Construct>) {
            for s in b {
                match &s.kind {
                    StmtKind::Construct(c) => {
                        if matches!(
                            c.kind,
                            hir::DirectiveKind::ParallelLoop | hir::DirectiveKind::Parallel
                        ) {
                            out.push(c);
                        } else if let hir::ConstructBody::Block(b) = &c.body {
                            walk(b, out);
                        }
                    }
                    StmtKind::If { then, els, .. } => {
                        walk(then, out);
                        walk(els, out);
                    }
                    StmtKind::While { body, .. } | StmtKind::Block(body) => walk(body, out),
                    StmtKind::For(f) => walk(&f.body, out),
                    _ => {}
                }
            }
        }
        let mut v = Vec::new();
        walk(&self.program.main.block, &mut v);
        v
    }

    pub fn lower(&self, n: usize) -> Result<Kernel, lang::Diag> {
        let c = self.constructs()[n];
        compiler::lower(&self.program, &self.program.main, c, &self.builtins)
    }

    pub fn kernel(&self, n: usize) -> Kernel {
        self.lower(n)
            .unwrap_or_else(|d| panic!("lowering failed: {d:#?}"))
    }

    /// The constant value of a loop bound (tests use constant bounds).
    pub fn const_of(&self, e: hir::ExprH) -> i128 {
        match &self.program.main.exprs[e] {
            hir::Expr::Const(v) => v.as_i128().expect("integer bound"),
            other => panic!("loop bound is not a constant: {other:?}"),
        }
    }

    pub fn bounds(&self, k: &Kernel) -> Vec<(i128, i128)> {
        k.levels
            .iter()
            .map(|l| (self.const_of(l.lo), self.const_of(l.hi)))
            .collect()
    }
}

/// One array argument: its bytes (what the device buffer holds), the whole
/// array's dims and the base offset of the section held.
#[derive(Clone, Debug)]
pub struct Arr {
    pub bytes: Vec<u8>,
    pub dims: Vec<u64>,
    pub base: u64,
}

impl Arr {
    pub fn whole(bytes: Vec<u8>, dims: &[u64]) -> Arr {
        Arr {
            bytes,
            dims: dims.to_vec(),
            base: 0,
        }
    }
}

/// The outcome of a launch: each array's bytes after the kernel.
pub struct Ran {
    pub arrays: Vec<Vec<u8>>,
    /// Per `kernel.reductions`: the partials buffer's bytes (`groups[0]` elements).
    pub partials: Vec<Vec<u8>>,
    pub groups: [u32; 3],
    pub layout: ArgLayout,
}

impl Ran {
    /// Reduction `r` folded on the host (`compiler::reduce_partials`).
    pub fn reduced(&self, k: &Kernel, r: usize) -> Value {
        let red = &k.reductions[r];
        compiler::reduce_partials(red.op, red.ty, &self.partials[r])
    }
}

/// `Spec::default()` with the device's optional features.
pub fn spec_for(dev: &Device) -> Spec {
    let f = dev.features();
    Spec {
        features: compiler::Features {
            float64: f.shader_float64,
            int64: f.shader_int64,
            storage_buffer_8bit: f.storage_buffer_8bit_access,
            int64_atomics: f.shader_buffer_int64_atomics,
            float32_atomic_add: f.shader_buffer_float32_atomic_add,
            float64_atomic_add: f.shader_buffer_float64_atomic_add,
            buffer_device_address: f.buffer_device_address,
        },
        // As the runtime does on a CPU driver: every array a kernel only
        // reads, of 32-bit elements, through a texel buffer.
        texels: if dev.info().device_type == vk_runtime::DeviceType::Cpu {
            !0
        } else {
            0
        },
        ..Spec::default()
    }
}

/// The binding kinds of `k`'s pipeline under `spec` (`n` bindings).
pub fn bindings(k: &Kernel, spec: &Spec, n: u32) -> Vec<Binding> {
    (0..n as usize)
        .map(|i| match spec.texel_elem(k, i) {
            Some(e) => Binding::Texels(TexelFormat::of(e.is_float(), e.is_signed_int())),
            None => Binding::Storage,
        })
        .collect()
}

/// Compile (and `spirv-val`) `k` for `spec`, run it with these arguments and
/// read every array back. `params` by name; arrays by name.
pub fn run(
    dev: &Device,
    src: &Source,
    k: &Kernel,
    spec: &Spec,
    params: &[(&str, Value)],
    arrays: &HashMap<&str, Arr>,
) -> Ran {
    run_with_levels(dev, k, spec, params, arrays, src.bounds(k))
}

pub fn run_with_levels(
    dev: &Device,
    k: &Kernel,
    spec: &Spec,
    params: &[(&str, Value)],
    arrays: &HashMap<&str, Arr>,
    levels: Vec<(i128, i128)>,
) -> Ran {
    run_full(dev, k, spec, params, arrays, levels, None)
}

/// Launch with everything explicit (`num_gangs` as the runtime would pass it).
pub fn run_full(
    dev: &Device,
    k: &Kernel,
    spec: &Spec,
    params: &[(&str, Value)],
    arrays: &HashMap<&str, Arr>,
    levels: Vec<(i128, i128)>,
    num_gangs: Option<u64>,
) -> Ran {
    run_capped(dev, k, spec, params, arrays, levels, num_gangs, None)
}

/// As [`run_full`], with the dispatch capped at `max_groups` workgroups (as
/// if the device's limit were lower), to exercise the grid-stride loops.
#[allow(clippy::too_many_arguments)]
pub fn run_capped(
    dev: &Device,
    k: &Kernel,
    spec: &Spec,
    params: &[(&str, Value)],
    arrays: &HashMap<&str, Arr>,
    levels: Vec<(i128, i128)>,
    num_gangs: Option<u64>,
    max_groups: Option<u32>,
) -> Ran {
    // Texel reads only where the kernel allows them, on a device whose
    // buffers take texel views (as the runtime does).
    let views = dev.info().device_type == vk_runtime::DeviceType::Cpu;
    let spec = &Spec {
        texels: if views {
            spec.texels & Spec::texel_candidates(k)
        } else {
            0
        },
        ..*spec
    };
    let words = compiler::compile(k, spec).unwrap_or_else(|d| panic!("compile failed: {d:#?}"));
    spirv_val(&words);
    let layout = ArgLayout::of(k, spec);
    let mut q = Queue::new(dev, 0).unwrap();
    let mut bufs: Vec<Buffer> = Vec::new();
    for (_, a) in k.arrays.iter() {
        bufs.push(upload(&mut q, &arrays[a.name.as_str()].bytes));
    }
    let args = LaunchArgs {
        params: k
            .params
            .iter()
            .map(|p| {
                params
                    .iter()
                    .find(|(n, _)| *n == p.name)
                    .unwrap_or_else(|| panic!("no value for parameter `{}`", p.name))
                    .1
            })
            .collect(),
        arrays: k
            .arrays
            .iter()
            .zip(&bufs)
            .map(|((_, a), buf)| {
                let arr = &arrays[a.name.as_str()];
                let size = compiler::spirv::types::Ty::storage(a.elem).size() as u64;
                ArrayArgs {
                    base: arr.base,
                    dims: arr.dims.as_slice().into(),
                    // Read only for an array `spec.by_address` names.
                    address: buf.device_address().unwrap_or(0),
                    len: arr.bytes.len() as u64 / size,
                }
            })
            .collect(),
        levels,
        num_gangs,
        range: None,
    };
    let teams = compiler::spirv::teams(k, spec);
    let wg = match (teams, k.tile) {
        (Some(t), _) => t.workgroup_size(),
        (None, Some((a, b))) => a * b,
        (None, None) => k.vector_length.unwrap_or(spec.workgroup_size),
    };
    let max_groups = max_groups.unwrap_or(dev.info().limits.max_compute_work_group_count[0]);
    let launch = layout
        .encode(
            k,
            &args,
            wg,
            max_groups,
            compiler::PerInvocation::of(k, spec),
        )
        .unwrap_or_else(|d| panic!("{d:#?}"));
    let pipe = ComputePipeline::with_bindings(
        dev,
        &words,
        "main",
        &bindings(k, spec, layout.num_bindings(k)),
        layout.push_constant_bytes(),
        &[(0, wg)],
    )
    .expect("pipeline");
    for r in &k.reductions {
        // Poisoned, so a workgroup that skips its slot is seen.
        let n = launch.groups[0].max(1) as usize * compiler::abi::partial_size(r.ty);
        bufs.push(upload(&mut q, &vec![0xA5u8; n]));
    }
    let pc = match layout.location {
        ArgLocation::PushConstants => launch.bytes.to_vec(),
        ArgLocation::Buffer { .. } => {
            bufs.push(upload(&mut q, &launch.bytes));
            Vec::new()
        }
    };
    let bindings: Vec<BufferBinding> = bufs.iter().map(BufferBinding::whole).collect();
    q.dispatch(&pipe, &bindings, &pc, launch.groups).unwrap();
    let v = q.submit().unwrap();
    assert!(q.host_wait(v, FOREVER).unwrap());
    let out = bufs
        .iter()
        .take(k.arrays.len())
        .map(|b| download(&mut q, b))
        .collect();
    let partials = bufs[k.arrays.len()..k.arrays.len() + k.reductions.len()]
        .iter()
        .zip(&k.reductions)
        .map(|(b, r)| {
            let mut v = download(&mut q, b);
            v.truncate(launch.groups[0] as usize * compiler::abi::partial_size(r.ty));
            v
        })
        .collect();
    Ran {
        arrays: out,
        partials,
        groups: launch.groups,
        layout,
    }
}

pub fn upload(queue: &mut Queue, data: &[u8]) -> Buffer {
    vk_runtime::testing::upload(queue, data).unwrap()
}

pub fn download(queue: &mut Queue, buf: &Buffer) -> Vec<u8> {
    vk_runtime::testing::download(queue, buf).unwrap()
}

/// Encode values of one scalar type as array bytes (bool/u8: 1 byte).
pub fn bytes_of(vals: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in vals {
        match *v {
            Value::Bool(b) => out.push(b as u8),
            Value::U8(x) => out.push(x),
            Value::I32(x) => out.extend(x.to_le_bytes()),
            Value::U32(x) => out.extend(x.to_le_bytes()),
            Value::I64(x) => out.extend(x.to_le_bytes()),
            Value::F32(x) => out.extend(x.to_le_bytes()),
            Value::F64(x) => out.extend(x.to_le_bytes()),
            _ => panic!("untyped value"),
        }
    }
    out
}

/// Decode `n` values of type `t` from array bytes.
pub fn values_of(t: Scalar, bytes: &[u8], n: usize) -> Vec<Value> {
    let sz = t.size();
    (0..n)
        .map(|i| {
            let b = &bytes[i * sz..(i + 1) * sz];
            match t {
                Scalar::Bool => Value::Bool(b[0] != 0),
                Scalar::U8 => Value::U8(b[0]),
                Scalar::I32 => Value::I32(i32::from_le_bytes(b.try_into().unwrap())),
                Scalar::U32 => Value::U32(u32::from_le_bytes(b.try_into().unwrap())),
                Scalar::I64 => Value::I64(i64::from_le_bytes(b.try_into().unwrap())),
                Scalar::F32 => Value::F32(f32::from_le_bytes(b.try_into().unwrap())),
                Scalar::F64 => Value::F64(f64::from_le_bytes(b.try_into().unwrap())),
            }
        })
        .collect()
}

pub fn f32s(b: &[u8], n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()))
        .collect()
}

pub fn f64s(b: &[u8], n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| f64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
        .collect()
}

pub fn u32s(b: &[u8], n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()))
        .collect()
}

/// Tiny xorshift generator.
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
