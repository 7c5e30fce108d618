//! Arrays read through uniform texel buffers ([`crate::Spec::texels`]).
//!
//! Such an array is bound as a `UniformConstant` image of dimension
//! `Buffer` (sampled: read only) over its 32-bit elements, and element `e`
//! is `OpImageFetch` of texel `e`. It has no pointers, so
//! [`Writer::element_ptr`] hands out a fresh id standing for the element,
//! which only [`Writer::load_elem`] may take ([`Writer::texel_fetch`]); the
//! array is one the kernel never writes, so no store or atomic reaches it.

use super::types::Ty;
use super::{spv, Writer};
use rspirv::spirv::{Capability, Dim, ImageFormat, StorageClass, Word};

impl Writer<'_> {
    /// Declares array `i` (of element view `view`) as a texel buffer at
    /// binding `i`; its variable.
    pub(super) fn declare_texels(&mut self, i: usize, view: Ty, name: &str) -> Word {
        self.m.add_cap(Capability::SampledBuffer);
        let image = self.texel_image(view);
        self.m
            .bound_variable(StorageClass::UniformConstant, image, i as u32, name)
    }

    /// The sampled buffer image type of texels of `view` (made once).
    fn texel_image(&mut self, view: Ty) -> Word {
        self.texel_types(view).0
    }

    /// The image type of texels of `view` and the four-component vector a
    /// fetch returns (made once).
    fn texel_types(&mut self, view: Ty) -> (Word, Word) {
        if let Some(&(_, image, vec4)) = self.texel_types.iter().find(|(t, ..)| *t == view) {
            return (image, vec4);
        }
        let sampled = self.m.ty(view);
        let image = self.m.b.type_image(
            sampled,
            Dim::DimBuffer,
            0,
            0,
            0,
            1,
            ImageFormat::Unknown,
            None,
        );
        let vec4 = self.m.b.type_vector(sampled, 4);
        self.texel_types.push((view, image, vec4));
        (image, vec4)
    }

    /// An id standing for element `lin` (index type) of texel array `a`.
    pub(super) fn texel_element(&mut self, a: usize, lin: Word) -> Word {
        let id = self.m.b.id();
        self.texel_elems.insert(id, (a, lin));
        id
    }

    /// Loads the element `ptr` stands for, if it is a texel array's
    /// ([`Writer::texel_element`]).
    pub(super) fn texel_fetch(&mut self, ty: Word, ptr: Word) -> Option<Word> {
        let &(a, lin) = self.texel_elems.get(&ptr)?;
        let var = self.texels[a].expect("texel elements are of texel arrays");
        let (image, vec4) = self.texel_types(self.views[a]);
        let coord = self.int_cast(lin, self.idx, Ty::I32);
        let img = spv(self.m.b.load(image, None, var, None, []));
        let texel = spv(self.m.b.image_fetch(vec4, None, img, coord, None, []));
        Some(spv(self.m.b.composite_extract(ty, None, texel, [0])))
    }

    /// The texels texel array `a`'s view shows, in the index type.
    pub(super) fn texel_len(&mut self, a: usize) -> Word {
        self.m.add_cap(Capability::ImageQuery);
        let var = self.texels[a].expect("a texel array");
        let image = self.texel_image(self.views[a]);
        let i32t = self.m.ty(Ty::I32);
        let img = spv(self.m.b.load(image, None, var, None, []));
        let n = spv(self.m.b.image_query_size(i32t, None, img));
        self.int_cast(n, Ty::I32, self.idx)
    }
}
