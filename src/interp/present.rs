//! The present table: per (device, host array) the present
//! sections (boxes, [`Region`]), each with a structured and a dynamic
//! reference count, and the device storage behind them.
//!
//! The bookkeeping ([`Table`]) is shared by every backend, so the host
//! reference and the Vulkan backend count, find and refuse sections alike;
//! only the storage differs ([`Storage`]): the host keeps one device copy of
//! the array's full shape ([`HostStorage`]), the Vulkan backend one device
//! buffer per section.
//!
//! The host backend models a discrete device exactly: the device copy is a
//! separate buffer of which only the present sections are meaningful,
//! transfers are real copies of those rows, and a kernel run on the host
//! reads and writes the device copy. So a program that forgets an `update`
//! gets on the host the stale values it would get on a GPU
//! (`examples/sections.accl` checks this).
//!
//! A section is a box: per axis a range `lo..hi`. A box is present when it
//! lies inside one present box, and "partially present" (an error) when
//! it overlaps one without lying inside it. Device storage of a box holds
//! whole rows of its leading-axis range (so kernels address every box as
//! they address a row section, through the base offset of its first row),
//! but transfers move only the box's elements: one contiguous run for a row
//! section (whole trailing axes), one run per row or block otherwise
//! ([`Region::runs`]).

use super::race::Access;
pub use super::region::Region;
use super::wait::WaitStop;
use rustc_hash::FxHashMap;
use stdlib::Array;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub bx: Region,
    pub structured: u32,
    pub dynamic: u32,
}

/// Where a section stands against the present data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Find {
    Absent,
    /// Inside the present section with this index.
    Inside(usize),
    /// Overlapping this present box without lying inside it.
    Partial(Region),
}

/// Why a data operation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvError {
    /// The section overlaps this present box without lying inside it.
    Partial(Region),
    /// The device could not do it (out of memory, too large, device lost).
    Device(Fault),
    /// It would race with pending async work (a complete diagnostic).
    Race(Box<lang::Diag>),
}

impl EnvError {
    pub fn message(&self) -> String {
        match self {
            EnvError::Partial(r) if r.is_rows() => {
                format!("{} are partially present", r.describe())
            }
            EnvError::Partial(r) => format!("{} is partially present", r.describe()),
            EnvError::Device(f) => f.to_string(),
            EnvError::Race(d) => d.message.clone(),
        }
    }
}

/// A failure of the device rather than of the program: each becomes its
/// own diagnostic ([`crate::interp::error::fault`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The runtime's message.
    Failed(String),
    /// An allocation did not fit; the message names the sizes.
    OutOfMemory(String),
    /// The device was lost: it cannot be used any more.
    Lost(String),
    /// A wait was stopped by the embedder's limits; the device work goes on.
    Stopped(WaitStop),
    /// A kernel recorded a fault (bounds-check mode, the loop watchdog): the
    /// complete diagnostic. Its results were not copied to the host.
    Kernel(Box<lang::Diag>),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Failed(m) | Fault::OutOfMemory(m) | Fault::Lost(m) => f.write_str(m),
            Fault::Stopped(WaitStop::TimeLimit(t)) => {
                write!(
                    f,
                    "the time limit of {t:?} passed while waiting for the device"
                )
            }
            Fault::Stopped(WaitStop::Aborted) => {
                f.write_str("the host stopped the wait for the device")
            }
            Fault::Kernel(d) => f.write_str(&d.message),
        }
    }
}

impl From<String> for Fault {
    fn from(m: String) -> Fault {
        Fault::Failed(m)
    }
}

impl From<Fault> for String {
    fn from(f: Fault) -> String {
        f.to_string()
    }
}

impl From<&str> for Fault {
    fn from(m: &str) -> Fault {
        Fault::Failed(m.to_string())
    }
}

