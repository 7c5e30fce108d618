//! One definition point for SPIR-V types, constants and capabilities
//! (after naga's `LocalType` + `lookup_type`).
//!
//! rspirv's `dr::Builder` dedups types by a linear scan and constants not at
//! all, and a struct type decorated twice (`Block`, member offsets) is an
//! error, so every type, pointer, function type and constant of a module is
//! created here once and looked up in a `HashMap` after that.
//!
//! Register types (how values live in SSA ids): `bool` is `OpTypeBool`; `u8`
//! lives in a `u32` holding 0..=255 (arithmetic is done in 32 bits and
//! masked), so 8-bit types appear only in storage (loads, stores and width
//! conversions), which `StorageBuffer8BitAccess` allows without `Int8`.

use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{Capability, Decoration, StorageClass, Word};
use std::collections::HashMap;

use lang::Scalar;

/// A SPIR-V value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    Void,
    Bool,
    U8,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    UVec3,
}

impl Ty {
    /// The register type of a scalar (`u8` → `u32`).
    pub fn reg(s: Scalar) -> Ty {
        match s {
            Scalar::Bool => Ty::Bool,
            Scalar::I32 => Ty::I32,
            Scalar::I64 => Ty::I64,
            Scalar::U32 | Scalar::U8 => Ty::U32,
            Scalar::F32 => Ty::F32,
            Scalar::F64 => Ty::F64,
        }
    }
    /// The type of an array element in a storage buffer (`bool`, `u8` → 8 bits).
    pub fn storage(s: Scalar) -> Ty {
        match s {
            Scalar::Bool | Scalar::U8 => Ty::U8,
            s => Ty::reg(s),
        }
    }
    pub fn int_width(self) -> Option<(u32, bool)> {
        Some(match self {
            Ty::U8 => (8, false),
            Ty::I32 => (32, true),
            Ty::U32 => (32, false),
            Ty::I64 => (64, true),
            Ty::U64 => (64, false),
            _ => return None,
        })
    }
    pub fn int(width: u32, signed: bool) -> Ty {
        match (width, signed) {
            (8, _) => Ty::U8,
            (32, true) => Ty::I32,
            (32, false) => Ty::U32,
            (64, true) => Ty::I64,
            _ => Ty::U64,
        }
    }
    pub fn size(self) -> u32 {
        match self {
            Ty::U8 => 1,
            Ty::I64 | Ty::U64 | Ty::F64 => 8,
            Ty::Void | Ty::Bool => 0,
            Ty::UVec3 => 12,
            _ => 4,
        }
    }
}

/// A module under construction with its caches.
pub struct Module {
    pub b: Builder,
    types: HashMap<Ty, Word>,
    pointers: HashMap<(u32, Word), Word>,
    fn_types: HashMap<(Word, Vec<Word>), Word>,
    consts: HashMap<(Ty, u64), Word>,
    /// One `struct { T data[]; }` (Block) per storage element type.
    buffer_structs: HashMap<Ty, Word>,
    /// One undecorated struct per tuple of register types (results of
    /// functions returning tuples).
    tuple_structs: HashMap<Vec<Ty>, Word>,
    caps: Vec<Capability>,
    exts: Vec<&'static str>,
    glsl: Option<Word>,
}

impl Module {
    pub fn new(version: (u8, u8)) -> Module {
        let mut b = Builder::new();
        b.set_version(version.0, version.1);
        Module {
            b,
            types: HashMap::new(),
            pointers: HashMap::new(),
            fn_types: HashMap::new(),
            consts: HashMap::new(),
            buffer_structs: HashMap::new(),
            tuple_structs: HashMap::new(),
            caps: vec![Capability::Shader],
            exts: Vec::new(),
            glsl: None,
        }
    }

    /// Record a capability (emitted once, at the end, in a stable order).
    pub fn add_cap(&mut self, c: Capability) {
        if !self.caps.contains(&c) {
            self.caps.push(c);
        }
    }
    pub fn add_ext(&mut self, e: &'static str) {
        if !self.exts.contains(&e) {
            self.exts.push(e);
        }
    }

    /// Emit the recorded capabilities and extensions (they go to their own
    /// sections of the module, so doing it last is fine).
    pub fn finish_header(&mut self) {
        for &c in &self.caps {
            self.b.capability(c);
        }
        for e in &self.exts {
            self.b.extension(*e);
        }
    }

    pub fn glsl(&mut self) -> Word {
        if let Some(g) = self.glsl {
            return g;
        }
        let g = self.b.ext_inst_import("GLSL.std.450");
        self.glsl = Some(g);
        g
    }

