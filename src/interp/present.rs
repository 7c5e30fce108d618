//! The host's present table (DESIGN.md 1.4): per (device, host array) the
//! device copy and its present sections, each with a structured and a
//! dynamic reference count.
//!
//! The host backend models a discrete device exactly: the "device copy" is a
//! separate buffer of the array's full shape of which only the present
//! sections are meaningful, transfers are real copies of those rows, and a
//! kernel run on the host reads and writes the device copy. So a program
//! that forgets an `update` gets on the host the stale values it would get
//! on a GPU (`examples/sections.accl` checks this), and the bookkeeping and
//! errors are the ones the Vulkan backend must give. Sections are ranges of
//! rows of the leading axis, `lo..hi`.

use std::collections::HashMap;
use stdlib::Array;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub lo: usize,
    pub hi: usize,
    pub structured: u32,
    pub dynamic: u32,
}

struct Mapping {
    host: Array,
    dev: Array,
    sections: Vec<Section>,
}

/// Where a section stands against the present data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Find {
    Absent,
    /// Inside the present section with this index.
    Inside(usize),
    /// Overlapping present rows `lo..hi` without lying inside them.
    Partial(usize, usize),
}

/// A section that overlaps present data without lying inside it: the rows
/// that are present.
pub type Partial = (usize, usize);

#[derive(Default)]
pub struct PresentTable {
    maps: HashMap<(usize, u64), Mapping>,
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

impl PresentTable {
    pub fn find(&self, dev: usize, a: &Array, lo: usize, hi: usize) -> Find {
        let Some(m) = self.maps.get(&(dev, a.id())) else {
            return Find::Absent;
        };
        if let Some(i) = m.sections.iter().position(|s| s.lo <= lo && hi <= s.hi) {
            return Find::Inside(i);
        }
        match m.sections.iter().find(|s| s.lo < hi && lo < s.hi) {
            Some(s) => Find::Partial(s.lo, s.hi),
            None => Find::Absent,
        }
    }

    /// Any part of `a` present on `dev`?
    pub fn has_any(&self, dev: usize, a: &Array) -> bool {
        self.maps.contains_key(&(dev, a.id()))
    }

    /// Is every row of `a` present on `dev` (`acc_is_present`)?
    pub fn is_present(&self, dev: usize, a: &Array) -> bool {
        let Some(m) = self.maps.get(&(dev, a.id())) else {
            return false;
        };
        let rows = a.shape()[0];
        let mut covered = vec![false; rows];
        for s in &m.sections {
            covered[s.lo.min(rows)..s.hi.min(rows)]
                .iter_mut()
                .for_each(|c| *c = true);
        }
        covered.iter().all(|&c| c)
    }

    /// `copy/copyin/copyout/create` (and `present`/`no_create` of present
    /// data): bump the count of the section holding `lo..hi`, or make it
    /// present (copying the rows in when `copyin`).
    pub fn attach(
        &mut self,
        dev: usize,
        a: &Array,
        lo: usize,
        hi: usize,
        copyin: bool,
        structured: bool,
    ) -> Result<(), Partial> {
        let i = match self.find(dev, a, lo, hi) {
            Find::Partial(l, h) => return Err((l, h)),
            Find::Inside(i) => i,
            Find::Absent => {
                let m = self.maps.entry((dev, a.id())).or_insert_with(|| Mapping {
                    host: a.clone(),
                    dev: Array::zeros(a.scalar(), a.shape().to_vec())
                        .unwrap_or_else(|_| a.deep_clone()),
                    sections: Vec::new(),
                });
                if copyin {
                    copy_rows(&m.host, &m.dev, lo, hi);
                }
                m.sections.push(Section {
                    lo,
                    hi,
                    structured: 0,
                    dynamic: 0,
                });
                m.sections.len() - 1
            }
        };
        if let Some(m) = self.maps.get_mut(&(dev, a.id())) {
            let s = &mut m.sections[i];
            if structured {
                s.structured += 1;
            } else {
                s.dynamic += 1;
            }
        }
        Ok(())
    }

    /// The end of a data clause: decrement (or with `finalize` zero the
    /// dynamic count); when both counts are zero, copy the section's rows
    /// back (`copyout`) and free it. Absent data: a no-op.
    #[allow(clippy::too_many_arguments)]
    pub fn detach(
        &mut self,
        dev: usize,
        a: &Array,
        lo: usize,
        hi: usize,
        copyout: bool,
        structured: bool,
        finalize: bool,
    ) -> Result<(), Partial> {
        let i = match self.find(dev, a, lo, hi) {
            Find::Partial(l, h) => return Err((l, h)),
            Find::Absent => return Ok(()),
            Find::Inside(i) => i,
        };
        let key = (dev, a.id());
        let Some(m) = self.maps.get_mut(&key) else {
            return Ok(());
        };
        let s = &mut m.sections[i];
        if structured {
            s.structured = s.structured.saturating_sub(1);
        } else if finalize {
            s.dynamic = 0;
        } else {
            s.dynamic = s.dynamic.saturating_sub(1);
        }
        if s.structured == 0 && s.dynamic == 0 {
            let s = m.sections.remove(i);
            if copyout {
                copy_rows(&m.dev, &m.host, s.lo, s.hi);
            }
            if m.sections.is_empty() {
                self.maps.remove(&key);
            }
        }
        Ok(())
    }

    /// `update self` (`to_host`) or `update device` of rows `lo..hi`;
    /// Ok(false) when absent.
    pub fn update(
        &mut self,
        dev: usize,
        a: &Array,
        lo: usize,
        hi: usize,
        to_host: bool,
    ) -> Result<bool, Partial> {
        match self.find(dev, a, lo, hi) {
            Find::Partial(l, h) => Err((l, h)),
            Find::Absent => Ok(false),
            Find::Inside(_) => {
                if let Some(m) = self.maps.get(&(dev, a.id())) {
                    if to_host {
                        copy_rows(&m.dev, &m.host, lo, hi);
                    } else {
                        copy_rows(&m.host, &m.dev, lo, hi);
                    }
                }
                Ok(true)
            }
        }
    }

    /// The device copy of `a` on `dev`, if any part is present.
    pub fn device_copy(&self, dev: usize, a: &Array) -> Option<Array> {
        self.maps.get(&(dev, a.id())).map(|m| m.dev.clone())
    }

    /// The present sections of `a` on `dev` with their counts.
    pub fn sections(&self, dev: usize, a: &Array) -> Vec<Section> {
        self.maps
            .get(&(dev, a.id()))
            .map(|m| m.sections.clone())
            .unwrap_or_default()
    }

    /// Every present section, by device then array id.
    pub fn rows(&self) -> Vec<super::construct::PresentRow> {
        let mut v: Vec<_> = self
            .maps
            .iter()
            .flat_map(|(&(device, array), m)| {
                m.sections
                    .iter()
                    .map(move |s| super::construct::PresentRow {
                        device,
                        array,
                        lo: s.lo,
                        hi: s.hi,
                        rows: m.host.shape()[0],
                        structured: s.structured,
                        dynamic: s.dynamic,
                    })
            })
            .collect();
        v.sort_by_key(|r| (r.device, r.array, r.lo));
        v
    }

    /// Drop everything (a fresh device state).
    pub fn clear(&mut self) {
        self.maps.clear();
    }
}