/// Device storage behind a [`Table`].
pub trait Storage {
    /// Per (device, array) state.
    type Arr;
    /// Per present section state.
    type Sec;
    fn new_array(&mut self, dev: usize, host: &Array) -> Result<Self::Arr, EnvError>;
    /// Storage for box `r` (whole rows of its leading-axis range at least),
    /// the box's elements filled from the host when `copyin`.
    fn new_section(
        &mut self,
        dev: usize,
        arr: &mut Self::Arr,
        host: &Array,
        r: &Region,
        copyin: bool,
    ) -> Result<Self::Sec, EnvError>;
    /// Copy the elements of box `r` (inside section `sec`, whose storage
    /// starts at row `sec_lo`) to the host (`to_host`) or to the device.
    #[allow(clippy::too_many_arguments)]
    fn transfer(
        &mut self,
        dev: usize,
        arr: &Self::Arr,
        sec: &Self::Sec,
        sec_lo: usize,
        host: &Array,
        r: &Region,
        to_host: bool,
    ) -> Result<(), EnvError>;
    /// Rows `lo..hi` of `host` are about to be freed on `dev` (after a copy
    /// back when `copyout`); an error leaves the present table unchanged.
    fn release(
        &mut self,
        dev: usize,
        host: &Array,
        lo: usize,
        hi: usize,
        copyout: bool,
    ) -> Result<(), EnvError> {
        let _ = (dev, host, lo, hi, copyout);
        Ok(())
    }
    /// Copy the elements of box `src` of its device storage into box `dst`
    /// of its own on `dev`, on the device (`acc_memcpy_device`), paired in
    /// row-major order ([`super::region::paired_runs`]). Each box lies in
    /// the one section given with it; the boxes hold the same count. They
    /// may be boxes of one array, even of one section, and may overlap:
    /// the copy reads every source element before it writes.
    fn copy_device(
        &mut self,
        dev: usize,
        dst: DeviceBox<'_, Self>,
        src: DeviceBox<'_, Self>,
    ) -> Result<(), EnvError>;
}

/// A box of an array's device copy, as [`Storage::copy_device`] takes it:
/// the host array, its storage, the present section holding the box and the
/// first row of that section's storage.
pub struct DeviceBox<'a, S: Storage + ?Sized> {
    pub host: &'a Array,
    pub arr: &'a S::Arr,
    pub sec: &'a S::Sec,
    pub sec_lo: usize,
    pub r: &'a Region,
}

pub struct Mapping<S: Storage> {
    pub host: Array,
    pub arr: S::Arr,
    pub sections: Vec<(Section, S::Sec)>,
}

/// The present table of every device of one backend.
pub struct Table<S: Storage> {
    // Looked up at every launch: a fast hash rather than SipHash.
    maps: FxHashMap<(usize, u64), Mapping<S>>,
    /// The host array the last device-to-device copy went through, kept
    /// for the next copy of the same shape: its pages are in memory and
    /// the devices have it imported already, so a repeated copy (a block
    /// moved every step) costs the two transfers alone.
    bounce: Option<Array>,
    pub store: S,
}

impl<S: Storage + Default> Default for Table<S> {
    fn default() -> Self {
        Table {
            maps: FxHashMap::default(),
            bounce: None,
            store: S::default(),
        }
    }
}

impl<S: Storage> Table<S> {
    pub fn new(store: S) -> Self {
        Table {
            maps: FxHashMap::default(),
            bounce: None,
            store,
        }
    }

    /// The device state of `a` on `dev`, if any part is present.
    pub fn mapping(&self, dev: usize, a: &Array) -> Option<&Mapping<S>> {
        self.maps.get(&(dev, a.id()))
    }

    /// The present sections of `a` on `dev` with their counts.
    pub fn sections(&self, dev: usize, a: &Array) -> Vec<Section> {
        self.maps
            .get(&(dev, a.id()))
            .map(|m| m.sections.iter().map(|(s, _)| s.clone()).collect())
            .unwrap_or_default()
    }

    /// Drop everything (a fresh device state), without copying anything back.
    pub fn clear(&mut self) {
        self.maps.clear();
    }

    /// Free the device copies of host arrays that nothing but this table
    /// holds: no variable can name them again (data entered by an input
    /// that failed, whose variables were not kept, or an entered array
    /// whose variable was given another one). A copy that pending work may
    /// still use (the release would race with it) stays for a later call.
    /// Returns how many stay because of pending work.
    pub fn release_unreachable(&mut self) -> usize {
        let keys: Vec<(usize, u64)> = self
            .maps
            .iter()
            .filter(|(_, m)| m.host.handles() == 1)
            .map(|(k, _)| *k)
            .collect();
        let mut blocked = 0;
        for key in keys {
            let Some(m) = self.maps.get(&key) else {
                continue;
            };
            let host = m.host.clone();
            let rows: Vec<(usize, usize)> =
                m.sections.iter().map(|(s, _)| (s.bx.lo, s.bx.hi)).collect();
            if rows
                .iter()
                .all(|&(lo, hi)| self.store.release(key.0, &host, lo, hi, false).is_ok())
            {
                self.maps.remove(&key);
            } else {
                blocked += 1;
            }
        }
        blocked
    }
}

