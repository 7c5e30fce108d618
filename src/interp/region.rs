//! Boxes of an array, as data clauses and `update` name them: per axis a
//! half-open range `lo..hi`. A box whose trailing axes are all whole is a
//! *row section* (rows `lo..hi` of the leading axis, one contiguous run of
//! elements); any other box is a set of equally long contiguous runs, one
//! per index of the axes before its last cut axis ([`Region::runs`]).

/// A box of an array of a known shape (the shape is passed to the methods
/// that need it; a region never outlives its array's shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// Rows `lo..hi` of the leading axis.
    pub lo: usize,
    pub hi: usize,
    /// The ranges of axes 1.. (all of them) when one is not the whole
    /// axis; empty for a row section. Kept in that normal form
    /// ([`Region::new`]), so equal boxes are equal values and a row section
    /// allocates nothing.
    pub inner: Vec<(usize, usize)>,
}

/// Boxes of more cells than this (after coordinate compression) are not
/// tested for coverage by a union of boxes ([`covers`]).
const COVER_CELLS: usize = 1 << 20;

impl Region {
    /// Rows `lo..hi` of the leading axis, every other axis whole.
    pub fn rows(lo: usize, hi: usize) -> Region {
        Region {
            lo,
            hi,
            inner: Vec::new(),
        }
    }

    /// The whole of an array of `shape`.
    pub fn whole(shape: &[usize]) -> Region {
        Region::rows(0, shape.first().copied().unwrap_or(0))
    }

    /// The box of `axes` (leading axis first; axes past the list whole) of
    /// an array of `shape`.
    pub fn new(shape: &[usize], axes: &[(usize, usize)]) -> Region {
        let dim = |k: usize| shape.get(k).copied().unwrap_or(0);
        let (lo, hi) = axes.first().copied().unwrap_or((0, dim(0)));
        let cut = axes
            .iter()
            .enumerate()
            .skip(1)
            .any(|(k, &r)| r != (0, dim(k)));
        let inner = if cut {
            (1..shape.len())
                .map(|k| axes.get(k).copied().unwrap_or((0, dim(k))))
                .collect()
        } else {
            Vec::new()
        };
        Region { lo, hi, inner }
    }

    /// Are all axes past the leading one whole?
    pub fn is_rows(&self) -> bool {
        self.inner.is_empty()
    }

    /// The range of axis `k` of an array of `shape`.
    pub fn axis(&self, k: usize, shape: &[usize]) -> (usize, usize) {
        if k == 0 {
            (self.lo, self.hi)
        } else {
            self.inner
                .get(k - 1)
                .copied()
                .unwrap_or((0, shape.get(k).copied().unwrap_or(0)))
        }
    }

    /// Does `self` hold every element of `o`? (An empty `o` lies inside a
    /// box that holds its corner ranges, as a row section of no rows does.)
    pub fn contains(&self, o: &Region, shape: &[usize]) -> bool {
        if self.is_rows() && o.is_rows() {
            return self.lo <= o.lo && o.hi <= self.hi;
        }
        (0..shape.len().max(1)).all(|k| {
            let (a, b) = (self.axis(k, shape), o.axis(k, shape));
            a.0 <= b.0 && b.1 <= a.1
        })
    }

    /// Do `self` and `o` share an element?
    pub fn overlaps(&self, o: &Region, shape: &[usize]) -> bool {
        if self.is_rows() && o.is_rows() {
            // As row sections always were: a section of no rows strictly
            // inside a present one lies inside it (`contains`, asked first).
            return self.lo < o.hi && o.lo < self.hi;
        }
        (0..shape.len().max(1)).all(|k| {
            let (a, b) = (self.axis(k, shape), o.axis(k, shape));
            a.0.max(b.0) < a.1.min(b.1)
        })
    }

    /// The number of elements.
    pub fn len(&self, shape: &[usize]) -> usize {
        (0..shape.len().max(1))
            .map(|k| {
                let (l, h) = self.axis(k, shape);
                h.saturating_sub(l)
            })
            .product()
    }

    /// `[lo:count, ..]` as a clause writes it, through the last axis that
    /// is not whole (whole axes before it as `:`): `[3:4]`, `[0:8, 2:1]`.
    pub fn clause_text(&self, shape: &[usize]) -> String {
        let dim = |k: usize| shape.get(k).copied().unwrap_or(0);
        let last = self
            .inner
            .iter()
            .enumerate()
            .rposition(|(k, &r)| r != (0, dim(k + 1)))
            .map_or(0, |k| k + 1);
        let mut s = format!("[{}:{}", self.lo, self.hi.saturating_sub(self.lo));
        for &(l, h) in &self.inner[..last] {
            s.push_str(&format!(", {l}:{}", h.saturating_sub(l)));
        }
        s.push(']');
        s
    }

    /// `[lo..hi, ..]`, every axis.
    pub fn range_text(&self, shape: &[usize]) -> String {
        let axes: Vec<String> = (0..shape.len().max(1))
            .map(|k| {
                let (l, h) = self.axis(k, shape);
                format!("{l}..{h}")
            })
            .collect();
        format!("[{}]", axes.join(", "))
    }

