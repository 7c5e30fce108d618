//! Strided transfers: the elements of a box that is not a row section, as
//! runs of bytes (one per row, or per block of whole trailing axes) at
//! their offsets in the host array. On the synchronous queue, many
//! word-aligned runs one stride apart are gathered (or scattered) on the
//! device by a small kernel into a packed buffer that crosses the bus in
//! one copy; otherwise they move with one `vkCmdCopyBuffer` of one region
//! per run. Runs go straight from or to the host array where
//! the device imports it (as large contiguous transfers do), else packed
//! into a staging buffer, so only the box's bytes cross the bus. A row
//! section never comes here ([`DevState::upload`] and
//! [`DevState::download_into`] move it in one piece), except that its
//! staged async copies share the pieces-of-runs staging below, as one run.

use super::*;
use vk_runtime::{BufferBinding, CopyRegion};

/// The strided-copy kernel (`shaders/strided_copy.spvasm`, assembled):
/// moves a box's runs between its section buffer and a packed buffer on
/// the device, so a transfer crosses the bus in one contiguous copy. A
/// region per run costs ~1.7 us each on an H200 (a column of 8192 rows
/// took 14 ms); the kernel takes one dispatch.
static STRIDED_COPY: &[u8] = include_bytes!("shaders/strided_copy.spv");

fn strided_copy_words() -> Vec<u32> {
    STRIDED_COPY
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

/// Runs the kernel can move: `count` runs of `run` words, the first at
/// word `first` of the section buffer, `stride` words apart.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Uniform {
    first: u32,
    run: u32,
    stride: u32,
}

/// Fewer runs than this go as copy regions.
const KERNEL_RUNS: usize = 16;

/// The runs (host offsets, `base` less on the device) as one word-aligned
/// stride pattern, if they are one and many.
fn uniform(runs: &[Run], base: usize) -> Option<Uniform> {
    let (&(h0, len), rest) = runs.split_first()?;
    if runs.len() < KERNEL_RUNS
        || !len.is_multiple_of(4)
        || h0 < base
        || !(h0 - base).is_multiple_of(4)
    {
        return None;
    }
    let stride = rest.first()?.0.checked_sub(h0)?;
    if !stride.is_multiple_of(4) || stride < len {
        return None;
    }
    let ok = runs
        .iter()
        .enumerate()
        .all(|(k, &(h, n))| n == len && h == h0 + k * stride);
    let last = (h0 - base) + (runs.len() - 1) * stride + len;
    (ok && last / 4 <= u32::MAX as usize).then(|| Uniform {
        first: ((h0 - base) / 4) as u32,
        run: (len / 4) as u32,
        stride: (stride / 4) as u32,
    })
}

/// A run of a strided transfer: bytes `len` at `host` in the host array,
/// at `host - base` in the device buffer.
pub type Run = (usize, usize);

/// The runs from `*at` on (`*part` bytes of the first already done), cut
/// and packed into at most `cap` bytes of staging; advances `*at` and
/// `*part` past them.
fn pack(runs: &[Run], at: &mut usize, part: &mut usize, cap: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut fill = 0;
    while *at < runs.len() && fill < cap {
        let (host, len) = runs[*at];
        let n = (len - *part).min(cap - fill);
        pieces.push(Piece {
            host: host + *part,
            staged: fill,
            len: n,
        });
        fill += n;
        *part += n;
        if *part >= len {
            *at += 1;
            *part = 0;
        }
    }
    pieces
}

/// Copy the host bytes of `pieces` into the staging slice `dst`.
fn gather(host: &Array, pieces: &[Piece], dst: &mut [u8]) {
    let data = host.data();
    let bytes = data.bytes();
    for p in pieces {
        if let (Some(d), Some(s)) = (
            dst.get_mut(p.staged..p.staged + p.len),
            bytes.get(p.host..p.host + p.len),
        ) {
            copy_bytes(d, s);
        }
    }
}

/// The shape of uniform `runs`: first offset, length, stride, count, and
/// the end of the last run.
fn shape_of(runs: &[Run]) -> Option<(usize, usize, usize, usize, usize)> {
    let &(h0, len) = runs.first()?;
    let stride = runs.get(1).map_or(len, |r| r.0 - h0);
    Some((
        h0,
        len,
        stride,
        runs.len(),
        h0 + (runs.len() - 1) * stride + len,
    ))
}