impl<S: Storage> Table<S> {
    /// Make all of `a` present on `dev` in storage the caller made (an
    /// embedder's buffer), with a dynamic reference count of 1, as
    /// `enter data create(a)` would; `a` must be absent there.
    pub fn map_external(&mut self, dev: usize, a: &Array, sec: S::Sec) {
        let Ok(arr) = self.store.new_array(dev, a) else {
            return;
        };
        self.maps.insert(
            (dev, a.id()),
            Mapping {
                host: a.clone(),
                arr,
                sections: vec![(
                    Section {
                        bx: Region::whole(a.shape()),
                        structured: 0,
                        dynamic: 1,
                    },
                    sec,
                )],
            },
        );
    }
}

/// The data operations the construct flow needs, whatever the storage.
pub trait Env {
    fn find(&self, dev: usize, a: &Array, r: &Region) -> Find;
    fn has_any(&self, dev: usize, a: &Array) -> bool;
    fn is_present(&self, dev: usize, a: &Array) -> bool;
    fn attach(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        copyin: bool,
        structured: bool,
    ) -> Result<(), EnvError>;
    fn detach(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        copyout: bool,
        structured: bool,
        finalize: bool,
    ) -> Result<(), EnvError>;
    fn update(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        to_host: bool,
    ) -> Result<bool, EnvError>;
    /// Box `r` of `a`'s device copy from (`to_device`) or into the same
    /// box of `carrier`, a host array of `a`'s shape standing in for
    /// `a`'s own (`acc_memcpy_to_device`, `acc_memcpy_from_device`);
    /// Ok(false) when the box is not present.
    fn transfer_via(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        carrier: &Array,
        to_device: bool,
    ) -> Result<bool, EnvError>;
    /// A new host array holding the device's values of `a` where present
    /// (zeros elsewhere); None when no part is present.
    fn snapshot(&mut self, dev: usize, a: &Array) -> Result<Option<Array>, Fault>;
    fn rows(&self) -> Vec<PresentRow>;
    /// `acc_memcpy_device(dst, src)`: box `dst.1` of `dst.0`'s device copy
    /// from box `src.1` of `src.0`'s; Ok(false) unless each box lies inside
    /// one present section on `dev`.
    fn copy_device(
        &mut self,
        dev: usize,
        dst: (&Array, &Region),
        src: (&Array, &Region),
    ) -> Result<bool, EnvError>;
    /// `acc_memcpy_d2d(dst, src, dst_dev, src_dev)`: box `src.1` of the
    /// device copy of `src.0` on `src.2` into box `dst.1` of that of `dst.0`
    /// on `dst.2` (elements paired in row-major order), through host memory
    /// (two devices share no memory); Ok(false) unless each box lies inside
    /// one present section there.
    fn copy_between(
        &mut self,
        dst: (&Array, &Region, usize),
        src: (&Array, &Region, usize),
    ) -> Result<bool, EnvError>;
}

impl<S: Storage> Env for Table<S> {
    fn find(&self, dev: usize, a: &Array, r: &Region) -> Find {
        let Some(m) = self.maps.get(&(dev, a.id())) else {
            return Find::Absent;
        };
        let shape = a.shape();
        if let Some(i) = m.sections.iter().position(|(s, _)| s.bx.contains(r, shape)) {
            return Find::Inside(i);
        }
        match m.sections.iter().find(|(s, _)| s.bx.overlaps(r, shape)) {
            Some((s, _)) => Find::Partial(s.bx.clone()),
            None => Find::Absent,
        }
    }

    /// Any part of `a` present on `dev`?
    fn has_any(&self, dev: usize, a: &Array) -> bool {
        self.maps.contains_key(&(dev, a.id()))
    }

    /// Is every element of `a` present on `dev` (`acc_is_present`)? The
    /// present sections together may cover it.
    fn is_present(&self, dev: usize, a: &Array) -> bool {
        let Some(m) = self.maps.get(&(dev, a.id())) else {
            return false;
        };
        super::region::covers(m.sections.iter().map(|(s, _)| &s.bx), a.shape())
    }

