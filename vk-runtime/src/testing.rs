//! Test support shared by every crate that tests against Vulkan (this one,
//! `compiler`, the root crate): a validated instance whose messages are
//! returned, `spirv-val` on generated modules, synchronous upload/download.
//! It lives here, not in each crate's `tests/`, so that the rule "any
//! validation message fails the test" is written once.

use crate::{
    Buffer, Instance, InstanceOptions, Queue, Result, StagingBuffer, StagingKind, VkError,
};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How long the helpers below wait for the device.
pub const WAIT: Duration = Duration::from_secs(120);

/// Run `body` with a validation-layer instance. `Ok` holds the body's result
/// when the layer reported nothing, also while everything was dropped;
/// `Err` holds the messages.
pub fn with_validation<R>(
    app_name: &str,
    body: impl FnOnce(&Instance) -> R,
) -> std::result::Result<R, Vec<String>> {
    let instance = Instance::new(&InstanceOptions {
        validation: true,
        app_name: app_name.into(),
    })
    .map_err(|e| {
        vec![format!(
            "{e} (run `. scripts/setup.sh` for lavapipe and the validation layer)"
        )]
    })?;
    if !instance.validation_enabled() {
        return Err(vec!["the validation layer is not enabled".into()]);
    }
    let sink = instance.validation_sink();
    let r = body(&instance);
    drop(instance);
    let messages = sink.lock().map(|m| m.clone()).unwrap_or_default();
    if messages.is_empty() {
        Ok(r)
    } else {
        Err(messages)
    }
}

/// A fresh path under the system temp directory.
pub fn temp_path(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("accl-{}-{n}-{name}", std::process::id()))
}

/// Validate a module with `spirv-val --target-env vulkan1.2`; `Err` holds its
/// output, or says that the tool is missing.
pub fn spirv_val(words: &[u32]) -> std::result::Result<(), String> {
    let path = temp_path("kernel.spv");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .output();
    let _ = std::fs::remove_file(&path);
    let out = out.map_err(|e| {
        format!("spirv-val is missing ({e}): run `. scripts/setup.sh` (installs spirv-tools)")
    })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Copy `data` into a new device buffer through staging and wait. The buffer
/// is rounded up to a multiple of 4 bytes (at least 4), so that even a
/// one-element `u8` array can be bound.
pub fn upload(queue: &mut Queue, data: &[u8]) -> Result<Buffer> {
    let dev = queue.device().clone();
    let size = (data.len() as u64).max(4).div_ceil(4) * 4;
    let buf = Buffer::new(&dev, size, "upload")?;
    let mut st = StagingBuffer::new(&dev, size, StagingKind::Upload, "upload staging")?;
    st.as_mut_slice()[..data.len()].copy_from_slice(data);
    queue.copy_buffer(&st, 0, &buf, 0, size)?;
    wait(queue)?;
    Ok(buf)
}

/// Copy a whole device buffer back through staging and wait.
pub fn download(queue: &mut Queue, buf: &Buffer) -> Result<Vec<u8>> {
    let dev = queue.device().clone();
    let st = StagingBuffer::new(&dev, buf.size(), StagingKind::Download, "download staging")?;
    queue.copy_buffer(buf, 0, &st, 0, buf.size())?;
    wait(queue)?;
    Ok(st.as_slice().to_vec())
}

fn wait(queue: &mut Queue) -> Result<()> {
    let v = queue.submit()?;
    if queue.host_wait(v, WAIT)? {
        Ok(())
    } else {
        Err(VkError::usage(format!(
            "the device did not finish within {WAIT:?}"
        )))
    }
}