/// The packed bytes `src` of uniform `runs` (all `len` long, `stride`
/// apart) into the host array, in one tight loop without per-run
/// bookkeeping (a column of 8192 rows spent 250 us in it). False when
/// the shapes do not fit (or for `bool` arrays): the general path.
fn scatter_uniform(host: &Array, runs: &[Run], src: &[u8]) -> bool {
    let Some((h0, len, stride, count, end)) = shape_of(runs) else {
        return true;
    };
    let mut data = host.data_mut();
    let Some(b) = data.bytes_mut().filter(|b| end <= b.len()) else {
        return false;
    };
    if src.len() < count * len {
        return false;
    }
    for (k, piece) in src.chunks_exact(len).take(count).enumerate() {
        let h = h0 + k * stride;
        b[h..h + len].copy_from_slice(piece);
    }
    true
}

/// The bytes of uniform `runs` of the host array, packed into `dst`
/// (see [`scatter_uniform`]).
fn gather_uniform(host: &Array, runs: &[Run], dst: &mut [u8]) -> bool {
    let Some((h0, len, stride, count, end)) = shape_of(runs) else {
        return true;
    };
    let data = host.data();
    let b = data.bytes();
    if end > b.len() || dst.len() < count * len {
        return false;
    }
    for (k, piece) in dst.chunks_exact_mut(len).take(count).enumerate() {
        let h = h0 + k * stride;
        piece.copy_from_slice(&b[h..h + len]);
    }
    true
}

fn total(runs: &[Run]) -> usize {
    runs.iter().map(|&(_, n)| n).sum()
}

impl DevState {
    /// Can the strided-copy kernel bind the section and a packed buffer of
    /// `bytes`? (A section larger than one binding goes by copy regions.)
    fn bindable(&self, section: &Buffer, bytes: usize) -> bool {
        let max = self.device.info().limits.max_storage_buffer_range;
        section.size() <= max && (bytes as u64).max(1 << 16).next_power_of_two() <= max
    }

    /// The strided-copy pipeline and a packed buffer of at least `bytes`.
    fn packing(&mut self, bytes: u64) -> Result<(ComputePipeline, Buffer), Fault> {
        if self.strided.is_none() {
            let p = ComputePipeline::new(&self.device, &strided_copy_words(), "main", 2, 24, &[])
                .map_err(Fault::from)?;
            self.strided = Some((p, None));
        }
        let (p, buf) = self.strided.as_mut().expect("made above");
        if buf.as_ref().is_none_or(|b| b.size() < bytes) {
            let size = bytes.max(1 << 16).next_power_of_two();
            *buf = Some(Buffer::new(&self.device, size, "accl packed box").map_err(Fault::from)?);
        }
        Ok((p.clone(), buf.clone().expect("made above")))
    }

    /// Record the strided-copy kernel on queue `id`: `gather` from the runs
    /// `u` of `section` into `packed`, or scatter the other way.
    fn strided_kernel(
        &mut self,
        id: QueueId,
        (pipe, packed): (&ComputePipeline, &Buffer),
        section: &Buffer,
        u: Uniform,
        words: u64,
        gather: bool,
    ) -> Result<(), Fault> {
        let total = words.min(u32::MAX as u64) as u32;
        let push: Vec<u8> = [u32::from(!gather), total, u.run, u.first, u.stride, 0]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let (src, dst) = if gather {
            (section, packed)
        } else {
            (packed, section)
        };
        let groups = total.div_ceil(256).clamp(1, 65535);
        let q = self.queue(id)?;
        q.set_label(if gather {
            "gather a box"
        } else {
            "scatter a box"
        });
        q.dispatch(
            pipe,
            &[BufferBinding::whole(src), BufferBinding::whole(dst)],
            &push,
            [groups, 1, 1],
        )
        .map_err(Fault::from)
    }

