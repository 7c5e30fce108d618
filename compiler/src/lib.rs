//! accl's middle and back end: device constructs to kernel IR to SPIR-V.
//!
//! Stages, each its own type:
//!
//! ```text
//! hir::Construct ──lower──▶ kir::Kernel ──validate──▶ Validated<Kernel>
//!                ──spirv::write(spec)──▶ Vec<u32> (SPIR-V words)
//! ```
//!
//! * [`lower`] turns one `parallel loop` or `parallel { .. }` region of the
//!   typed HIR into a [`Kernel`] ([`kir`]), or refuses with
//!   `accl::compile::unsupported`. How gangs, workers, vectors, reductions,
//!   private clauses and atomics map onto workgroups and invocations is
//!   written down for users in `docs/language.md` ("How compute constructs
//!   map onto the device").
//! * [`compile`] validates the kernel ([`validate`]) and writes a SPIR-V
//!   module specialised for a [`Spec`] (SPIR-V version, index width,
//!   work-group size default, device features and push-constant budget).
//! * [`abi`] is the launch contract with the runtime: bindings (arrays, then
//!   one partials buffer per reduction, then the argument buffer), the
//!   argument block, [`LaunchArgs`] → bytes and dispatch size, and
//!   [`reduce_partials`], the host's second pass of a reduction.
//! * [`Cache`] memoises [`compile`] by kernel and [`Spec`].
//!
//! ```
//! let src = "let x = zeros(f32, 100); let a = 2.0f32;
//!            parallel loop for i in 0..100 { x[i] = a * x[i] + 1.0; }";
//! let b = stdlib::builtins();
//! let program = lang::check_source(src, &b).unwrap().program;
//! let lang::hir::StmtKind::Construct(c) = &program.main.block[2].kind else { panic!() };
//! let kernel = compiler::lower(&program, &program.main, c, &b).unwrap();
//! let words = compiler::compile(&kernel, &compiler::Spec::default()).unwrap();
//! assert!(compiler::disassemble(&words).contains("OpEntryPoint GLCompute"));
//! ```

pub mod abi;
pub mod autovec;
pub mod collapse;
pub mod footprint;
pub mod kir;
pub mod lower;
pub mod spirv;
#[doc(hidden)]
pub mod testing;
pub mod unroll;
pub mod validate;

pub use abi::{
    reduce_partials, ArgLayout, ArgLocation, ArrayArgs, IndexWidth, Launch, LaunchArgs,
    PerInvocation,
};
pub use kir::{Features, Kernel, ReductionParam, Shape};
pub use lower::lower;
pub use validate::{validate, Validated};

use lang::{Diag, Span};
use std::collections::HashMap;
use std::sync::Arc;

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
    /// Unroll every innermost loop this many times ([`unroll`]); 1 leaves
    /// loops alone. For drivers with a loop budget (llvmpipe).
    pub unroll: u8,
    /// Bounds-check mode: every array index and integer divisor is checked
    /// and the first violation recorded in the fault buffer
    /// ([`abi::fault`]); the access itself is skipped (a load reads element
    /// 0 of the buffer, a store or atomic does nothing).
    pub checks: bool,
    /// The watchdog: loop back-edges one invocation may take before it
    /// records [`abi::fault::LOOP_BUDGET`] and leaves every loop; 0 turns it
    /// off. With the fault buffer bound (checks or a budget), a loop left
    /// other than by its own exit (a driver's iteration cap) is recorded too.
    pub loop_budget: u32,
    /// Lanes of a subgroup when the device has subgroup shuffles in compute
    /// (a power of two), else 0. With it, a gang of at most that many vector
    /// lanes lives in one subgroup ([`spirv::teams`]).
    pub subgroup_size: u32,
    /// `maxComputeWorkGroupInvocations` (and the x size limit), whichever is less.
    pub max_workgroup_size: u32,
    /// Iterations per trip of a flat kernel's grid-stride loop where its
    /// body allows it ([`spirv::coarsening`]); 1 leaves the loop alone.
    pub coarsen: u8,
    /// Bit `i` set: array `i` is reached through its buffer's 64-bit device
    /// address (`PhysicalStorageBuffer` pointers, in the argument block)
    /// instead of its binding: for a buffer larger than one binding may be
    /// (see [`abi`], "Arrays reached by address"). Needs `shaderInt64` and
    /// a device with buffer device addresses; arrays past the 64th are
    /// always bound.
    pub by_address: u64,
}

