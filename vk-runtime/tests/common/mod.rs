//! Shared test helpers: a validated instance whose messages fail the test,
//! `spirv-val`, and a few compute kernels built with rspirv.
#![allow(dead_code)]

use std::time::Duration;

use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, LoopControl, MemoryModel, SelectionControl, StorageClass, Word,
};
use vk_runtime::{Device, Instance, Queue};

/// Runs `body` with a validated instance; fails if the validation layer
/// reported anything, including while everything is dropped.
pub fn with_validation(body: impl FnOnce(&Instance)) {
    if let Err(messages) = vk_runtime::testing::with_validation("vk-runtime tests", body) {
        panic!("validation messages:\n{}", messages.join("\n"));
    }
}

/// The first adapter's device.
pub fn device(instance: &Instance) -> Device {
    Device::new(instance, 0).expect("device")
}

pub const FOREVER: Duration = Duration::from_secs(60);

#[allow(unused_imports)] // not every test binary needs it
pub use vk_runtime::testing::temp_path;

/// Fails the test if `spirv-val --target-env vulkan1.2` rejects the module
/// or is missing.
pub fn spirv_val(words: &[u32]) {
    if let Err(e) = vk_runtime::testing::spirv_val(words) {
        panic!("spirv-val failed:\n{e}");
    }
}

/// Uploads `data` into a new device buffer through staging and waits.
pub fn upload(queue: &mut Queue, data: &[u8]) -> vk_runtime::Buffer {
    vk_runtime::testing::upload(queue, data).unwrap()
}

/// Downloads a device buffer through staging (waits).
pub fn download(queue: &mut Queue, buf: &vk_runtime::Buffer) -> Vec<u8> {
    vk_runtime::testing::download(queue, buf).unwrap()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn bytes_of_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn bytes_of_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Tiny xorshift generator (no rand dependency).
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next_u64() >> 24) as u8).collect()
    }
}

// ---- kernels ---------------------------------------------------------------

pub const LOCAL_SIZE: u32 = 64;

/// Scaffolding shared by the kernels: SPIR-V 1.3, GLCompute `main` with
/// local size (64,1,1), `buffers` storage buffers of 32-bit `elem` at set 0
/// and a push-constant block of `pc` 32-bit members.
pub struct Kernel {
    pub b: Builder,
    pub u32: Word,
    pub f32: Word,
    pub bool: Word,
    pub buffers: Vec<Word>,
    pub elem_ptr: Vec<Word>,
    pub pc: Word,
    pub pc_types: Vec<Word>,
    gid_var: Word,
    func: Word,
}

pub enum Elem {
    U32,
    F32,
}

impl Kernel {
    pub fn new(buffers: &[Elem], pc: &[Elem]) -> Kernel {
        let mut b = Builder::new();
        b.set_version(1, 3);
        b.capability(Capability::Shader);
        b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        let void = b.type_void();
        let u32t = b.type_int(32, 0);
        let f32t = b.type_float(32, None);
        let boolt = b.type_bool();
        let v3 = b.type_vector(u32t, 3);
        let pv3 = b.type_pointer(None, StorageClass::Input, v3);
        let gid_var = b.variable(pv3, None, StorageClass::Input, None);
        b.decorate(
            gid_var,
            Decoration::BuiltIn,
            [Operand::BuiltIn(BuiltIn::GlobalInvocationId)],
        );
        let ty = |e: &Elem| match e {
            Elem::U32 => u32t,
            Elem::F32 => f32t,
        };
        let mut bufs = Vec::new();
        let mut elem_ptr = Vec::new();
        for (i, e) in buffers.iter().enumerate() {
            let et = ty(e);
            // Distinct array/struct types per element type; rspirv dedups.
            let arr = b.type_runtime_array(et);
            let st = b.type_struct([arr]);
            let p = b.type_pointer(None, StorageClass::StorageBuffer, st);
            let v = b.variable(p, None, StorageClass::StorageBuffer, None);
            b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
            b.decorate(v, Decoration::Binding, [Operand::LiteralBit32(i as u32)]);
            bufs.push(v);
            elem_ptr.push(b.type_pointer(None, StorageClass::StorageBuffer, et));
        }
        // Decorations of the (deduplicated) array and struct types, once each.
        for e in [Elem::U32, Elem::F32] {
            if buffers
                .iter()
                .any(|x| std::mem::discriminant(x) == std::mem::discriminant(&e))
            {
                let et = ty(&e);
                let arr = b.type_runtime_array(et);
                let st = b.type_struct([arr]);
                b.decorate(arr, Decoration::ArrayStride, [Operand::LiteralBit32(4)]);
                b.decorate(st, Decoration::Block, []);
                b.member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
            }
        }
        let pc_types: Vec<Word> = pc.iter().map(ty).collect();
        let pc_var = if pc.is_empty() {
            0
        } else {
            let st = b.type_struct(pc_types.clone());
            b.decorate(st, Decoration::Block, []);
            for i in 0..pc.len() {
                b.member_decorate(
                    st,
                    i as u32,
                    Decoration::Offset,
                    [Operand::LiteralBit32(4 * i as u32)],
                );
            }
            let p = b.type_pointer(None, StorageClass::PushConstant, st);
            b.variable(p, None, StorageClass::PushConstant, None)
        };
        let fnty = b.type_function(void, []);
        let func = b
            .begin_function(void, None, FunctionControl::NONE, fnty)
            .unwrap();
        b.entry_point(ExecutionModel::GLCompute, func, "main", [gid_var]);
        b.execution_mode(func, ExecutionMode::LocalSize, [LOCAL_SIZE, 1, 1]);
        b.begin_block(None).unwrap();
        Kernel {
            b,
            u32: u32t,
            f32: f32t,
            bool: boolt,
            buffers: bufs,
            elem_ptr,
            pc: pc_var,
            pc_types,
            gid_var,
            func,
        }
    }

