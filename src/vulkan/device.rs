//! One opened accl device: the `VkDevice`, its queue, staging buffers,
//! compiled modules and pipelines, and the on-disk `VkPipelineCache`.

use compiler::{Features, Spec};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use vk_runtime::{Buffer, ComputePipeline, Device, Instance, Queue, StagingBuffer, StagingKind};

/// The largest staging buffer kept (bigger transfers go in chunks).
const STAGING_MAX: u64 = 64 << 20;

/// Pipelines by (construct uid, specialisation, work-group size).
type PipelineKey = (u64, Spec, u32);

pub struct DevState {
    // Field order is drop order: work and buffers before the device.
    pub queue: Queue,
    up: Option<StagingBuffer>,
    down: Option<StagingBuffer>,
    pub pipelines: HashMap<PipelineKey, ComputePipeline>,
    /// Compiled modules by (construct uid, specialisation).
    pub modules: compiler::Cache,
    /// The last module compiled or launched (for `:spirv`).
    pub last_module: Option<Arc<Vec<u32>>>,
    cache_file: Option<PathBuf>,
    cache_dirty: bool,
    /// Time spent in SPIR-V generation and pipeline creation, not yet taken.
    pub jit_time: std::time::Duration,
    pub device: Device,
}

/// Where the pipeline cache of an adapter is kept between runs:
/// `$ACCL_CACHE_DIR`, else `$XDG_CACHE_HOME/accl`, else `~/.cache/accl`;
/// `ACCL_CACHE_DIR=off` disables it.
fn cache_file(info: &vk_runtime::AdapterInfo) -> Option<PathBuf> {
    let dir = match std::env::var_os("ACCL_CACHE_DIR") {
        Some(d) if d == "off" => return None,
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_CACHE_HOME") {
            Some(x) => PathBuf::from(x).join("accl"),
            None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/accl"),
        },
    };
    Some(dir.join(format!(
        "pipelines-{:04x}-{:04x}-{:x}.bin",
        info.vendor_id, info.device_id, info.driver_version
    )))
}

impl DevState {
    pub fn open(instance: &Instance, adapter: usize) -> Result<DevState, String> {
        let device = Device::new(instance, adapter).map_err(|e| e.to_string())?;
        let queue = Queue::new(&device, 0).map_err(|e| e.to_string())?;
        let cache_file = cache_file(device.info());
        if let Some(f) = &cache_file {
            // A missing or stale cache only costs compile time.
            let _ = device.load_pipeline_cache(f);
        }
        Ok(DevState {
            queue,
            up: None,
            down: None,
            pipelines: HashMap::new(),
            modules: compiler::Cache::new(),
            last_module: None,
            cache_file,
            cache_dirty: false,
            jit_time: std::time::Duration::ZERO,
            device,
        })
    }