    /// `copy/copyin/copyout/create` (and `present`/`no_create` of present
    /// data): bump the count of the section holding box `r`, or make it
    /// present (copying its elements in when `copyin`).
    fn attach(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        copyin: bool,
        structured: bool,
    ) -> Result<(), EnvError> {
        let key = (dev, a.id());
        let i = match self.find(dev, a, r) {
            Find::Partial(p) => return Err(EnvError::Partial(p)),
            Find::Inside(i) => i,
            Find::Absent => {
                if !self.maps.contains_key(&key) {
                    let arr = self.store.new_array(dev, a)?;
                    self.maps.insert(
                        key,
                        Mapping {
                            host: a.clone(),
                            arr,
                            sections: Vec::new(),
                        },
                    );
                }
                let m = self.maps.get_mut(&key).expect("inserted above");
                let sec = match self.store.new_section(dev, &mut m.arr, a, r, copyin) {
                    Ok(s) => s,
                    Err(e) => {
                        if m.sections.is_empty() {
                            self.maps.remove(&key);
                        }
                        return Err(e);
                    }
                };
                m.sections.push((
                    Section {
                        bx: r.clone(),
                        structured: 0,
                        dynamic: 0,
                    },
                    sec,
                ));
                m.sections.len() - 1
            }
        };
        if let Some(m) = self.maps.get_mut(&key) {
            let s = &mut m.sections[i].0;
            if structured {
                s.structured += 1;
            } else {
                s.dynamic += 1;
            }
        }
        Ok(())
    }

    /// The end of a data clause: decrement (or with `finalize` zero the
    /// dynamic count); when both counts are zero, copy the section's
    /// elements back (`copyout`) and free it. Absent data: a no-op.
    fn detach(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        copyout: bool,
        structured: bool,
        finalize: bool,
    ) -> Result<(), EnvError> {
        let i = match self.find(dev, a, r) {
            Find::Partial(p) => return Err(EnvError::Partial(p)),
            Find::Absent => return Ok(()),
            Find::Inside(i) => i,
        };
        let key = (dev, a.id());
        let Some(m) = self.maps.get_mut(&key) else {
            return Ok(());
        };
        let s = &mut m.sections[i].0;
        let before = (s.structured, s.dynamic);
        if structured {
            s.structured = s.structured.saturating_sub(1);
        } else if finalize {
            s.dynamic = 0;
        } else {
            s.dynamic = s.dynamic.saturating_sub(1);
        }
        if s.structured == 0 && s.dynamic == 0 {
            let (lo, hi) = (s.bx.lo, s.bx.hi);
            if let Err(e) = self.store.release(dev, &m.host, lo, hi, copyout) {
                let s = &mut m.sections[i].0;
                (s.structured, s.dynamic) = before;
                return Err(e);
            }
        }
        let s = &m.sections[i].0;
        let mut result = Ok(());
        if s.structured == 0 && s.dynamic == 0 {
            let (s, sec) = m.sections.remove(i);
            if copyout {
                // The section is freed even when the copy fails: the device
                // copy is gone either way, and the error says so.
                result = self
                    .store
                    .transfer(dev, &m.arr, &sec, s.bx.lo, &m.host, &s.bx, true);
            }
            drop(sec);
            if m.sections.is_empty() {
                self.maps.remove(&key);
            }
        }
        result
    }

    /// `update self` (`to_host`) or `update device` of box `r`;
    /// Ok(false) when absent.
    fn transfer_via(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        carrier: &Array,
        to_device: bool,
    ) -> Result<bool, EnvError> {
        match self.find(dev, a, r) {
            Find::Partial(p) => Err(EnvError::Partial(p)),
            Find::Absent => Ok(false),
            Find::Inside(i) => {
                if let Some(m) = self.maps.get(&(dev, a.id())) {
                    let (s, sec) = &m.sections[i];
                    self.store
                        .transfer(dev, &m.arr, sec, s.bx.lo, carrier, r, !to_device)?;
                }
                Ok(true)
            }
        }
    }

    fn update(
        &mut self,
        dev: usize,
        a: &Array,
        r: &Region,
        to_host: bool,
    ) -> Result<bool, EnvError> {
        // The host array itself is the carrier.
        let host = match self.maps.get(&(dev, a.id())) {
            Some(m) => m.host.clone(),
            None => return Ok(false),
        };
        self.transfer_via(dev, a, r, &host, !to_host)
    }

