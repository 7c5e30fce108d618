//! What a kernel is specialised for: the device's side of a compile (SPIR-V
//! version, index width, features, limits, subgroup size) and the knobs a
//! launch picks (checks, watchdog, coarsening, arrays reached by address).
//! It names nothing of a kernel, so the IR's analyses, the plan, the ABI
//! and the writer all read it from below.

use crate::kir::Features;

/// How a kernel computes f32 `/` and `sqrt`. The f64 routes need f64;
/// without it they are the driver's instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExactF32 {
    /// The driver's instructions (correctly rounded on lavapipe).
    #[default]
    Off,
    /// Widened to f64, computed there and rounded back.
    InF64,
    /// The driver's approximation refined with a fused `fma` (Markstein's
    /// method) on the operands' significands, scaled by their exponents:
    /// no f64, and no branch for division.
    Fma,
    /// As [`ExactF32::Fma`], each `fma` computed in f64 and rounded once
    /// (rounded to odd in f64, then to f32), which needs 64-bit integers
    /// too: for drivers whose `Fma` rounds twice (lavapipe's does). Slower
    /// than [`ExactF32::InF64`]; the tests take it to run the `fma` route's
    /// code on lavapipe.
    FmaByF64,
}

/// Width of the index arithmetic (`it`, counts, dims, bases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexWidth {
    /// Every array has fewer than 2^31 elements and `total < 2^31`.
    #[default]
    U32,
    /// Larger iteration spaces or arrays (needs `shaderInt64`).
    U64,
}

impl IndexWidth {
    pub fn bytes(self) -> u32 {
        match self {
            IndexWidth::U32 => 4,
            IndexWidth::U64 => 8,
        }
    }
    /// The narrowest width for arrays of these element counts and this many iterations.
    pub fn for_sizes(array_elements: impl IntoIterator<Item = u64>, total: u64) -> IndexWidth {
        const LIMIT: u64 = 1 << 31;
        if total < LIMIT && array_elements.into_iter().all(|n| n < LIMIT) {
            IndexWidth::U32
        } else {
            IndexWidth::U64
        }
    }
}

