//! Where an array's elements are: through its binding, or through its
//! buffer's 64-bit device address.
//!
//! One binding shows a kernel at most `maxStorageBufferRange` bytes (4 GiB
//! on most GPUs, 128 MiB on lavapipe). An array whose buffer is larger is
//! reached by address ([`crate::Spec::by_address`]): the module uses the
//! `PhysicalStorageBuffer64` addressing model, and element `e` of array `i`
//! is the pointer `addr_i + e * size` (`OpConvertUToPtr`) with the address
//! and the buffer's length in the argument block (see [`crate::abi`]).
//! Loads and stores through such a pointer carry the `Aligned` operand the
//! storage class requires (the element's size: buffers start at least
//! 16-byte aligned and elements are packed). Every other array keeps its
//! binding and its module is the same as without this file.
//!
//! An array read through a texel buffer ([`super::texels`]) is a third way,
//! behind the same functions.
//!
//! Every access to an element goes through [`Writer::element_ptr`],
//! [`Writer::load_elem`] and [`Writer::store_elem`], and every use of a
//! buffer's length through [`Writer::buffer_len`], so the two ways cannot
//! drift apart.

use super::types::Ty;
use super::{spv, Writer};
use crate::abi::FieldKind;
use crate::kir::ArrayH;
use crate::Spec;
use rspirv::dr::Operand;
use rspirv::spirv::{AddressingModel, Capability, MemoryAccess, StorageClass, Word};

impl Writer<'_> {
    /// Is array `a` (by index) reached by address?
    pub(super) fn addressed(&self, a: usize) -> bool {
        Spec::addressed(self.spec.by_address, a)
    }

    /// The addressing model of the module: physical pointers when any
    /// array is reached by address.
    pub(super) fn addressing_model(&mut self) -> AddressingModel {
        if (0..self.k.arrays.len()).any(|a| self.addressed(a)) {
            self.m.add_cap(Capability::PhysicalStorageBufferAddresses);
            if self.spec.spirv_version < (1, 5) {
                self.m.add_ext("SPV_KHR_physical_storage_buffer");
            }
            AddressingModel::PhysicalStorageBuffer64
        } else {
            AddressingModel::Logical
        }
    }

    /// The pointer to element `lin` of the array's buffer (index type,
    /// from [`Writer::element_index`]: the section's base already taken off).
    pub(super) fn element_ptr(&mut self, array: ArrayH, lin: Word) -> Word {
        let a = array.index();
        if self.texels[a].is_some() {
            return self.texel_element(a, lin);
        }
        let view = self.views[a];
        let et = self.m.ty(view);
        let Some(buffer) = self.buffers[a] else {
            let addr = self.load_arg(FieldKind::Addr(a)).unwrap_or_else(|_| {
                unreachable!("the layout has an address for every array reached by address")
            });
            let u64t = self.m.ty(Ty::U64);
            let lin = self.int_cast(lin, self.idx, Ty::U64);
            let size = self.m.konst(Ty::U64, view.size() as u64);
            let off = spv(self.m.b.i_mul(u64t, None, lin, size));
            let at = spv(self.m.b.i_add(u64t, None, addr, off));
            let p = self.m.ptr(StorageClass::PhysicalStorageBuffer, et);
            let ptr = spv(self.m.b.convert_u_to_ptr(p, None, at));
            self.aligned.insert(ptr, view.size());
            return ptr;
        };
        let p = self.m.ptr(StorageClass::StorageBuffer, et);
        let zero = self.m.u32c(0);
        spv(self.m.b.access_chain(p, None, buffer, [zero, lin]))
    }

    /// The elements the array's buffer holds, in the index type.
    pub(super) fn buffer_len(&mut self, a: usize) -> Word {
        if self.texels[a].is_some() {
            return self.texel_len(a);
        }
        match self.buffers[a] {
            Some(buffer) => {
                let u32t = self.m.ty(Ty::U32);
                let len = spv(self.m.b.array_length(u32t, None, buffer, 0));
                self.int_cast(len, Ty::U32, self.idx)
            }
            None => self.load_arg(FieldKind::Len(a)).unwrap_or_else(|_| {
                unreachable!("the layout has a length for every array reached by address")
            }),
        }
    }

    /// Load the element at `ptr` (from [`Writer::element_ptr`]).
    pub(super) fn load_elem(&mut self, ty: Word, ptr: Word) -> Word {
        if let Some(v) = self.texel_fetch(ty, ptr) {
            return v;
        }
        match self.aligned.get(&ptr).copied() {
            Some(n) => spv(self.m.b.load(
                ty,
                None,
                ptr,
                Some(MemoryAccess::ALIGNED),
                [Operand::LiteralBit32(n)],
            )),
            None => spv(self.m.b.load(ty, None, ptr, None, [])),
        }
    }

    /// Store `v` to the element at `ptr` (from [`Writer::element_ptr`]).
    pub(super) fn store_elem(&mut self, ptr: Word, v: Word) {
        assert!(
            !self.texel_elems.contains_key(&ptr),
            "texel arrays are never written"
        );
        match self.aligned.get(&ptr).copied() {
            Some(n) => spv(self.m.b.store(
                ptr,
                v,
                Some(MemoryAccess::ALIGNED),
                [Operand::LiteralBit32(n)],
            )),
            None => spv(self.m.b.store(ptr, v, None, [])),
        }
    }
}