    /// Every present section, by device then array id.
    fn rows(&self) -> Vec<PresentRow> {
        let mut v: Vec<_> = self
            .maps
            .iter()
            .flat_map(|(&(device, array), m)| {
                m.sections.iter().map(move |(s, _)| PresentRow {
                    device,
                    array,
                    lo: s.bx.lo,
                    hi: s.bx.hi,
                    inner: s.bx.inner.clone(),
                    rows: m.host.shape()[0],
                    structured: s.structured,
                    dynamic: s.dynamic,
                })
            })
            .collect();
        v.sort_by(|a, b| {
            (a.device, a.array, a.lo, &a.inner).cmp(&(b.device, b.array, b.lo, &b.inner))
        });
        v
    }

    fn copy_device(
        &mut self,
        dev: usize,
        (dst, dr): (&Array, &Region),
        (src, sr): (&Array, &Region),
    ) -> Result<bool, EnvError> {
        let inside = |a: &Array, r: &Region| match self.find(dev, a, r) {
            Find::Inside(i) => Some(i),
            _ => None,
        };
        let (Some(i), Some(j)) = (inside(dst, dr), inside(src, sr)) else {
            return Ok(false);
        };
        let (Some(d), Some(s)) = (
            self.maps.get(&(dev, dst.id())),
            self.maps.get(&(dev, src.id())),
        ) else {
            return Ok(false);
        };
        let (ds, dsec) = &d.sections[i];
        let (ss, ssec) = &s.sections[j];
        self.store.copy_device(
            dev,
            DeviceBox {
                host: &d.host,
                arr: &d.arr,
                sec: dsec,
                sec_lo: ds.bx.lo,
                r: dr,
            },
            DeviceBox {
                host: &s.host,
                arr: &s.arr,
                sec: ssec,
                sec_lo: ss.bx.lo,
                r: sr,
            },
        )?;
        Ok(true)
    }

    fn copy_between(
        &mut self,
        (dst, dr, dst_dev): (&Array, &Region, usize),
        (src, sr, src_dev): (&Array, &Region, usize),
    ) -> Result<bool, EnvError> {
        let inside = |a: &Array, r: &Region, dev: usize| match self.find(dev, a, r) {
            Find::Inside(i) => Some(i),
            _ => None,
        };
        let (Some(i), Some(j)) = (inside(dst, dr, dst_dev), inside(src, sr, src_dev)) else {
            return Ok(false);
        };
        let (Some(d), Some(s)) = (
            self.maps.get(&(dst_dev, dst.id())),
            self.maps.get(&(src_dev, src.id())),
        ) else {
            return Ok(false);
        };
        let (ds, dsec) = &d.sections[i];
        let (ss, ssec) = &s.sections[j];
        // Out through a host array of src's shape, in again from one of
        // dst's shape: the elements of both boxes in row-major order.
        let out = match self.bounce.take() {
            Some(b) if b.scalar() == src.scalar() && b.shape() == src.shape() => b,
            _ => Array::zeros(src.scalar(), src.shape().to_vec())
                .map_err(|e| EnvError::Device(Fault::Failed(e.to_string())))?,
        };
        self.store
            .transfer(src_dev, &s.arr, ssec, ss.bx.lo, &out, sr, true)?;
        let whole = |a: &Array, r: &Region| *r == Region::whole(a.shape());
        let back = if whole(dst, dr) && whole(src, sr) {
            if dst.shape() == src.shape() {
                out.clone()
            } else {
                Array::new(out.data().clone(), dst.shape().to_vec())
                    .map_err(|e| EnvError::Device(Fault::Failed(format!("{e:?}"))))?
            }
        } else {
            let back = Array::zeros(dst.scalar(), dst.shape().to_vec())
                .map_err(|e| EnvError::Device(Fault::Failed(e.to_string())))?;
            let size = src.scalar().size();
            {
                let from = out.data();
                let bytes = from.bytes();
                let mut to = back.data_mut();
                for (d, s, n) in super::region::paired_runs((dr, dst.shape()), (sr, src.shape())) {
                    if let Some(run) = bytes.get(s * size..(s + n) * size) {
                        to.write_bytes(d * size, run);
                    }
                }
            }
            back
        };
        self.store
            .transfer(dst_dev, &d.arr, dsec, ds.bx.lo, &back, dr, false)?;
        self.bounce = Some(out);
        Ok(true)
    }