    /// `rows lo..hi` for a row section, else `box [lo..hi, ..]` (every
    /// axis).
    pub fn describe(&self) -> String {
        if self.is_rows() {
            format!("rows {}..{}", self.lo, self.hi)
        } else {
            let axes: Vec<String> = std::iter::once((self.lo, self.hi))
                .chain(self.inner.iter().copied())
                .map(|(l, h)| format!("{l}..{h}"))
                .collect();
            format!("box [{}]", axes.join(", "))
        }
    }

    /// The contiguous runs of the box's elements in an array of `shape`
    /// stored row-major: `(first element, elements)`, in increasing order,
    /// all of the same length. A row section is one run; an empty box none.
    pub fn runs(&self, shape: &[usize]) -> Runs {
        let rank = shape.len().max(1);
        let axes: Vec<(usize, usize)> = (0..rank).map(|k| self.axis(k, shape)).collect();
        let mut strides = vec![1usize; rank];
        for k in (0..rank.saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * shape.get(k + 1).copied().unwrap_or(0);
        }
        // The last axis that is cut: everything after it is whole, so one
        // run spans its range times the elements behind it.
        let dim = |k: usize| shape.get(k).copied().unwrap_or(0);
        let k = (1..rank)
            .rev()
            .find(|&k| axes[k] != (0, dim(k)))
            .unwrap_or(0);
        let empty = axes.iter().any(|&(l, h)| h <= l);
        Runs {
            len: (axes[k].1.saturating_sub(axes[k].0)) * strides[k],
            base: axes[k].0 * strides[k],
            idx: axes[..k].iter().map(|&(l, _)| l).collect(),
            outer: axes[..k].to_vec(),
            strides: strides[..k].to_vec(),
            done: empty,
        }
    }
}

/// The runs of a box ([`Region::runs`]).
pub struct Runs {
    /// Elements per run.
    pub len: usize,
    /// Offset of a run inside its outer index: the cut axis's start.
    base: usize,
    /// The current index of each outer axis, and their ranges and strides.
    idx: Vec<usize>,
    outer: Vec<(usize, usize)>,
    strides: Vec<usize>,
    done: bool,
}

impl Runs {
    /// How many runs there are in all.
    pub fn count(&self) -> usize {
        if self.done {
            return 0;
        }
        self.outer
            .iter()
            .map(|&(l, h)| h.saturating_sub(l))
            .product()
    }
}

impl Iterator for Runs {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        if self.done {
            return None;
        }
        let start = self
            .idx
            .iter()
            .zip(&self.strides)
            .map(|(i, s)| i * s)
            .sum::<usize>()
            + self.base;
        // Advance the outer index, last axis fastest.
        self.done = true;
        for j in (0..self.idx.len()).rev() {
            self.idx[j] += 1;
            if self.idx[j] < self.outer[j].1 {
                self.done = false;
                break;
            }
            self.idx[j] = self.outer[j].0;
        }
        Some((start, self.len))
    }
}

/// The element copies that move box `src` of an array of `src_shape` into
/// box `dst` of one of `dst_shape`, elements paired in row-major order (the
/// boxes hold the same count): `(dst element, src element, elements)`
/// pieces, each contiguous on both sides. Where the two boxes' runs are cut
/// differently (a column into a row), a piece ends at the nearer cut.
pub fn paired_runs(
    dst: (&Region, &[usize]),
    src: (&Region, &[usize]),
) -> Vec<(usize, usize, usize)> {
    let (d, s) = (dst.0.runs(dst.1), src.0.runs(src.1));
    let mut out = Vec::with_capacity(Runs::count(&d).max(Runs::count(&s)));
    let (mut d, mut s) = (d.peekable(), s.peekable());
    let (mut dk, mut sk) = (0, 0);
    while let (Some(&(da, dn)), Some(&(sa, sn))) = (d.peek(), s.peek()) {
        let n = (dn - dk).min(sn - sk);
        if n > 0 {
            out.push((da + dk, sa + sk, n));
        }
        dk += n;
        sk += n;
        if dk == dn {
            d.next();
            dk = 0;
        }
        if sk == sn {
            s.next();
            sk = 0;
        }
    }
    out
}

