//! Moving bytes between host arrays and device buffers: staging buffers
//! (kept, pooled and spared), imports of host memory for direct copies,
//! uploads, downloads into host arrays (now or at a queue's completion),
//! and zero fills.

use super::split::{self, DirectRun};
use super::*;

impl DevState {
    /// A download staging buffer of at least `len` bytes for an async copy:
    /// a spare one when one fits (without wasting more than half of it).
    pub(super) fn async_staging(&mut self, len: u64) -> Result<StagingBuffer, Fault> {
        let len = len.max(4);
        let best = self
            .spare
            .iter()
            .enumerate()
            .filter(|(_, s)| s.size() >= len && s.size() / 2 <= len)
            .min_by_key(|(_, s)| s.size())
            .map(|(i, _)| i);
        match best {
            Some(i) => Ok(self.spare.swap_remove(i)),
            None => StagingBuffer::new(
                &self.device,
                len,
                StagingKind::Download,
                "accl async download",
            )
            .map_err(Fault::from),
        }
    }

    /// Keep the staging buffer of an applied copy for later ones, up to
    /// [`SPARE_MAX`] bytes in all.
    pub(super) fn spare_staging(&mut self, st: StagingBuffer) {
        let kept: u64 = self.spare.iter().map(|s| s.size()).sum();
        if kept + st.size() <= SPARE_MAX {
            self.spare.push(st);
        }
    }

    /// `array` imported for a direct copy of `len` of its bytes, when
    /// direct copies are on, the transfer is large enough and the device
    /// can import it. Imports are kept while their array lives; those of
    /// arrays the program has dropped go (once no batch records them) at
    /// the next host wait ([`DevState::observe`]).
    pub(super) fn import(
        &mut self,
        array: &Array,
        len: usize,
    ) -> Result<Option<HostBuffer>, Fault> {
        if !self.direct || len < DIRECT_MIN || !self.device.imports_host_memory() {
            return Ok(None);
        }
        let bytes = array.data().bytes().len();
        self.import_range(array, WHOLE, 0, bytes)
    }

    /// Bytes `start..start + len` of `array` imported, kept under `key`.
    fn import_range(
        &mut self,
        array: &Array,
        key: usize,
        start: usize,
        len: usize,
    ) -> Result<Option<HostBuffer>, Fault> {
        if let Some((b, _)) = self.imports.get(&(array.id(), key)) {
            return Ok(Some(b.clone()));
        }
        let data = array.data();
        let bytes = &data.bytes()[start..start + len];
        let t0 = crate::interp::phases::clock();
        // SAFETY: the elements never move while the array lives
        // (`stdlib::Array`), and the entry made here holds the array until
        // no batch records the import. The host does not touch bytes a
        // pending copy writes or reads: the race tracker refuses it.
        let b = unsafe {
            HostBuffer::import(&self.device, bytes.as_ptr(), bytes.len(), "accl host array")
        }
        .map_err(|e| self.fault(e))?;
        crate::interp::phases::imported(t0, len);
        drop(data);
        if let Some(b) = &b {
            self.imports
                .insert((array.id(), key), (b.clone(), array.clone()));
        }
        Ok(b)
    }