    fn snapshot(&mut self, dev: usize, a: &Array) -> Result<Option<Array>, Fault> {
        let Some(m) = self.maps.get(&(dev, a.id())) else {
            return Ok(None);
        };
        let out = Array::zeros(a.scalar(), a.shape().to_vec())
            .map_err(|e| Fault::Failed(e.to_string()))?;
        for (s, sec) in &m.sections {
            self.store
                .transfer(dev, &m.arr, sec, s.bx.lo, &out, &s.bx, true)
                .map_err(|e| match e {
                    EnvError::Device(f) => f,
                    e => Fault::Failed(e.message()),
                })?;
        }
        Ok(Some(out))
    }
}

/// The host backend's storage: a full-shape device copy per array, and
/// the race tracking of its async operations.
#[derive(Default)]
pub struct HostStorage {
    pub races: super::race::HostRaces,
    /// The device copy [`Storage::new_array`] made last, all zeros until
    /// its first section is entered: a `create` of it has nothing to clear.
    fresh: Option<u64>,
}

impl HostStorage {
    /// Check an operation doing `accs` against pending async work, run
    /// `op`, and keep it pending when it is on an async queue.
    fn tracked(
        &mut self,
        dev: usize,
        accs: Vec<Access>,
        what: &'static str,
        op: impl FnOnce(),
    ) -> Result<(), EnvError> {
        self.races.guard(dev, &accs, what).map_err(EnvError::Race)?;
        op();
        self.races.record(dev, accs, what);
        Ok(())
    }

    fn name(&self, host: &Array) -> std::rc::Rc<str> {
        self.races.name(host.id())
    }
}

fn copy_rows(from: &Array, to: &Array, lo: usize, hi: usize) {
    let row = from.row_len() * from.scalar().size();
    let (a, b) = (lo * row, hi * row);
    let src = from.data();
    let bytes = src.bytes();
    if b <= bytes.len() && a <= b {
        to.data_mut().write_bytes(a, &bytes[a..b]);
    }
}

/// Copy the elements of box `r` between two arrays of one shape: a row
/// section in one piece, any other box run by run.
fn copy_region(from: &Array, to: &Array, r: &Region) {
    if r.is_rows() {
        return copy_rows(from, to, r.lo, r.hi);
    }
    let size = from.scalar().size();
    let src = from.data();
    let bytes = src.bytes();
    let mut dst = to.data_mut();
    for (start, len) in r.runs(from.shape()) {
        let (a, b) = (start * size, (start + len) * size);
        if let Some(run) = bytes.get(a..b) {
            dst.write_bytes(a, run);
        }
    }
}

/// Zero the elements of box `r` of `a`.
fn zero_region(a: &Array, r: &Region) {
    let size = a.scalar().size();
    let mut d = a.data_mut();
    let runs: Vec<(usize, usize)> = if r.is_rows() {
        let row = a.row_len();
        vec![(r.lo * row, (r.hi - r.lo) * row)]
    } else {
        r.runs(a.shape()).collect()
    };
    for (start, len) in runs {
        let (lo, hi) = (start * size, (start + len) * size);
        match d.bytes_mut() {
            Some(b) if hi <= b.len() => b[lo..hi].fill(0),
            _ => d.write_bytes(lo, &vec![0; hi - lo]),
        }
    }
}