    pub fn const_u32(&mut self, v: u32) -> Word {
        self.b.constant_bit32(self.u32, v)
    }

    /// gl_GlobalInvocationID.x
    pub fn gid_x(&mut self) -> Word {
        let v3 = self.b.type_vector(self.u32, 3);
        let g = self.b.load(v3, None, self.gid_var, None, []).unwrap();
        self.b.composite_extract(self.u32, None, g, [0]).unwrap()
    }

    /// Loads push-constant member `i`.
    pub fn push_constant(&mut self, i: u32) -> Word {
        let t = self.pc_types[i as usize];
        let p = self.b.type_pointer(None, StorageClass::PushConstant, t);
        let idx = self.const_u32(i);
        let ptr = self.b.access_chain(p, None, self.pc, [idx]).unwrap();
        self.b.load(t, None, ptr, None, []).unwrap()
    }

    /// Pointer to element `index` of buffer `buf`.
    pub fn element(&mut self, buf: usize, index: Word) -> Word {
        let zero = self.const_u32(0);
        self.b
            .access_chain(self.elem_ptr[buf], None, self.buffers[buf], [zero, index])
            .unwrap()
    }

    /// `if cond { body }`, continuing after it.
    pub fn if_then(&mut self, cond: Word, body: impl FnOnce(&mut Kernel)) {
        let then = self.b.id();
        let merge = self.b.id();
        self.b
            .selection_merge(merge, SelectionControl::NONE)
            .unwrap();
        self.b.branch_conditional(cond, then, merge, []).unwrap();
        self.b.begin_block(Some(then)).unwrap();
        body(self);
        self.b.branch(merge).unwrap();
        self.b.begin_block(Some(merge)).unwrap();
    }

    pub fn finish(mut self) -> Vec<u32> {
        self.b.ret().unwrap();
        self.b.end_function().unwrap();
        let _ = self.func;
        self.b.module().assemble()
    }
}

/// `y[i] = a * x[i] + y[i]` for `i < n`; x binding 0, y binding 1,
/// push constants `{ a: f32, n: u32 }`.
pub fn saxpy_spirv() -> Vec<u32> {
    let mut k = Kernel::new(&[Elem::F32, Elem::F32], &[Elem::F32, Elem::U32]);
    let i = k.gid_x();
    let n = k.push_constant(1);
    let cond = k.b.u_less_than(k.bool, None, i, n).unwrap();
    k.if_then(cond, |k| {
        let a = k.push_constant(0);
        let px = k.element(0, i);
        let py = k.element(1, i);
        let x = k.b.load(k.f32, None, px, None, []).unwrap();
        let y = k.b.load(k.f32, None, py, None, []).unwrap();
        let ax = k.b.f_mul(k.f32, None, a, x).unwrap();
        let r = k.b.f_add(k.f32, None, ax, y).unwrap();
        k.b.store(py, r, None, []).unwrap();
    });
    k.finish()
}