    /// Upload `runs` (`all` bytes) of `host` on the synchronous queue:
    /// packed on the host into staging, copied into the packed buffer a
    /// staging chunk at a time, then scattered into `buf` on the device.
    fn upload_packed(
        &mut self,
        buf: &Buffer,
        u: Uniform,
        host: &Array,
        runs: &[Run],
        all: usize,
    ) -> Result<(), Fault> {
        let id = QueueId::Sync;
        let (pipe, packed) = self.packing(all as u64)?;
        let (mut at, mut part, mut done) = (0, 0, 0);
        while done < all {
            let st = self.staging(StagingKind::Upload, (all - done) as u64)?;
            let n = (st.size() as usize).min(all - done);
            // In one piece: one tight loop, no per-run bookkeeping.
            if !(n == all && gather_uniform(host, runs, st.as_mut_slice())) {
                let pieces = pack(runs, &mut at, &mut part, n);
                gather(host, &pieces, st.as_mut_slice());
            }
            let st = self.up.take().expect("staging exists");
            let r = self.queue(id).and_then(|q| {
                q.set_label("upload packed box");
                q.copy_buffer(&st, 0, &packed, done as u64, n as u64)
                    .map_err(Fault::from)
            });
            self.up = Some(st);
            r?;
            self.wait_queue(id)?;
            done += n;
        }
        self.strided_kernel(id, (&pipe, &packed), buf, u, (all / 4) as u64, false)?;
        self.wait_queue(id)
    }

    /// Download `runs` (`all` bytes) of `buf` into `host` on the
    /// synchronous queue: gathered on the device into the packed buffer,
    /// copied out a staging chunk at a time and unpacked on the host.
    fn download_packed(
        &mut self,
        buf: &Buffer,
        u: Uniform,
        host: &Array,
        runs: &[Run],
        all: usize,
    ) -> Result<(), Fault> {
        let id = QueueId::Sync;
        let (pipe, packed) = self.packing(all as u64)?;
        self.strided_kernel(id, (&pipe, &packed), buf, u, (all / 4) as u64, true)?;
        let (mut at, mut part, mut done) = (0, 0, 0);
        while done < all {
            let cap = self
                .staging(StagingKind::Download, (all - done) as u64)?
                .size() as usize;
            let n = cap.min(all - done);
            let st = self.down.take().expect("staging exists");
            let r = self.queue(id).and_then(|q| {
                q.set_label("download packed box");
                q.copy_buffer(&packed, done as u64, &st, 0, n as u64)
                    .map_err(Fault::from)
            });
            self.down = Some(st);
            r?;
            self.wait_queue(id)?;
            let st = self.down.as_ref().expect("staging exists");
            if !(n == all && scatter_uniform(host, runs, st.as_slice())) {
                let pieces = pack(runs, &mut at, &mut part, n);
                scatter(host, &pieces, st.as_slice());
            }
            done += n;
        }
        Ok(())
    }

    /// Copy the `runs` of `host` into `buf` (each at its host offset less
    /// `base`), on queue `id`.
    pub fn upload_runs(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        base: usize,
        host: &Array,
        runs: &[Run],
    ) -> Result<(), Fault> {
        let all = total(runs);
        if all == 0 {
            return Ok(());
        }
        self.land_copies_into(host)?;
        if let (QueueId::Sync, Some(u)) = (id, uniform(runs, base)) {
            if self.bindable(buf, all) {
                return self.upload_packed(buf, u, host, runs, all);
            }
        }
        if let Some(hb) = self.import(host, all)? {
            let regions: Vec<CopyRegion> = runs
                .iter()
                .map(|&(h, n)| CopyRegion {
                    src_offset: hb.offset() + h as u64,
                    dst_offset: (h - base) as u64,
                    size: n as u64,
                })
                .collect();
            let q = self.queue(id)?;
            q.set_label("upload direct strided");
            q.copy_regions(&hb, buf, &regions).map_err(Fault::from)?;
            return self.settle(id);
        }
        let regions = |pieces: &[Piece]| piece_regions(pieces, |h| (h - base) as u64, true);
        if let QueueId::Async(_) = id {
            return self.upload_staged_async(
                id,
                buf,
                host,
                runs,
                |h| (h - base) as u64,
                "upload strided",
            );
        }
        let (mut at, mut part, mut done) = (0, 0, 0);
        while at < runs.len() {
            let st = self.staging(StagingKind::Upload, (all - done) as u64)?;
            let cap = st.size() as usize;
            let pieces = pack(runs, &mut at, &mut part, cap);
            gather(host, &pieces, st.as_mut_slice());
            let st = self.up.take().expect("staging exists");
            let r = self.queue(id).and_then(|q| {
                q.set_label("upload strided");
                q.copy_regions(&st, buf, &regions(&pieces))
                    .map_err(Fault::from)
            });
            self.up = Some(st);
            r?;
            self.wait_queue(id)?;
            done += pieces.iter().map(|p| p.len).sum::<usize>();
        }
        Ok(())
    }