impl Storage for HostStorage {
    type Arr = Array;
    type Sec = ();
    fn new_array(&mut self, _dev: usize, host: &Array) -> Result<Array, EnvError> {
        let (a, zeros) = match Array::zeros(host.scalar(), host.shape().to_vec()) {
            Ok(a) => (a, true),
            Err(_) => (host.deep_clone(), false),
        };
        self.fresh = zeros.then(|| a.id());
        Ok(a)
    }
    fn new_section(
        &mut self,
        dev: usize,
        arr: &mut Array,
        host: &Array,
        r: &Region,
        copyin: bool,
    ) -> Result<(), EnvError> {
        let (acc, what) = Access::allocation(host.id(), self.name(host), (r.lo, r.hi), copyin);
        let fresh = self.fresh.take() == Some(arr.id());
        self.tracked(dev, vec![acc], what, || {
            if copyin {
                copy_region(host, arr, r);
            } else if !fresh {
                // `create` storage reads as zeros (`create(zero: a)` is
                // `create(a)`), also where an earlier section left values;
                // a copy just made is zeros already (and its pages stay
                // untouched until the kernel writes them).
                zero_region(arr, r);
            }
        })
    }
    fn transfer(
        &mut self,
        dev: usize,
        arr: &Array,
        _sec: &(),
        _sec_lo: usize,
        host: &Array,
        r: &Region,
        to_host: bool,
    ) -> Result<(), EnvError> {
        let (acc, what) = Access::copy(host.id(), self.name(host), (r.lo, r.hi), to_host);
        self.tracked(dev, vec![acc], what, || {
            if to_host {
                copy_region(arr, host, r);
            } else {
                copy_region(host, arr, r);
            }
        })
    }
    fn release(
        &mut self,
        dev: usize,
        host: &Array,
        lo: usize,
        hi: usize,
        copyout: bool,
    ) -> Result<(), EnvError> {
        let acc = Access::release(host.id(), self.name(host), (lo, hi), copyout);
        self.races
            .guard(dev, &[acc], "release of device memory")
            .map_err(EnvError::Race)
    }
    fn copy_device(
        &mut self,
        dev: usize,
        dst: DeviceBox<'_, Self>,
        src: DeviceBox<'_, Self>,
    ) -> Result<(), EnvError> {
        let accs = Access::device_copy(
            (src.host.id(), self.name(src.host), (src.r.lo, src.r.hi)),
            (dst.host.id(), self.name(dst.host), (dst.r.lo, dst.r.hi)),
        )
        .to_vec();
        let size = src.host.scalar().size();
        let pieces =
            super::region::paired_runs((dst.r, dst.host.shape()), (src.r, src.host.shape()));
        self.tracked(dev, accs, "device-to-device copy", || {
            // Read all first: the two boxes may be of one device copy.
            let mut buf = Vec::with_capacity(src.r.len(src.host.shape()) * size);
            {
                let from = src.arr.data();
                let bytes = from.bytes();
                for &(_, s, n) in &pieces {
                    if let Some(run) = bytes.get(s * size..(s + n) * size) {
                        buf.extend_from_slice(run);
                    }
                }
            }
            let mut to = dst.arr.data_mut();
            let mut at = 0;
            for &(d, _, n) in &pieces {
                if let Some(run) = buf.get(at..at + n * size) {
                    to.write_bytes(d * size, run);
                }
                at += n * size;
            }
        })
    }
}

/// The host backend's present table.
pub type PresentTable = Table<HostStorage>;

impl PresentTable {
    /// The device copy of `a` on `dev`, if any part is present.
    pub fn device_copy(&self, dev: usize, a: &Array) -> Option<Array> {
        self.mapping(dev, a).map(|m| m.arr.clone())
    }
}

/// One present section, as [`super::machine::Backend::present_rows`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentRow {
    pub device: usize,
    /// [`stdlib::Array::id`] of the host array.
    pub array: u64,
    /// Rows `lo..hi` of the leading axis.
    pub lo: usize,
    pub hi: usize,
    /// The ranges of the other axes (all of them) when the section is a
    /// box that cuts one; empty when they are whole.
    pub inner: Vec<(usize, usize)>,
    /// Extent of the leading axis.
    pub rows: usize,
    pub structured: u32,
    pub dynamic: u32,
}

/// A borrowed present table, as [`super::machine::Backend::env`] lends it:
/// the host reference's own (in the context) or a device backend's.
pub enum EnvRef<'a> {
    Host(&'a mut PresentTable),
    Shared(std::cell::RefMut<'a, dyn Env + 'static>),
}

impl std::ops::Deref for EnvRef<'_> {
    type Target = dyn Env + 'static;
    fn deref(&self) -> &(dyn Env + 'static) {
        match self {
            EnvRef::Host(t) => &**t,
            EnvRef::Shared(t) => &**t,
        }
    }
}

impl std::ops::DerefMut for EnvRef<'_> {
    fn deref_mut(&mut self) -> &mut (dyn Env + 'static) {
        match self {
            EnvRef::Host(t) => &mut **t,
            EnvRef::Shared(t) => &mut **t,
        }
    }
}