/// What a kernel is specialised for at launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Spec {
    /// SPIR-V version of the module: (1, 5) for Vulkan 1.2 and later, (1, 3)
    /// for Vulkan 1.1. From 1.4 on, every global the entry point uses is in
    /// its interface list (the writer does this).
    pub spirv_version: (u8, u8),
    /// Default of the work-group-size specialisation constant (`SpecId 0`)
    /// when the kernel has no constant `vector_length(n)`.
    pub workgroup_size: u32,
    /// Index arithmetic width ([`IndexWidth::for_sizes`]).
    pub index_width: IndexWidth,
    /// Device features available.
    pub features: Features,
    /// Push-constant budget; a larger argument block goes to a buffer.
    pub max_push_constants: u32,
    /// Unroll every innermost loop this many times ([`crate::unroll`]); 1 leaves
    /// loops alone. For drivers with a loop budget (llvmpipe).
    pub unroll: u8,
    /// Bounds-check mode: every array index and integer divisor is checked
    /// and the first violation recorded in the fault buffer
    /// ([`crate::abi::fault`]); the access itself is skipped (a load reads element
    /// 0 of the buffer, a store or atomic does nothing).
    pub checks: bool,
    /// The watchdog: loop back-edges one invocation may take before it
    /// records [`crate::abi::fault::LOOP_BUDGET`] and leaves every loop; 0 turns it
    /// off. With the fault buffer bound (checks, a budget or a loop cap), a
    /// loop left other than by its own exit (a driver's iteration cap) is
    /// recorded too.
    pub loop_budget: u32,
    /// The driver leaves every loop of an invocation once they have taken
    /// 65,535 back-edges between them, without telling anyone (llvmpipe).
    /// With the fault buffer bound, a kernel that can get there gets a
    /// guard that makes such a cut visible ([`crate::abi::fault::LOOP_CUT`]).
    pub loop_cap: bool,
    /// The driver's compiler scalarises integer division by a run-time
    /// value (llvmpipe: one division per SIMD lane), so a flat index is
    /// split over collapsed loops through a `f64` reciprocal instead,
    /// corrected to the exact quotient (32-bit indices with `float64`).
    pub split_by_reciprocal: bool,
    /// The driver compares a sign-extended 32-bit value with a 64-bit
    /// constant against the wrong half of the constant (llvmpipe of Mesa
    /// 22.3: `(i as i64) < 2i64` was false for every `i` >= 0), so an
    /// `i32` widens to `i64` from its two words instead of by
    /// `OpSConvert`.
    pub sext_by_words: bool,
    /// Storage buffers that the kernel's sequential loops both write and
    /// read ([`crate::facts::loop_updated`]) are `Coherent`. NVIDIA's driver
    /// (580, H100) otherwise gave a loop's `d[x] = d[x] + c[x, y]` stale
    /// values of `d[x]` when an earlier loop of the same invocation had
    /// written `c` (every load of `d[x]` saw its value from before the
    /// loop, so it kept the last term); `Coherent` (or reaching the arrays
    /// by address) made it right. The same outside loops where a store to
    /// another array comes between ([`crate::facts::reloaded`]): a
    /// leapfrog step `vy[i] += ..; vz[i] += ..; y[i] += DT * vy[i]; z[i]
    /// += DT * vz[i]` read `vz[i]` from before its update, in every
    /// element. Only those buffers:
    /// `Coherent` on every written one made the Jacobi sweep 1.9x slower
    /// on an H100.
    pub coherent_writes: bool,
    /// Ask the driver to keep signed zeros, infinities and NaNs of 32-bit
    /// and 64-bit floats (`SignedZeroInfNanPreserve`), where the device
    /// allows it: without it Vulkan lets a driver assume there are none.
    pub preserve_float: [bool; 2],
    /// Ask the driver to keep subnormal 32-bit and 64-bit floats
    /// (`DenormPreserve`), where the device allows it: without it Vulkan
    /// lets a driver flush them to zero (NVIDIA's does for f32), where the
    /// host keeps them.
    pub preserve_denorms: [bool; 2],
    /// How f32 `/` and `sqrt` are made correctly rounded, as the host's
    /// (Vulkan lets an f32 `OpFDiv` be 2.5 ulp off, and `Sqrt` more).
    pub exact_f32: ExactF32,
    /// For tests: the `fma` route moves the driver's reciprocal and inverse
    /// root by this many ulp, so that a driver that computes them exactly
    /// (lavapipe) still exercises the refinement and the rounding test.
    #[doc(hidden)]
    pub exact_f32_skew: i32,
    /// Lanes of a subgroup when the device has subgroup shuffles in compute
    /// (a power of two), else 0. With it, a gang of at most that many vector
    /// lanes lives in one subgroup ([`crate::plan::teams`]).
    pub subgroup_size: u32,
    /// `maxComputeWorkGroupInvocations` (and the x size limit), whichever is less.
    pub max_workgroup_size: u32,
    /// Iterations per trip of a flat kernel's grid-stride loop where its
    /// body allows it ([`crate::plan::coarsening`]); 1 leaves the loop alone.
    pub coarsen: u8,
    /// The same for a flat kernel with a construct-level reduction.
    pub coarsen_reduction: u8,
    /// Bit `i` set: array `i` is reached through its buffer's 64-bit device
    /// address (`PhysicalStorageBuffer` pointers, in the argument block)
    /// instead of its binding: for a buffer larger than one binding may be
    /// (see [`crate::abi`], "Arrays reached by address"). Needs `shaderInt64` and
    /// a device with buffer device addresses; arrays past the 64th are
    /// always bound.
    pub by_address: u64,
    /// Bit `i` set: array `i`, which the kernel only reads and whose
    /// elements are 32-bit, is read through a uniform texel buffer
    /// (`OpImageFetch`) instead of its storage buffer: llvmpipe gathers a
    /// texel buffer's elements in one instruction but loads a storage
    /// buffer's lane by lane, about three times slower. Ignored for an
    /// array reached by address, with 64-bit indexing and in bounds-check
    /// mode. Set per launch
    /// ([`Spec::texel_candidates`] gives the arrays it may name).
    pub texels: u64,
    /// Per private array of the kernel (`Kernel::private_copies`, the first
    /// [`crate::private_copies::LOCAL_ARRAYS`]): the elements of its
    /// section when each lane holds its copy as a Function-storage array
    /// of that size, else 0. Set per launch from the hidden array's shape
    /// ([`crate::private_copies::local_sizes`]).
    pub local_copies: [u8; 4],
}

