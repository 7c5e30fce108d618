//! Strided copies: one `vkCmdCopyBuffer` with many regions, for the boxes
//! of an array that are not one contiguous run of bytes.

use super::Queue;
use crate::error::{Result, VkError};
use crate::memory::GpuBuffer;
use ash::vk;
use std::sync::Arc;

/// One region of a strided copy: bytes `size` from `src_offset` of the
/// source to `dst_offset` of the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyRegion {
    pub src_offset: u64,
    pub dst_offset: u64,
    pub size: u64,
}

impl Queue {
    /// Records one copy of every region from `src` to `dst` (device or
    /// staging buffers, either direction). Regions must not overlap one
    /// another in the destination, nor (for one buffer) source and
    /// destination; empty regions are skipped, and no region at all records
    /// nothing.
    pub fn copy_regions(
        &mut self,
        src: &dyn GpuBuffer,
        dst: &dyn GpuBuffer,
        regions: &[CopyRegion],
    ) -> Result<()> {
        self.same_device(&src.inner().device)?;
        self.same_device(&dst.inner().device)?;
        if Arc::ptr_eq(src.inner(), dst.inner()) {
            return Err(VkError::usage("a strided copy needs two different buffers"));
        }
        let mut raw = Vec::with_capacity(regions.len());
        for r in regions.iter().filter(|r| r.size > 0) {
            Self::check_range("copy source", src, r.src_offset, r.size)?;
            Self::check_range("copy destination", dst, r.dst_offset, r.size)?;
            raw.push(vk::BufferCopy {
                src_offset: r.src_offset,
                dst_offset: r.dst_offset,
                size: r.size,
            });
        }
        if raw.is_empty() {
            return Ok(());
        }
        let (cmd, query) = self.begin_op(&|| "copy".to_string())?;
        unsafe {
            self.device
                .shared
                .raw
                .cmd_copy_buffer(cmd, src.inner().raw, dst.inner().raw, &raw)
        };
        self.end_op(query);
        let b = self.open.as_mut().expect("open");
        b.buffers.push(src.inner().clone());
        b.buffers.push(dst.inner().clone());
        Ok(())
    }
}