impl Spec {
    /// Is array `i` reached by address under the mask `by_address`?
    pub fn addressed(by_address: u64, i: usize) -> bool {
        i < 64 && by_address & (1 << i) != 0
    }

    /// Does the module bind the fault buffer (binding
    /// [`ArgLayout::num_bindings`], after everything else)?
    pub fn uses_fault_buffer(&self) -> bool {
        self.checks || self.loop_budget != 0
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
            subgroup_size: 0,
            max_workgroup_size: 1024,
            coarsen: 1,
            by_address: 0,
        }
    }
}

/// Validate `kernel` and write it as SPIR-V for `spec`.
pub fn compile(kernel: &Kernel, spec: &Spec) -> Result<Vec<u32>, Diag> {
    if spec.unroll > 1 {
        let mut k = kernel.clone();
        unroll::unroll(&mut k, spec.unroll as usize);
        return spirv::write(validate(&k)?, spec);
    }
    spirv::write(validate(kernel)?, spec)
}

/// The text disassembly of a module (rspirv's; no external tool needed).
pub fn disassemble(words: &[u32]) -> String {
    use rspirv::binary::Disassemble;
    match rspirv::dr::load_words(words) {
        Ok(m) => m.disassemble(),
        Err(e) => format!("; not a valid SPIR-V module: {e}"),
    }
}

/// The diagnostic for a construct the compiler cannot handle yet.
pub fn unsupported(span: Span, feature: &str) -> Diag {
    Diag::error(
        "accl::compile::unsupported",
        format!("{feature} cannot be compiled for the device yet"),
        span,
        "not supported on the device yet",
    )
    .with_help(
        "run this construct on the host with `if(false)`, or rewrite it without this feature",
    )
}

/// Compiled modules by kernel and specialisation. The kernel key is its
/// construct number plus a caller-chosen key that tells kernels apart
/// across programs (the runtime passes [`Kernel::fingerprint`], so the
/// same construct compiled again finds its module).
#[derive(Debug, Default)]
pub struct Cache {
    modules: HashMap<(u64, u32, Spec), Arc<Vec<u32>>>,
}

impl Cache {
    pub fn new() -> Cache {
        Cache::default()
    }
    /// The module for `kernel` under `spec`, compiled on first use.
    pub fn get(
        &mut self,
        generation: u64,
        kernel: &Kernel,
        spec: &Spec,
    ) -> Result<Arc<Vec<u32>>, Diag> {
        let key = (generation, kernel.id, *spec);
        if let Some(m) = self.modules.get(&key) {
            return Ok(m.clone());
        }
        let words = Arc::new(compile(kernel, spec)?);
        self.modules.insert(key, words.clone());
        Ok(words)
    }
    /// Keep a module compiled elsewhere (ahead of its first launch, on
    /// another thread) under the key [`Cache::get`] would use.
    pub fn insert(&mut self, generation: u64, kernel: &Kernel, spec: &Spec, words: Arc<Vec<u32>>) {
        self.modules.insert((generation, kernel.id, *spec), words);
    }
    /// Whether the module of `kernel` under `spec` is here.
    pub fn contains(&self, generation: u64, kernel: &Kernel, spec: &Spec) -> bool {
        self.modules.contains_key(&(generation, kernel.id, *spec))
    }
    pub fn len(&self) -> usize {
        self.modules.len()
    }
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }
}
