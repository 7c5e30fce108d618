//! The device's compiled kernels: SPIR-V modules, plans and pipelines,
//! made at a kernel's first launch under a specialisation and found again
//! at every later one.

use super::*;

impl DevState {
    /// The kernel prepared under `key` by an earlier launch, if any.
    pub fn prepared(&self, key: &PipelineKey) -> Option<Prepared> {
        self.prepared.get(key).cloned()
    }

    /// Keep what a launch prepared under `key` for the next ones.
    pub fn keep_prepared(&mut self, key: PipelineKey, p: Prepared) {
        self.prepared.insert(key, p);
    }

    /// The module of a kernel for `spec`, compiled on first use.
    pub fn module(
        &mut self,
        key: u64,
        kernel: &compiler::Kernel,
        spec: &Spec,
    ) -> Result<Arc<Vec<u32>>, lang::Diag> {
        // Compiled already (the common case): no clock read.
        if let Some(w) = self.modules.cached(key, kernel, spec) {
            return Ok(w);
        }
        let t0 = std::time::Instant::now();
        let ahead = if self.prefetching.is_empty() {
            None
        } else {
            self.prefetching.remove(&(key, *spec))
        };
        if let Some(rx) = ahead {
            // Compiled ahead of this launch (maybe still being compiled).
            if let Ok(p) = rx.recv() {
                self.jit_time += t0.elapsed();
                if self.tracing {
                    self.compiles
                        .push((kernel.name.clone(), true, p.took.0, p.took.1));
                }
                let words = p.words?;
                if let Some((wg, Ok(pipe))) = p.pipeline {
                    self.ahead.insert((key, *spec, wg), pipe);
                    self.cache_dirty = true;
                }
                self.modules.insert(key, kernel, spec, words.clone());
                validate_module(kernel, &words)?;
                return Ok(words);
            }
        }
        let before = self.modules.len();
        let words = self.modules.get(key, kernel, spec)?;
        if self.modules.len() == before {
            return Ok(words);
        }
        self.jit_time += t0.elapsed();
        if self.tracing {
            self.compiles
                .push((kernel.name.clone(), false, t0, std::time::Instant::now()));
        }
        validate_module(kernel, &words)?;
        Ok(words)
    }

    /// The plan of a kernel under `spec`, made on its first launch.
    pub fn plan(&mut self, key: u64, kernel: &compiler::Kernel, spec: &Spec) -> Rc<compiler::Plan> {
        self.plans
            .entry((key, *spec))
            .or_insert_with(|| Rc::new(compiler::Plan::of(kernel, spec)))
            .clone()
    }

    /// The pipeline of a module at its first launch: built ahead, or
    /// created now. (Later launches find it in [`DevState::prepared`].)
    pub fn pipeline(
        &mut self,
        key: PipelineKey,
        words: &[u32],
        bindings: impl FnOnce() -> Vec<Binding>,
        push_bytes: u32,
    ) -> Result<ComputePipeline, Fault> {
        if let Some(p) = self.ahead.remove(&key) {
            return Ok(p);
        }
        let t0 = std::time::Instant::now();
        let p = ComputePipeline::with_bindings(
            &self.device,
            words,
            "main",
            &bindings(),
            push_bytes,
            &[(0, key.2)],
        )
        .map_err(Fault::from)?;
        self.cache_dirty = true;
        self.jit_time += t0.elapsed();
        Ok(p)
    }
}

/// The tests validate every module the backend makes (`ACCL_SPIRV_VAL=1`).
fn validate_module(kernel: &compiler::Kernel, words: &[u32]) -> Result<(), lang::Diag> {
    if std::env::var_os("ACCL_SPIRV_VAL").is_some_and(|v| v == "1") {
        if let Err(e) = vk_runtime::testing::spirv_val(words) {
            return Err(lang::Diag::error(
                "accl::compile::invalid_spirv",
                format!("spirv-val refused the module of `{}`: {e}", kernel.name),
                kernel.span,
                "this kernel",
            ));
        }
    }
    Ok(())
}