impl Spec {
    /// Is array `i` read through a texel buffer under this spec?
    pub fn texel(&self, i: usize) -> bool {
        i < 64
            && self.texels & (1 << i) != 0
            && !self.checks
            && self.index_width == IndexWidth::U32
            && !Spec::addressed(self.by_address, i)
    }

    /// The element type of binding `i` of `kernel`'s pipeline when it is an
    /// array read through a texel buffer under this spec; `None` for a
    /// storage buffer.
    pub fn texel_elem(&self, kernel: &crate::Kernel, i: usize) -> Option<lang::Scalar> {
        let (_, a) = kernel.arrays.iter().nth(i)?;
        self.texel(i).then_some(a.elem)
    }

    /// The arrays of `kernel` that may be read through texel buffers
    /// ([`Spec::texels`]): those it reads and never writes (stores and
    /// atomics alike), with 32-bit elements.
    pub fn texel_candidates(kernel: &crate::Kernel) -> u64 {
        let (read, written) = crate::facts::array_access(kernel);
        let mut mask = 0;
        for (i, (_, a)) in kernel.arrays.iter().enumerate().take(64) {
            let four = matches!(
                a.elem,
                lang::Scalar::F32 | lang::Scalar::I32 | lang::Scalar::U32
            );
            if read[i] && !written[i] && four {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// Is array `i` reached by address under the mask `by_address`?
    pub fn addressed(by_address: u64, i: usize) -> bool {
        i < 64 && by_address & (1 << i) != 0
    }

    /// Does the module bind the fault buffer (binding
    /// [`crate::ArgLayout::num_bindings`], after everything else)? On a
    /// driver with a loop cap always, watchdog or not: a loop the driver
    /// cuts short must be reported even with `--loop-budget 0`, or it is a
    /// wrong result with no error.
    pub fn uses_fault_buffer(&self) -> bool {
        self.checks || self.loop_budget != 0 || self.loop_cap
    }
}

impl Default for Spec {
    /// Vulkan 1.2, 256 invocations, 32-bit indexing, every feature, 128 bytes,
    /// no unrolling.
    fn default() -> Spec {
        Spec {
            spirv_version: (1, 5),
            workgroup_size: 256,
            index_width: IndexWidth::U32,
            features: Features {
                float64: true,
                int64: true,
                storage_buffer_8bit: true,
                int64_atomics: true,
                float32_atomic_add: true,
                float64_atomic_add: true,
                buffer_device_address: true,
            },
            max_push_constants: 128,
            unroll: 1,
            checks: false,
            loop_budget: 0,
            loop_cap: false,
            split_by_reciprocal: false,
            sext_by_words: false,
            coherent_writes: false,
            preserve_float: [false; 2],
            preserve_denorms: [false; 2],
            exact_f32: ExactF32::Off,
            exact_f32_skew: 0,
            subgroup_size: 0,
            max_workgroup_size: 1024,
            coarsen: 1,
            coarsen_reduction: 1,
            by_address: 0,
            texels: 0,
            local_copies: [0; 4],
        }
    }
}