    /// The specialisation of kernels for this device (index width set per launch).
    pub fn spec(&self) -> Spec {
        let info = self.device.info();
        let f = self.device.features();
        let l = &info.limits;
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
            features: Features {
                float64: f.shader_float64,
                int64: f.shader_int64,
                storage_buffer_8bit: f.storage_buffer_8bit_access,
                int64_atomics: f.shader_buffer_int64_atomics,
                float32_atomic_add: f.shader_buffer_float32_atomic_add,
                float64_atomic_add: f.shader_buffer_float64_atomic_add,
            },
            max_push_constants: l.max_push_constants_size.min(128),
            // llvmpipe leaves every loop after 65,535 iterations in total
            // per SIMD group (`compiler::unroll`); unrolling divides that.
            unroll: if info.driver.contains("llvmpipe") || info.name.contains("llvmpipe") {
                8
            } else {
                1
            },
        }
    }

    /// The module of a kernel for `spec`, compiled on first use.
    pub fn module(
        &mut self,
        uid: u64,
        kernel: &compiler::Kernel,
        spec: &Spec,
    ) -> Result<Arc<Vec<u32>>, lang::Diag> {
        let t0 = std::time::Instant::now();
        let before = self.modules.len();
        let words = self.modules.get(uid, kernel, spec)?;
        if self.modules.len() == before {
            return Ok(words);
        }
        self.jit_time += t0.elapsed();
        // The tests validate every module the backend makes.
        if std::env::var_os("ACCL_SPIRV_VAL").is_some_and(|v| v == "1") {
            if let Err(e) = vk_runtime::testing::spirv_val(&words) {
                return Err(lang::Diag::error(
                    "accl::compile::invalid_spirv",
                    format!("spirv-val refused the module of `{}`: {e}", kernel.name),
                    kernel.span,
                    "this kernel",
                ));
            }
        }
        Ok(words)
    }

    /// The pipeline of a module, created on first use.
    pub fn pipeline(
        &mut self,
        key: PipelineKey,
        words: &[u32],
        bindings: u32,
        push_bytes: u32,
    ) -> Result<ComputePipeline, String> {
        if let Some(p) = self.pipelines.get(&key) {
            return Ok(p.clone());
        }
        let t0 = std::time::Instant::now();
        let p = ComputePipeline::new(
            &self.device,
            words,
            "main",
            bindings,
            push_bytes,
            &[(0, key.2)],
        )
        .map_err(|e| e.to_string())?;
        self.cache_dirty = true;
        self.pipelines.insert(key, p.clone());
        self.jit_time += t0.elapsed();
        Ok(p)
    }

    /// Submit what is recorded and wait for it.
    pub fn sync(&mut self) -> Result<(), String> {
        let v = self.queue.submit().map_err(|e| e.to_string())?;
        match self.queue.host_wait(v, std::time::Duration::MAX) {
            Ok(true) => Ok(()),
            Ok(false) => Err("the device did not finish".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn staging(&mut self, kind: StagingKind, want: u64) -> Result<&mut StagingBuffer, String> {
        let want = want.clamp(4, STAGING_MAX).div_ceil(4) * 4;
        let slot = match kind {
            StagingKind::Upload => &mut self.up,
            StagingKind::Download => &mut self.down,
        };
        if slot.as_ref().is_none_or(|s| s.size() < want) {
            // The old one may still be used by a pending copy: the queue
            // keeps it alive until that copy retires.
            *slot = None;
            *slot = Some(
                StagingBuffer::new(&self.device, want, kind, "accl staging")
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok(slot.as_mut().expect("set above"))
    }

    /// Copy `src` into `buf` at byte `offset`, and wait.
    pub fn upload(&mut self, buf: &Buffer, offset: u64, src: &[u8]) -> Result<(), String> {
        let mut done = 0usize;
        while done < src.len() {
            let st = self.staging(StagingKind::Upload, (src.len() - done) as u64)?;
            let n = (st.size() as usize).min(src.len() - done);
            st.as_mut_slice()[..n].copy_from_slice(&src[done..done + n]);
            let size = n as u64;
            let st = self.up.as_ref().expect("staging exists");
            self.queue
                .copy_buffer(st, 0, buf, offset + done as u64, size)
                .map_err(|e| e.to_string())?;
            self.sync()?;
            done += n;
        }
        Ok(())
    }

    /// Copy `out.len()` bytes of `buf` from byte `offset` into `out`, and wait.
    pub fn download(&mut self, buf: &Buffer, offset: u64, out: &mut [u8]) -> Result<(), String> {
        let mut done = 0usize;
        while done < out.len() {
            let n = (self
                .staging(StagingKind::Download, (out.len() - done) as u64)?
                .size() as usize)
                .min(out.len() - done);
            let st = self.down.as_ref().expect("staging exists");
            self.queue
                .copy_buffer(buf, offset + done as u64, st, 0, n as u64)
                .map_err(|e| e.to_string())?;
            self.sync()?;
            let st = self.down.as_ref().expect("staging exists");
            out[done..done + n].copy_from_slice(&st.as_slice()[..n]);
            done += n;
        }
        Ok(())
    }

    /// Zero a whole buffer, and wait.
    pub fn zero(&mut self, buf: &Buffer) -> Result<(), String> {
        self.queue
            .zero(buf, 0, buf.size())
            .map_err(|e| e.to_string())?;
        self.sync()
    }
}

impl Drop for DevState {
    fn drop(&mut self) {
        let _ = self.queue.finish();
        if let (Some(f), true) = (&self.cache_file, self.cache_dirty) {
            if let Some(dir) = f.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = self.device.save_pipeline_cache(f);
        }
    }
}