    /// The runs of a direct copy of bytes `offset..offset + len` of
    /// `array`: one through the whole array's import, or, for an array
    /// too large for one import, one per imported piece it touches.
    /// `None` where the copy must be staged.
    pub(super) fn direct_runs(
        &mut self,
        array: &Array,
        offset: usize,
        len: usize,
    ) -> Result<Option<Vec<DirectRun>>, Fault> {
        let whole = array.data().bytes().len() <= self.import_piece;
        if let Some(hb) = whole
            .then(|| self.import(array, len))
            .transpose()?
            .flatten()
        {
            return Ok(Some(vec![DirectRun {
                at: hb.offset() + offset as u64,
                hb,
                delta: 0,
                len: len as u64,
            }]));
        }
        let (base, total) = {
            let d = array.data();
            (d.bytes().as_ptr() as usize, d.bytes().len())
        };
        let piece = self.import_piece;
        if !self.direct || len < DIRECT_MIN || total <= piece || !self.device.imports_host_memory()
        {
            return Ok(None);
        }
        // Pieces at multiples of `piece` in the address space, so that no
        // page is imported twice (`piece` is a multiple of any import
        // alignment).
        let mut runs = Vec::new();
        let (lo, hi) = (base + offset, base + offset + len);
        for k in lo / piece..hi.div_ceil(piece) {
            let (p0, p1) = ((k * piece).max(base), ((k + 1) * piece).min(base + total));
            let Some(hb) = self.import_range(array, k, p0 - base, p1 - p0)? else {
                return Ok(None);
            };
            let (s0, s1) = (lo.max(p0), hi.min(p1));
            runs.push(DirectRun {
                at: hb.offset() + (s0 - p0) as u64,
                hb,
                delta: (s0 - lo) as u64,
                len: (s1 - s0) as u64,
            });
        }
        Ok(Some(runs))
    }