/// `buf[i] = buf[i] * m + c` (wrapping u32) for `i < n`; push constants
/// `{ m, c, n }`. Steps with different `c` do not commute, so a chain of
/// them checks ordering.
pub fn affine_spirv() -> Vec<u32> {
    let mut k = Kernel::new(&[Elem::U32], &[Elem::U32, Elem::U32, Elem::U32]);
    let i = k.gid_x();
    let n = k.push_constant(2);
    let cond = k.b.u_less_than(k.bool, None, i, n).unwrap();
    k.if_then(cond, |k| {
        let m = k.push_constant(0);
        let c = k.push_constant(1);
        let p = k.element(0, i);
        let v = k.b.load(k.u32, None, p, None, []).unwrap();
        let vm = k.b.i_mul(k.u32, None, v, m).unwrap();
        let r = k.b.i_add(k.u32, None, vm, c).unwrap();
        k.b.store(p, r, None, []).unwrap();
    });
    k.finish()
}

pub fn affine_cpu(v: u32, m: u32, c: u32) -> u32 {
    v.wrapping_mul(m).wrapping_add(c)
}

/// A deliberately slow kernel: `out[i] = lcg^iters(i)` for `i < n`, with
/// push constants `{ iters, n }`.
pub fn slow_spirv() -> Vec<u32> {
    let mut k = Kernel::new(&[Elem::U32], &[Elem::U32, Elem::U32]);
    let pf = k.b.type_pointer(None, StorageClass::Function, k.u32);
    // Function variables first in the entry block.
    let acc = k.b.variable(pf, None, StorageClass::Function, None);
    let j = k.b.variable(pf, None, StorageClass::Function, None);
    let i = k.gid_x();
    let n = k.push_constant(1);
    let cond = k.b.u_less_than(k.bool, None, i, n).unwrap();
    k.if_then(cond, |k| {
        let iters = k.push_constant(0);
        let zero = k.const_u32(0);
        let one = k.const_u32(1);
        let mul = k.const_u32(1_664_525);
        let add = k.const_u32(1_013_904_223);
        k.b.store(acc, i, None, []).unwrap();
        k.b.store(j, zero, None, []).unwrap();
        let header = k.b.id();
        let check = k.b.id();
        let body = k.b.id();
        let cont = k.b.id();
        let merge = k.b.id();
        k.b.branch(header).unwrap();
        k.b.begin_block(Some(header)).unwrap();
        k.b.loop_merge(merge, cont, LoopControl::NONE, []).unwrap();
        k.b.branch(check).unwrap();
        k.b.begin_block(Some(check)).unwrap();
        let jv = k.b.load(k.u32, None, j, None, []).unwrap();
        let c = k.b.u_less_than(k.bool, None, jv, iters).unwrap();
        k.b.branch_conditional(c, body, merge, []).unwrap();
        k.b.begin_block(Some(body)).unwrap();
        let a = k.b.load(k.u32, None, acc, None, []).unwrap();
        let am = k.b.i_mul(k.u32, None, a, mul).unwrap();
        let an = k.b.i_add(k.u32, None, am, add).unwrap();
        k.b.store(acc, an, None, []).unwrap();
        k.b.branch(cont).unwrap();
        k.b.begin_block(Some(cont)).unwrap();
        let jv2 = k.b.load(k.u32, None, j, None, []).unwrap();
        let jn = k.b.i_add(k.u32, None, jv2, one).unwrap();
        k.b.store(j, jn, None, []).unwrap();
        k.b.branch(header).unwrap();
        k.b.begin_block(Some(merge)).unwrap();
        let out = k.element(0, i);
        let r = k.b.load(k.u32, None, acc, None, []).unwrap();
        k.b.store(out, r, None, []).unwrap();
    });
    k.finish()
}

/// Elements of the slow kernel's output in the tests.
#[allow(dead_code)] // not every test binary needs it
pub const SLOW_N: u32 = 4096;
/// Iterations per element that take a noticeable time on lavapipe.
#[allow(dead_code)]
pub const SLOW_ITERS: u32 = 20_000;

/// Records the slow kernel on `q`: `iters` iterations for each of the
/// `SLOW_N` elements of `out`.
#[allow(dead_code)]
pub fn dispatch_slow(
    q: &mut Queue,
    slow: &vk_runtime::ComputePipeline,
    out: &vk_runtime::Buffer,
    iters: u32,
) {
    q.dispatch(
        slow,
        &[vk_runtime::BufferBinding::whole(out)],
        &bytes_of_u32(&[iters, SLOW_N]),
        groups_for(SLOW_N),
    )
    .unwrap();
}

pub fn slow_cpu(i: u32, iters: u32) -> u32 {
    let mut a = i;
    for _ in 0..iters {
        a = a.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    a
}

pub fn groups_for(n: u32) -> [u32; 3] {
    [n.div_ceil(LOCAL_SIZE), 1, 1]
}