    /// Copy the `runs` of `buf` (each at its host offset less `base`) into
    /// `host`, on queue `id`: at once for the synchronous queue, when the
    /// host observes the copy's completion for an async one.
    pub fn download_runs(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        base: usize,
        host: &Array,
        runs: &[Run],
    ) -> Result<(), Fault> {
        let all = total(runs);
        if all == 0 {
            return Ok(());
        }
        if let (QueueId::Sync, Some(u)) = (id, uniform(runs, base)) {
            if self.bindable(buf, all) {
                return self.download_packed(buf, u, host, runs, all);
            }
        }
        // Straight into the host array, except for `bool` arrays (whose
        // bytes are normalised on the way in).
        let direct = match host.scalar() {
            lang::Scalar::Bool => None,
            _ => self.import(host, all)?,
        };
        if let Some(hb) = direct {
            let regions: Vec<CopyRegion> = runs
                .iter()
                .map(|&(h, n)| CopyRegion {
                    src_offset: (h - base) as u64,
                    dst_offset: hb.offset() + h as u64,
                    size: n as u64,
                })
                .collect();
            let q = self.queue(id)?;
            q.set_label("download direct strided");
            q.copy_regions(buf, &hb, &regions).map_err(Fault::from)?;
            return match id {
                QueueId::Async(_) => self.hand_off(id).map(|_| ()),
                QueueId::Sync => self.wait_queue(id),
            };
        }
        let regions = |pieces: &[Piece]| piece_regions(pieces, |h| (h - base) as u64, false);
        if let QueueId::Async(_) = id {
            return self.download_staged_async(
                id,
                buf,
                host,
                runs,
                |h| (h - base) as u64,
                "download strided",
            );
        }
        let (mut at, mut part, mut done) = (0, 0, 0);
        while at < runs.len() {
            let cap = self
                .staging(StagingKind::Download, (all - done) as u64)?
                .size() as usize;
            let pieces = pack(runs, &mut at, &mut part, cap);
            let st = self.down.take().expect("staging exists");
            let r = self.queue(id).and_then(|q| {
                q.set_label("download strided");
                q.copy_regions(buf, &st, &regions(&pieces))
                    .map_err(Fault::from)
            });
            self.down = Some(st);
            r?;
            self.wait_queue(id)?;
            let st = self.down.as_ref().expect("staging exists");
            scatter(host, &pieces, st.as_slice());
            done += pieces.iter().map(|p| p.len).sum::<usize>();
        }
        Ok(())
    }

    /// An async copy of `runs` of `host` into `buf` through staging: the
    /// host bytes are read now, into staging buffers of the copy's own.
    /// `to_buf` gives the buffer offset of a host byte offset.
    pub(super) fn upload_staged_async(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        host: &Array,
        runs: &[Run],
        to_buf: impl Fn(usize) -> u64,
        label: &str,
    ) -> Result<(), Fault> {
        let mut staged = self.stage_runs(runs, |d, cap| {
            StagingBuffer::new(&d.device, cap, StagingKind::Upload, "accl async upload")
                .map_err(Fault::from)
        })?;
        for (st, pieces) in &mut staged {
            gather(host, pieces, st.as_mut_slice());
        }
        self.record_staged(id, buf, &staged, to_buf, true, label)?;
        self.settle(id)
    }

    /// An async copy of `runs` of `buf` into `host` through staging
    /// buffers, each landing in the host array when the host observes the
    /// queue. `to_buf` gives the buffer offset of a host byte offset.
    pub(super) fn download_staged_async(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        host: &Array,
        runs: &[Run],
        to_buf: impl Fn(usize) -> u64,
        label: &str,
    ) -> Result<(), Fault> {
        let staged = self.stage_runs(runs, |d, cap| d.async_staging(cap))?;
        self.record_staged(id, buf, &staged, to_buf, false, label)?;
        let value = self.queue(id)?.submitted_value() + 1;
        for (staging, pieces) in staged {
            self.completions.push(Completion {
                queue: id,
                value,
                staging,
                array: host.clone(),
                pieces,
            });
        }
        // A copy to the host ends the batch: submitted now, it can be
        // observed (and land in the host array) as soon as it is done.
        self.hand_off(id).map(|_| ())
    }