    pub fn ty(&mut self, t: Ty) -> Word {
        if let Some(&w) = self.types.get(&t) {
            return w;
        }
        let w = match t {
            Ty::Void => self.b.type_void(),
            Ty::Bool => self.b.type_bool(),
            Ty::U8 => {
                self.add_cap(Capability::StorageBuffer8BitAccess);
                self.add_ext("SPV_KHR_8bit_storage");
                self.b.type_int(8, 0)
            }
            Ty::I32 => self.b.type_int(32, 1),
            Ty::U32 => self.b.type_int(32, 0),
            Ty::I64 => {
                self.add_cap(Capability::Int64);
                self.b.type_int(64, 1)
            }
            Ty::U64 => {
                self.add_cap(Capability::Int64);
                self.b.type_int(64, 0)
            }
            Ty::F32 => self.b.type_float(32, None),
            Ty::F64 => {
                self.add_cap(Capability::Float64);
                self.b.type_float(64, None)
            }
            Ty::UVec3 => {
                let u = self.ty(Ty::U32);
                self.b.type_vector(u, 3)
            }
        };
        self.types.insert(t, w);
        w
    }

    /// A module-scope variable of `class` holding a `pointee`, bound at
    /// `binding` of descriptor set 0 and named `name`.
    pub fn bound_variable(
        &mut self,
        class: StorageClass,
        pointee: Word,
        binding: u32,
        name: impl Into<String>,
    ) -> Word {
        let p = self.ptr(class, pointee);
        let v = self.b.variable(p, None, class, None);
        self.b
            .decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b
            .decorate(v, Decoration::Binding, [Operand::LiteralBit32(binding)]);
        self.b.name(v, name);
        v
    }

    pub fn ptr(&mut self, class: StorageClass, pointee: Word) -> Word {
        let key = (class as u32, pointee);
        if let Some(&w) = self.pointers.get(&key) {
            return w;
        }
        let w = self.b.type_pointer(None, class, pointee);
        self.pointers.insert(key, w);
        w
    }

    pub fn fn_type(&mut self, ret: Word, params: Vec<Word>) -> Word {
        let key = (ret, params);
        if let Some(&w) = self.fn_types.get(&key) {
            return w;
        }
        let w = self.b.type_function(ret, key.1.clone());
        self.fn_types.insert(key, w);
        w
    }

    /// A constant of type `t` with these bits (bool: 0/1; f32: `to_bits`).
    pub fn konst(&mut self, t: Ty, bits: u64) -> Word {
        let key = (t, bits);
        if let Some(&w) = self.consts.get(&key) {
            return w;
        }
        let ty = self.ty(t);
        let w = match t {
            Ty::Bool if bits != 0 => self.b.constant_true(ty),
            Ty::Bool => self.b.constant_false(ty),
            Ty::I64 | Ty::U64 | Ty::F64 => self.b.constant_bit64(ty, bits),
            Ty::U8 | Ty::Void | Ty::UVec3 => unreachable!("no constants of {t:?}"),
            _ => self.b.constant_bit32(ty, bits as u32),
        };
        self.consts.insert(key, w);
        w
    }

    /// Whether `w` is one of this module's constants.
    pub fn is_const(&self, w: Word) -> bool {
        self.consts.values().any(|&c| c == w)
    }

    pub fn u32c(&mut self, v: u32) -> Word {
        self.konst(Ty::U32, v as u64)
    }

    /// `struct { elems.. }`, undecorated: never merged with a decorated
    /// struct of the same members (a `Block` may not be a value).
    pub fn tuple_struct(&mut self, elems: &[Ty]) -> Word {
        if let Some(&w) = self.tuple_structs.get(elems) {
            return w;
        }
        let members: Vec<Word> = elems.iter().map(|&t| self.ty(t)).collect();
        let id = self.b.id();
        let w = self.b.type_struct_id(Some(id), members);
        self.tuple_structs.insert(elems.to_vec(), w);
        w
    }

    /// `struct { elem data[]; }` decorated Block, ArrayStride and Offset 0.
    pub fn buffer_struct(&mut self, elem: Ty) -> Word {
        if let Some(&w) = self.buffer_structs.get(&elem) {
            return w;
        }
        let et = self.ty(elem);
        let arr = self.b.type_runtime_array(et);
        self.b.decorate(
            arr,
            Decoration::ArrayStride,
            [Operand::LiteralBit32(elem.size())],
        );
        let st = self.b.type_struct([arr]);
        self.b.decorate(st, Decoration::Block, []);
        self.b
            .member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.buffer_structs.insert(elem, st);
        w_name(&mut self.b, st, &format!("Buffer_{elem:?}"));
        st
    }
}

fn w_name(b: &mut Builder, id: Word, name: &str) {
    b.name(id, name);
}