    pub(super) fn staging(
        &mut self,
        kind: StagingKind,
        want: u64,
    ) -> Result<&mut StagingBuffer, Fault> {
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
                    .map_err(Fault::from)?,
            );
        }
        Ok(slot.as_mut().expect("set above"))
    }

    /// Copy `len` bytes of `host` from byte `host_offset` into `buf` at
    /// byte `offset`, on queue `id`. Large copies go straight from the
    /// host array where the device can import it; otherwise the bytes are
    /// staged, and an async copy reads the host data now, into a staging
    /// buffer of its own.
    pub fn upload(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        offset: u64,
        host: &Array,
        host_offset: usize,
        len: usize,
    ) -> Result<(), Fault> {
        if len == 0 {
            return Ok(());
        }
        self.land_copies_into(host)?;
        if let Some(runs) = self.direct_runs(host, host_offset, len)? {
            if id == QueueId::Sync && self.sync_on_engines && self.copy_engines != CopyEngines::Off
            {
                let v = self.flush(id)?;
                let ci = self.copy_queue(id)?;
                let si = self.split_companion(ci, len as u64)?;
                let parts = match si {
                    Some(si) => {
                        let (a, b) = split::halves(&runs, len as u64);
                        vec![(ci, a), (si, b)]
                    }
                    None => vec![(ci, runs)],
                };
                let start = std::time::Instant::now();
                let qi = self.queues.iter().position(|(q, _)| *q == id);
                let qi = qi.expect("flushed above");
                let mut done = Vec::new();
                for (i, part) in parts {
                    let cv = self.copy_on_companion(qi, v, i, &part, buf, offset, true)?;
                    let (q, c) = (&mut self.queues[qi].1, &self.copies[i].1);
                    q.wait_on(c, cv).map_err(Fault::from)?;
                    done.push((i, cv));
                }
                return self.wait_copy(start, len as u64, done[0], done.get(1).copied());
            }
            let q = self.queue(id)?;
            q.set_label("upload direct");
            for r in &runs {
                q.copy_buffer(&r.hb, r.at, buf, offset + r.delta, r.len)
                    .map_err(Fault::from)?;
            }
            return self.settle(id);
        }
        if let QueueId::Async(_) = id {
            let to_buf = |h: usize| (h - host_offset) as u64 + offset;
            return self.upload_staged_async(
                id,
                buf,
                host,
                &[(host_offset, len)],
                to_buf,
                "upload",
            );
        }
        let data = host.data();
        let src = &data.bytes()[host_offset..host_offset + len];
        let mut done = 0usize;
        while done < src.len() {
            let st = self.staging(StagingKind::Upload, (src.len() - done) as u64)?;
            let n = (st.size() as usize).min(src.len() - done);
            copy_bytes(&mut st.as_mut_slice()[..n], &src[done..done + n]);
            let size = n as u64;
            let st = self.up.take().expect("staging exists");
            let r = self.queue(id).and_then(|q| {
                q.set_label("upload");
                q.copy_buffer(&st, 0, buf, offset + done as u64, size)
                    .map_err(Fault::from)
            });
            self.up = Some(st);
            r?;
            self.wait_queue(id)?;
            done += n;
        }
        Ok(())
    }

    /// Copy `len` bytes of `buf` from byte `offset` into `host` at byte
    /// `host_offset`, on queue `id`: at once for the synchronous queue,
    /// when the host observes the copy's completion for an async one.
    pub fn download_into(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        offset: u64,
        host: &Array,
        host_offset: usize,
        len: usize,
    ) -> Result<(), Fault> {
        if len == 0 {
            return Ok(());
        }
        // Straight into the host array, except for `bool` arrays (whose
        // bytes are normalised on the way in).
        let direct = match host.scalar() {
            lang::Scalar::Bool => None,
            _ => self.direct_runs(host, host_offset, len)?,
        };
        let on_engine = match id {
            QueueId::Async(_) => true,
            QueueId::Sync => self.sync_on_engines,
        };
        if let (Some(runs), true, true) =
            (&direct, on_engine, self.copy_engines != CopyEngines::Off)
        {
            let v = self.flush(id)?;
            let ci = self.copy_queue(id)?;
            // A synchronous copy may share its work with a second engine;
            // the host waits for that half below, so it is never outstanding.
            let si = match id {
                QueueId::Sync => self.split_companion(ci, len as u64)?,
                QueueId::Async(_) => None,
            };
            let (runs, second) = match si {
                Some(si) => {
                    let (a, b) = split::halves(runs, len as u64);
                    (a, Some((si, b)))
                }
                None => (runs.clone(), None),
            };
            let start = std::time::Instant::now();
            let qi = self.queues.iter().position(|(q, _)| *q == id);
            let qi = qi.expect("submitted above");
            let second = match second {
                Some((si, part)) => Some((
                    si,
                    self.copy_on_companion(qi, v, si, &part, buf, offset, false)?,
                )),
                None => None,
            };
            let cv = self.copy_on_companion(qi, v, ci, &runs, buf, offset, false)?;
            let rb = (host.row_len() * host.scalar().size()).max(1);
            self.outstanding.push(Outstanding {
                queue: id,
                array: host.id(),
                lo: host_offset / rb,
                hi: (host_offset + len).div_ceil(rb),
                copy: ci,
                value: cv,
            });
            return match id {
                QueueId::Sync => {
                    self.wait_copy(start, len as u64, (ci, cv), second)?;
                    self.wait_queue(id)
                }
                QueueId::Async(_) => Ok(()),
            };
        }
        if let Some(runs) = direct {
            let q = self.queue(id)?;
            q.set_label("download direct");
            for r in &runs {
                q.copy_buffer(buf, offset + r.delta, &r.hb, r.at, r.len)
                    .map_err(Fault::from)?;
            }
            return match id {
                // Submitted now, so the copy starts as soon as its queue
                // gets there; nothing is left for the host to do after it.
                QueueId::Async(_) => self.hand_off(id).map(|_| ()),
                QueueId::Sync => self.wait_queue(id),
            };
        }
        if let QueueId::Async(_) = id {
            let to_buf = |h: usize| (h - host_offset) as u64 + offset;
            return self.download_staged_async(
                id,
                buf,
                host,
                &[(host_offset, len)],
                to_buf,
                "download",
            );
        }
        if len as u64 <= STAGING_MAX {
            // One staging buffer's worth: straight from it into the host
            // array once the copy is done (nothing is written on failure).
            self.download_staged(id, buf, offset, len)?;
            let st = self.down.as_ref().expect("staging exists");
            write_host(host, host_offset, &st.as_slice()[..len]);
            return Ok(());
        }
        // A staged copy larger than one staging buffer lands in host memory
        // first: a size the system refuses is an error, not an abort.
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|_| {
            Fault::OutOfMemory(format!(
                "no host memory for the {len} bytes of a copy from the device"
            ))
        })?;
        out.resize(len, 0);
        self.download(id, buf, offset, &mut out)?;
        write_host(host, host_offset, &out);
        Ok(())
    }

    /// On companion `ci`, after value `v` of queue `qi`: the direct copies
    /// `runs` between the host and `buf` from byte `offset` (to the device
    /// when `up`), submitted; the companion's value for them.
    #[allow(clippy::too_many_arguments)]
    fn copy_on_companion(
        &mut self,
        qi: usize,
        v: u64,
        ci: usize,
        runs: &[DirectRun],
        buf: &Buffer,
        offset: u64,
        up: bool,
    ) -> Result<u64, Fault> {
        let (q, c) = (&self.queues[qi].1, &mut self.copies[ci].1);
        c.wait_on(q, v).map_err(Fault::from)?;
        c.set_label(if up {
            "upload direct"
        } else {
            "download direct"
        });
        for r in runs {
            let (at, delta) = (r.at, offset + r.delta);
            if up {
                c.copy_buffer(&r.hb, at, buf, delta, r.len)
            } else {
                c.copy_buffer(buf, delta, &r.hb, at, r.len)
            }
            .map_err(Fault::from)?;
        }
        // The host waits for a synchronous queue's copies at once.
        match self.queues[qi].0 {
            QueueId::Async(_) => c.hand_off_when_ready(),
            QueueId::Sync => c.submit(),
        }
        .map_err(Fault::from)
    }

    /// Copy `out.len()` bytes of `buf` from byte `offset` into `out`, after
    /// the work recorded on queue `id`, and wait for it.
    pub fn download(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), Fault> {
        let mut done = 0usize;
        while done < out.len() {
            let n = (self
                .staging(StagingKind::Download, (out.len() - done) as u64)?
                .size() as usize)
                .min(out.len() - done);
            let st = self.down.take().expect("staging exists");
            let r = self.queue(id).and_then(|q| {
                q.set_label("download");
                q.copy_buffer(buf, offset + done as u64, &st, 0, n as u64)
                    .map_err(Fault::from)
            });
            self.down = Some(st);
            r?;
            self.wait_queue(id)?;
            let st = self.down.as_ref().expect("staging exists");
            copy_bytes(&mut out[done..done + n], &st.as_slice()[..n]);
            done += n;
        }
        Ok(())
    }

    /// Copy `len` bytes (at most [`STAGING_MAX`]) of `buf` from byte
    /// `offset` into the download staging buffer, after the work recorded
    /// on queue `id`, and wait for it.
    fn download_staged(
        &mut self,
        id: QueueId,
        buf: &Buffer,
        offset: u64,
        len: usize,
    ) -> Result<(), Fault> {
        self.staging(StagingKind::Download, len as u64)?;
        let st = self.down.take().expect("staging exists");
        let r = self.queue(id).and_then(|q| {
            q.set_label("download");
            q.copy_buffer(buf, offset, &st, 0, len as u64)
                .map_err(Fault::from)
        });
        self.down = Some(st);
        r?;
        self.wait_queue(id)
    }

    /// Zero a whole buffer on queue `id`.
    pub fn zero(&mut self, id: QueueId, buf: &Buffer) -> Result<(), Fault> {
        let q = self.queue(id)?;
        q.set_label("zero");
        q.zero(buf, 0, buf.size()).map_err(Fault::from)?;
        self.settle(id)
    }
}

/// Write `src` into the host array at byte `offset`.
fn write_host(array: &Array, offset: usize, src: &[u8]) {
    let mut data = array.data_mut();
    match data.bytes_mut() {
        Some(b) if offset + src.len() <= b.len() => {
            copy_bytes(&mut b[offset..offset + src.len()], src)
        }
        _ => data.write_bytes(offset, src),
    }
}
