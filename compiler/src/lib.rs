//! accl's middle and back end: device constructs to kernel IR to SPIR-V.
//!
//! Stages, each its own type, every module importing only the stages
//! before it (`scripts/imports.py --graph compiler` prints the arrows):
//!
//! ```text
//! hir::Construct ──lower──▶ kir::Kernel ──validate──▶ Validated<Kernel>
//!                 kir::Kernel + Spec ──Plan::of──▶ Plan
//!                 Validated<Kernel> + Plan ──spirv::write──▶ Vec<u32> (SPIR-V words)
//! ```
//!
//! * [`kir`] is the IR: kernels, functions, statements, expressions, and
//!   the notes lowering leaves for `--explain`. It imports nothing else of
//!   the compiler. [`spec`] describes a device and a launch ([`Spec`]).
//! * The analyses read the HIR or the KIR and decide nothing about a
//!   device: dependences and vector loops ([`autovec`]), collapse
//!   ([`collapse`]), array footprints ([`footprint`]), the body facts a
//!   plan asks for ([`facts`]) and the privatisation candidates
//!   ([`privatise`]).
//! * [`lower`] turns one `parallel loop` or `parallel { .. }` region of the
//!   typed HIR into a [`Kernel`], or refuses with
//!   `accl::compile::unsupported`; [`validate`] checks the result and
//!   [`unroll`] rewrites it for drivers with a loop budget. How gangs,
//!   workers, vectors, reductions, private clauses and atomics map onto
//!   workgroups and invocations is written down for users in
//!   `docs/language.md` ("How compute constructs map onto the device").
//! * [`plan`] maps one kernel onto one device: team shape, coarsening,
//!   privatised arrays, cached sections, arrays reached by address, and the
//!   launch ABI derived from them. The writer, the runtime's launch path
//!   and `--explain` all read a [`Plan`].
//! * [`abi`] is the launch contract with the runtime: bindings (arrays, then
//!   one partials buffer per reduction, then the argument buffer), the
//!   argument block, [`LaunchArgs`] → bytes and dispatch size, and
//!   [`reduce_partials`], the host's second pass of a reduction.
//! * [`spirv`] writes a validated kernel as a module, as its plan says;
//!   [`compile`] is validate, plan and write in a row, and [`Cache`]
//!   memoises it by kernel and [`Spec`].
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
pub mod bounded;
pub mod collapse;
pub mod depend;
pub mod facts;
pub mod footprint;
pub mod kir;
pub mod lower;
pub mod plan;
pub mod private_copies;
pub mod privatise;
pub mod resume;
pub mod spec;
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
pub use lower::{lower, lower_variant};
pub use plan::Plan;
pub use spec::{ExactF32, Spec};
pub use validate::{validate, Validated};

use lang::{Diag, Span};
use std::sync::Arc;

/// Validate `kernel` and write it as SPIR-V for `spec`.
pub fn compile(kernel: &Kernel, spec: &Spec) -> Result<Vec<u32>, Diag> {
    // llvmpipe keeps a local array indexed at run time in memory: the
    // loops over a lane's private copy are unrolled whole there.
    let local: Vec<kir::ArrayH> = match spec.loop_cap {
        true => kernel
            .private_copies
            .iter()
            .zip(spec.local_copies)
            .filter(|(_, n)| *n > 0)
            .map(|(p, _)| p.array)
            .collect(),
        false => Vec::new(),
    };
    if !local.is_empty() {
        let mut k = kernel.clone();
        unroll::full(&mut k, &local);
        unroll::unroll(&mut k, spec.unroll as usize, spec.loop_cap);
        return spirv::write(validate(&k)?, &Plan::of(&k, spec));
    }
    if spec.unroll > 1 {
        let mut k = kernel.clone();
        // Not the loops that write memory, unless the driver caps loops:
        // NVIDIA's driver (580; H100) gave wrong results for unrolled
        // copies of `for y in 0..n { b[x] += a[x, y]; }` in a routine a
        // region calls, keeping only every fourth term, as if each copy of
        // the body read `b[x]` from before the first. Not unrolled, it was
        // right.
        unroll::unroll(&mut k, spec.unroll as usize, spec.loop_cap);
        return spirv::write(validate(&k)?, &Plan::of(&k, spec));
    }
    spirv::write(validate(kernel)?, &Plan::of(kernel, spec))
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
    // Looked up on every launch: a fast hash rather than SipHash.
    modules: rustc_hash::FxHashMap<(u64, u32, Spec), Arc<Vec<u32>>>,
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
    /// The module of `kernel` under `spec`, if compiled already.
    pub fn cached(&self, generation: u64, kernel: &Kernel, spec: &Spec) -> Option<Arc<Vec<u32>>> {
        self.modules.get(&(generation, kernel.id, *spec)).cloned()
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