/// Do the `boxes` together hold every element of an array of `shape`?
/// (Coordinate compression: the boxes' bounds cut each axis into
/// intervals, and every cell of that grid must lie in some box.) False when
/// the grid is too large to test.
pub fn covers<'a>(boxes: impl Iterator<Item = &'a Region> + Clone, shape: &[usize]) -> bool {
    let rank = shape.len().max(1);
    let dim = |k: usize| shape.get(k).copied().unwrap_or(0);
    if (0..rank).any(|k| dim(k) == 0) {
        return true;
    }
    let mut cuts: Vec<Vec<usize>> = Vec::with_capacity(rank);
    for k in 0..rank {
        let mut c = vec![0, dim(k)];
        for b in boxes.clone() {
            let (l, h) = b.axis(k, shape);
            c.push(l.min(dim(k)));
            c.push(h.min(dim(k)));
        }
        c.sort_unstable();
        c.dedup();
        cuts.push(c);
    }
    let cells = cuts
        .iter()
        .try_fold(1usize, |n, c| n.checked_mul(c.len() - 1));
    let Some(cells) = cells.filter(|&n| n <= COVER_CELLS) else {
        return false;
    };
    let mut covered = vec![false; cells];
    for b in boxes {
        // The box's interval indices on each axis.
        let spans: Vec<(usize, usize)> = (0..rank)
            .map(|k| {
                let (l, h) = b.axis(k, shape);
                let at = |v: usize| cuts[k].partition_point(|&c| c < v.min(dim(k)));
                (at(l), at(h))
            })
            .collect();
        if spans.iter().any(|&(l, h)| h <= l) {
            continue;
        }
        let mut idx: Vec<usize> = spans.iter().map(|&(l, _)| l).collect();
        'cells: loop {
            let cell = idx
                .iter()
                .zip(&cuts)
                .fold(0usize, |n, (&i, c)| n * (c.len() - 1) + i);
            if let Some(c) = covered.get_mut(cell) {
                *c = true;
            }
            let mut k = rank;
            loop {
                if k == 0 {
                    break 'cells;
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < spans[k].1 {
                    break;
                }
                idx[k] = spans[k].0;
            }
        }
    }
    covered.iter().all(|&c| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(r: &Region, shape: &[usize]) -> Vec<(usize, usize)> {
        let v: Vec<_> = r.runs(shape).collect();
        assert_eq!(v.len(), r.runs(shape).count());
        v
    }

    #[test]
    fn a_row_section_is_one_run_and_stays_in_normal_form() {
        let s = [10, 4];
        let r = Region::new(&s, &[(2, 5), (0, 4)]);
        assert_eq!(r, Region::rows(2, 5));
        assert_eq!(runs(&r, &s), [(8, 12)]);
        assert_eq!(r.clause_text(&s), "[2:3]");
    }

    #[test]
    fn columns_and_blocks_are_runs_per_row() {
        let s = [4, 6];
        let col = Region::new(&s, &[(0, 4), (5, 6)]);
        assert_eq!(runs(&col, &s), [(5, 1), (11, 1), (17, 1), (23, 1)]);
        assert_eq!(col.clause_text(&s), "[0:4, 5:1]");
        assert_eq!(col.range_text(&s), "[0..4, 5..6]");
        let b = Region::new(&s, &[(1, 3), (2, 4)]);
        assert_eq!(runs(&b, &s), [(8, 2), (14, 2)]);
        assert_eq!(b.len(&s), 4);
    }

    #[test]
    fn whole_trailing_axes_merge_into_longer_runs() {
        let s = [2, 3, 4];
        // a[:, 1:2] : two runs of 2 rows of 4.
        let r = Region::new(&s, &[(0, 2), (1, 3)]);
        assert_eq!(runs(&r, &s), [(4, 8), (16, 8)]);
        assert_eq!(r.clause_text(&s), "[0:2, 1:2]");
        // a[0:2, :, 1:1]: one element per (i, j).
        let r = Region::new(&s, &[(0, 2), (0, 3), (1, 2)]);
        assert_eq!(runs(&r, &s).len(), 6);
        assert_eq!(runs(&r, &s)[..2], [(1, 1), (5, 1)]);
    }

    #[test]
    fn empty_boxes_have_no_runs() {
        let s = [4, 6];
        let r = Region::new(&s, &[(0, 4), (3, 3)]);
        assert!(runs(&r, &s).is_empty());
        assert!(!r.overlaps(&Region::whole(&s), &s));
    }

    #[test]
    fn containment_and_overlap() {
        let s = [8, 8];
        let big = Region::new(&s, &[(0, 8), (0, 4)]);
        let inside = Region::new(&s, &[(2, 4), (1, 3)]);
        let across = Region::new(&s, &[(2, 4), (3, 6)]);
        let apart = Region::new(&s, &[(0, 8), (4, 8)]);
        assert!(big.contains(&inside, &s));
        assert!(!big.contains(&across, &s) && big.overlaps(&across, &s));
        assert!(!big.overlaps(&apart, &s));
        assert!(Region::whole(&s).contains(&across, &s));
        assert!(Region::rows(0, 4).contains(&across, &s));
        assert!(!Region::rows(0, 3).contains(&across, &s));
    }

    #[test]
    fn unions_cover_the_array() {
        let s = [4, 6];
        let l = Region::new(&s, &[(0, 4), (0, 3)]);
        let r = Region::new(&s, &[(0, 4), (3, 6)]);
        assert!(covers([&l, &r].into_iter(), &s));
        assert!(!covers([&l].into_iter(), &s));
        let top = Region::rows(0, 2);
        let bl = Region::new(&s, &[(2, 4), (0, 5)]);
        assert!(!covers([&top, &bl].into_iter(), &s));
        assert!(covers([&top, &bl, &r].into_iter(), &s));
    }
}