    /// `runs` cut into pieces of at most `async_chunk` bytes (every Vulkan
    /// device allocates that much at once; some refuse more), each with a
    /// staging buffer from `make` of its size. Every buffer is made before
    /// any copy is recorded, so a refusal records none.
    fn stage_runs(
        &mut self,
        runs: &[Run],
        mut make: impl FnMut(&mut Self, u64) -> Result<StagingBuffer, Fault>,
    ) -> Result<Vec<(StagingBuffer, Vec<Piece>)>, Fault> {
        let all = total(runs);
        let mut staged = Vec::new();
        let (mut at, mut part, mut done) = (0, 0, 0);
        while at < runs.len() {
            let cap = self.async_chunk.min(all - done);
            let st = make(self, cap as u64)?;
            let pieces = pack(runs, &mut at, &mut part, cap);
            done += pieces.iter().map(|p| p.len).sum::<usize>();
            staged.push((st, pieces));
        }
        Ok(staged)
    }

    /// Records the copies between `buf` and staged pieces: into `buf` when
    /// `up`, out of it otherwise.
    fn record_staged(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        staged: &[(StagingBuffer, Vec<Piece>)],
        to_buf: impl Fn(usize) -> u64,
        up: bool,
        label: &str,
    ) -> Result<(), Fault> {
        let q = self.queue(id)?;
        q.set_label(label);
        for (st, pieces) in staged {
            let regions = piece_regions(pieces, &to_buf, up);
            if up {
                q.copy_regions(st, buf, &regions)
            } else {
                q.copy_regions(buf, st, &regions)
            }
            .map_err(Fault::from)?;
        }
        Ok(())
    }
}

/// The copy regions between staged `pieces` and a buffer (at `to_buf` of
/// each piece's host offset): into the buffer when `up`, out of it
/// otherwise.
fn piece_regions(pieces: &[Piece], to_buf: impl Fn(usize) -> u64, up: bool) -> Vec<CopyRegion> {
    pieces
        .iter()
        .map(|p| {
            let (staged, at) = (p.staged as u64, to_buf(p.host));
            let (src_offset, dst_offset) = if up { (staged, at) } else { (at, staged) };
            CopyRegion {
                src_offset,
                dst_offset,
                size: p.len as u64,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_takes_word_aligned_uniform_runs_only() {
        let col: Vec<Run> = (0..32).map(|k| (400 + k * 64, 4)).collect();
        assert_eq!(
            uniform(&col, 0),
            Some(Uniform {
                first: 100,
                run: 1,
                stride: 16
            })
        );
        // Relative to the section's first row.
        assert_eq!(uniform(&col, 400).map(|u| u.first), Some(0));
        assert_eq!(uniform(&col[..8], 0), None, "few runs: regions");
        let bytes: Vec<Run> = (0..32).map(|k| (k * 10, 2)).collect();
        assert_eq!(uniform(&bytes, 0), None, "not word aligned");
        let mut uneven = col.clone();
        uneven[5].0 += 4;
        assert_eq!(uniform(&uneven, 0), None);
    }

    #[test]
    fn the_embedded_kernel_is_its_assembly_and_valid() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/vulkan/device/shaders");
        let out = std::env::temp_dir().join(format!("accl-strided-{}.spv", std::process::id()));
        let st = std::process::Command::new("spirv-as")
            .args(["--target-env", "vulkan1.1"])
            .arg(dir.join("strided_copy.spvasm"))
            .arg("-o")
            .arg(&out)
            .status()
            .expect("spirv-as (spirv-tools) is installed by scripts/setup.sh");
        assert!(st.success());
        let fresh = std::fs::read(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        assert!(
            fresh == STRIDED_COPY,
            "strided_copy.spv is stale: assemble strided_copy.spvasm again"
        );
        vk_runtime::testing::spirv_val(&strided_copy_words()).unwrap();
    }

    #[test]
    fn runs_pack_into_chunks_and_split_where_they_must() {
        let runs = [(0, 4), (10, 4), (20, 4)];
        let (mut at, mut part) = (0, 0);
        let a = pack(&runs, &mut at, &mut part, 6);
        assert_eq!(
            a.iter()
                .map(|p| (p.host, p.staged, p.len))
                .collect::<Vec<_>>(),
            [(0, 0, 4), (10, 4, 2)]
        );
        let b = pack(&runs, &mut at, &mut part, 6);
        assert_eq!(
            b.iter()
                .map(|p| (p.host, p.staged, p.len))
                .collect::<Vec<_>>(),
            [(12, 0, 2), (20, 2, 4)]
        );
        assert_eq!(at, runs.len());
        assert!(pack(&runs, &mut at, &mut part, 6).is_empty());
    }
}
