//! Device storage of the present table: one Vulkan storage buffer per
//! present section, holding only that section's rows (kernels index it
//! through a base offset, `compiler::abi`), filled and read back through a
//! persistent host-visible staging buffer.
//!
//! Devices are opened on first use, so a script that never leaves device 0
//! pays for one `VkDevice` only.

use super::device::DevState;
use crate::interp::present::Storage;
use stdlib::Array;
use vk_runtime::{Buffer, Instance};

/// The storage of one present section.
pub struct SecBuf {
    pub buffer: Buffer,
    /// Bytes of one row of the leading axis.
    pub row_bytes: u64,
}

/// Every device of the backend, opened lazily.
pub struct VkStorage {
    pub instance: Instance,
    /// accl device number → adapter index in `instance.adapters()`.
    pub adapters: Vec<usize>,
    pub devs: Vec<Option<DevState>>,
    /// Timestamps on for devices opened from now on.
    pub profiling: bool,
}

impl VkStorage {
    /// The state of device `dev`, opening it on first use.
    pub fn dev(&mut self, dev: usize) -> Result<&mut DevState, String> {
        let Some(&adapter) = self.adapters.get(dev) else {
            return Err(format!("there is no device {dev}"));
        };
        if self.devs[dev].is_none() {
            let mut d = DevState::open(&self.instance, adapter)?;
            if self.profiling {
                d.queue.enable_timestamps(true).map_err(|e| e.to_string())?;
            }
            self.devs[dev] = Some(d);
        }
        Ok(self.devs[dev].as_mut().expect("opened above"))
    }
}

fn row_bytes(host: &Array) -> u64 {
    (host.row_len() * host.scalar().size()) as u64
}

impl Storage for VkStorage {
    type Arr = ();
    type Sec = SecBuf;

    fn new_array(&mut self, _dev: usize, _host: &Array) -> Result<(), String> {
        Ok(())
    }

    fn new_section(
        &mut self,
        dev: usize,
        _arr: &mut (),
        host: &Array,
        lo: usize,
        hi: usize,
        copyin: bool,
    ) -> Result<SecBuf, String> {
        let d = self.dev(dev)?;
        let rb = row_bytes(host);
        let bytes = (hi - lo) as u64 * rb;
        let max = d.device.info().limits.max_storage_buffer_range;
        if bytes > max {
            return Err(format!(
                "{} needs {bytes} bytes on the device, more than its largest storage buffer \
                 ({max} bytes, maxStorageBufferRange); keep a smaller section of it on the \
                 device at a time (`copyin(a[lo:n])`)",
                if lo == 0 && hi == host.shape()[0] {
                    "the array".to_string()
                } else {
                    format!("the section [{lo}:{}]", hi - lo)
                }
            ));
        }
        // At least 4 bytes and a multiple of 4: a `u8` array of any length
        // can be bound and filled.
        let size = bytes.max(4).div_ceil(4) * 4;
        let buffer = Buffer::new(&d.device, size, "accl array").map_err(|e| e.to_string())?;
        let sec = SecBuf {
            buffer,
            row_bytes: rb,
        };
        if copyin {
            let data = host.data();
            let src = &data.bytes()[(lo as u64 * rb) as usize..(hi as u64 * rb) as usize];
            d.upload(&sec.buffer, 0, src)?;
        } else {
            // `create` storage reads as zeros, as the host reference's does.
            d.zero(&sec.buffer)?;
        }
        Ok(sec)
    }

    fn transfer(
        &mut self,
        dev: usize,
        _arr: &(),
        sec: &SecBuf,
        sec_lo: usize,
        host: &Array,
        lo: usize,
        hi: usize,
        to_host: bool,
    ) -> Result<(), String> {
        let d = self.dev(dev)?;
        let rb = sec.row_bytes;
        let off = (lo - sec_lo) as u64 * rb;
        let (a, b) = ((lo as u64 * rb) as usize, (hi as u64 * rb) as usize);
        if to_host {
            let mut out = vec![0u8; b - a];
            d.download(&sec.buffer, off, &mut out)?;
            host.data_mut().write_bytes(a, &out);
        } else {
            let data = host.data();
            d.upload(&sec.buffer, off, &data.bytes()[a..b])?;
        }
        Ok(())
    }
}
