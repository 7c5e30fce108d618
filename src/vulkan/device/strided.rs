//! Strided transfers: the elements of a box that is not a row section, as
//! runs of bytes (one per row, or per block of whole trailing axes) at
//! their offsets in the host array, moved with one `vkCmdCopyBuffer` of
//! one region per run. Runs go straight from or to the host array where
//! the device imports it (as large contiguous transfers do), else packed
//! into a staging buffer, so only the box's bytes cross the bus. A row
//! section never comes here ([`DevState::upload`] and
//! [`DevState::download_into`] move it in one piece).

use super::*;
use vk_runtime::CopyRegion;

/// A run of a strided transfer: bytes `len` at `host` in the host array,
/// at `host - base` in the device buffer.
pub type Run = (usize, usize);

/// A piece of a staged strided copy: `len` bytes at `host` in the host
/// array and at `staged` in the staging buffer.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub host: usize,
    pub staged: usize,
    pub len: usize,
}

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

/// Write the staged `pieces` of `src` into the host array.
pub(super) fn scatter(array: &Array, pieces: &[Piece], src: &[u8]) {
    let mut data = array.data_mut();
    for p in pieces {
        let Some(from) = src.get(p.staged..p.staged + p.len) else {
            continue;
        };
        match data.bytes_mut() {
            Some(b) if p.host + p.len <= b.len() => b[p.host..p.host + p.len].copy_from_slice(from),
            _ => data.write_bytes(p.host, from),
        }
    }
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
            d.copy_from_slice(s);
        }
    }
}

fn total(runs: &[Run]) -> usize {
    runs.iter().map(|&(_, n)| n).sum()
}

impl DevState {
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
        let regions = |pieces: &[Piece]| -> Vec<CopyRegion> {
            pieces
                .iter()
                .map(|p| CopyRegion {
                    src_offset: p.staged as u64,
                    dst_offset: (p.host - base) as u64,
                    size: p.len as u64,
                })
                .collect()
        };
        if let QueueId::Async(_) = id {
            // The host data is read now, into a staging buffer of its own.
            let mut st = StagingBuffer::new(
                &self.device,
                all as u64,
                StagingKind::Upload,
                "accl async upload",
            )
            .map_err(Fault::from)?;
            let pieces = pack(runs, &mut 0, &mut 0, all);
            gather(host, &pieces, st.as_mut_slice());
            let q = self.queue(id)?;
            q.set_label("upload strided");
            q.copy_regions(&st, buf, &regions(&pieces))
                .map_err(Fault::from)?;
            return self.settle(id);
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
                QueueId::Async(_) => self.submit(id).map(|_| ()),
                QueueId::Sync => self.wait_queue(id),
            };
        }
        let regions = |pieces: &[Piece]| -> Vec<CopyRegion> {
            pieces
                .iter()
                .map(|p| CopyRegion {
                    src_offset: (p.host - base) as u64,
                    dst_offset: p.staged as u64,
                    size: p.len as u64,
                })
                .collect()
        };
        if let QueueId::Async(_) = id {
            let st = self.async_staging(all as u64)?;
            let pieces = pack(runs, &mut 0, &mut 0, all);
            let q = self.queue(id)?;
            q.set_label("download strided");
            q.copy_regions(buf, &st, &regions(&pieces))
                .map_err(Fault::from)?;
            let value = q.submitted_value() + 1;
            self.completions.push(Completion {
                queue: id,
                value,
                staging: st,
                array: host.clone(),
                offset: 0,
                len: all,
                pieces,
            });
            return self.submit(id).map(|_| ());
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
