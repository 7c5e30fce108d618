//! Plain host loops on several threads: a compiled `for` loop of host code
//! (not a compute construct) whose iterations are independent runs its
//! range in chunks on the machine's threads, with the results of running
//! it in order, as C compilers' auto-parallelisers do for loops they prove
//! independent (`-parallel`, `-Mconcur`).
//!
//! Part of the proof is static ([`ParTest::of`]): the body
//! - leaves the loop only by finishing a turn (no `break` of this loop, no
//!   `return`),
//! - assigns no top-level variable and calls no function that does
//!   (transitively), so what callees read cannot change meanwhile; the one
//!   exception is a C-style generator's state ([`Recurrence`]), which each
//!   chunk starts at the value the loop in order reaches there,
//! - assigns no scalar declared outside it except integer reductions
//!   (`s += e`, `s -= e`, `s *= e`, `s = s + e`, `s = min(s, e)`, `&`, `|`,
//!   `^`), whose variable it reads nowhere else: integer arithmetic wraps,
//!   so partial results combined in any order give the same bits (float
//!   sums would not, and stay in order),
//! - and indexes every array it writes, at every access of that array,
//!   with integer expressions affine in the loop counters: sums,
//!   differences and products (one factor free of counters) of counters,
//!   constants, scalars the loop does not change, integer casts, `min`
//!   and `max` of values free of counters, and `let`s of the body.
//!
//! The rest is decided when the loop starts ([`ParTest::plan`]), from the
//! values of those scalars, the loops' bounds (the counters of inner loops
//! need bounds the loop does not change) and the written arrays' shapes.
//! Every index node is evaluated at the corners of the counters' box, so
//! no intermediate value leaves its type (an affine value is largest and
//! smallest at corners) and each access's flat element index is known as
//! `c0 + C * p + sum(c_j * v_j)` for the parallel counter `p` and inner
//! counters `v_j`. Distinct iterations of `p` then touch distinct elements
//! of an array when every access of it has the same `C` and the other
//! terms (and the differences of the accesses' bases) split into
//! multiples of some `G = K' * C` (`K'` at least the number of iterations)
//! and a rest whose values, over all accesses, lie in one window of fewer
//! than `|C|` elements: the "digit" `floor((index - low) / C) mod K'` of an
//! element is then `p mod K'`, different for every iteration. That is how
//! row-major initialisation loops index (`a[k * nx + i]` over `i < nx`,
//! `state[v * nz * nx + k * nx + i]`, a field's planes picked by
//! constants). Two names of one array are tested as one, all their
//! accesses together; anything the test cannot decide runs the loop in
//! order. A compute construct's nest on the host backend uses the same
//! test where the simpler proof of `crate::gang` does not hold.

mod build;
#[cfg(test)]
mod tests;

use crate::plan::Why;
use lang::hir::ReductionOp;
use lang::{Scalar, Span};

/// A node of an index or bound expression, as the test evaluates it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// Loop counter `k` ([`ParTest::loops`]).
    Var(usize),
    /// A scalar of the loop's frame (by slot) that the loop does not change.
    Slot(usize),
    /// A top-level variable (by slot of the top-level frame).
    Global(usize),
    Const(i128),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Neg(u32),
    Cast(u32),
    /// `min`/`max` of two values free of counters (a trip count's
    /// `max(hi - lo, 0)`).
    Min(u32, u32),
    Max(u32, u32),
}

/// Where a scalar the test reads lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leaf {
    /// A slot of the frame running the loop.
    Slot(usize),
    /// A slot of the top-level frame.
    Global(usize),
}

/// How to decide, when a loop starts, whether its iterations may run on
/// several threads.
#[derive(Debug, Clone, PartialEq)]
pub struct ParTest {
    /// Nodes and each one's type (`None`: an integer literal, checked as
    /// `i64`).
    nodes: Vec<(Node, Option<Scalar>)>,
    /// Each counter's first bound, second bound and whether the range
    /// includes the second; the parallel loop's first.
    loops: Vec<(u32, u32, bool)>,
    /// Per array the loop writes (its frame slot): each access's index
    /// list (root nodes).
    written: Vec<(usize, Vec<Vec<u32>>)>,
    /// Per array the loop only reads: each access's index list, or None
    /// when one is not affine (it must then not be a second name of an
    /// array written).
    read_only: Vec<(usize, Option<Vec<Vec<u32>>>)>,
    /// Every array the loop touches, by frame slot.
    pub arrays: Vec<usize>,
    /// The integer reductions: operator, frame slot and type.
    pub reductions: Vec<(ReductionOp, usize, Scalar)>,
    /// The top-level variables the functions it calls step as C's
    /// `rand()` steps its seed.
    pub recurrences: Vec<Recurrence>,
}

/// A top-level integer `g` that one function the loop calls steps by an
/// affine map modulo a power of two (`g = g * A + C`, or that `% M`):
/// a chunk's first value is the map's power for the steps before it, as
/// the jump-ahead of a linear congruential generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Recurrence {
    /// Its slot of the top-level frame.
    pub slot: usize,
    pub ty: Scalar,
    /// The function that steps it (by handle index).
    func: usize,
    a: u128,
    c: u128,
    /// The modulus, `2^modbits`.
    modbits: u32,
    /// For a signed `% M` step: `M`, which the first value must be below
    /// (and not negative).
    below: Option<u128>,
    /// Each call of the function: the counters of the counted loops
    /// around it, whose trip counts multiply its steps per turn.
    sites: Vec<Vec<usize>>,
}

impl Recurrence {
    /// The value after `n` steps from `v` (the variable's value as an
    /// integer); None when the step is not exact for `v`.
    pub fn jump(&self, v: i128, n: u128) -> Option<i128> {
        if let Some(m) = self.below {
            if v < 0 || v as u128 >= m {
                return None;
            }
        }
        let mask = u128::MAX >> (128 - self.modbits);
        let (mut a, mut c) = (self.a, self.c);
        // The map applied n times, by squaring: (ra, rc) so far.
        let (mut ra, mut rc) = (1u128, 0u128);
        let mut n = n;
        while n > 0 {
            if n & 1 == 1 {
                ra = ra.wrapping_mul(a) & mask;
                rc = (rc.wrapping_mul(a).wrapping_add(c)) & mask;
            }
            c = (c.wrapping_mul(a).wrapping_add(c)) & mask;
            a = a.wrapping_mul(a) & mask;
            n >>= 1;
        }
        let r = (ra.wrapping_mul(v as u128).wrapping_add(rc)) & mask;
        // Back to the type: the low bits, sign-extended for signed types.
        Some(match self.ty {
            Scalar::I32 => r as u32 as i32 as i128,
            Scalar::I64 => r as u64 as i64 as i128,
            _ => r as i128,
        })
    }
}

/// What the test decided: the parallel counter's first and last values
/// and about how many turns of the innermost loops the loop runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub lo: i64,
    pub end: i64,
    pub work: u128,
}

impl ParTest {
    /// About how many turns of the innermost loops the loop runs, at these
    /// values (as [`ParTest::plan`]'s `work`, without testing the
    /// accesses); None when a bound cannot be evaluated.
    pub fn work(&self, read: &dyn Fn(Leaf, Scalar) -> Option<i128>) -> Option<u128> {
        Some(
            self.trips(read)?
                .into_iter()
                .fold(1u128, |w, n| w.saturating_mul(n)),
        )
    }

    /// Each counter's first and last value (the last below the first when
    /// its loop has no turns), at these values.
    fn ranges(&self, read: &dyn Fn(Leaf, Scalar) -> Option<i128>) -> Option<Vec<(i128, i128)>> {
        self.loops
            .iter()
            .map(|&(lo, hi, inclusive)| {
                let lo = self.eval(lo, &[], read)?;
                let hi = self.eval(hi, &[], read)?;
                Some((lo, if inclusive { hi } else { hi - 1 }))
            })
            .collect()
    }

    /// Each loop's trip count, at these values.
    fn trips(&self, read: &dyn Fn(Leaf, Scalar) -> Option<i128>) -> Option<Vec<u128>> {
        let r = self.ranges(read)?;
        Some(
            r.iter()
                .map(|&(lo, end)| (end - lo + 1).max(0) as u128)
                .collect(),
        )
    }

    /// How many steps each of [`ParTest::recurrences`] takes per turn of
    /// the parallel loop, at these values (as [`ParTest::plan`]'s).
    pub fn steps(&self, read: &dyn Fn(Leaf, Scalar) -> Option<i128>) -> Option<Vec<u128>> {
        let trips = self.trips(read)?;
        self.recurrences
            .iter()
            .map(|r| {
                r.sites.iter().try_fold(0u128, |sum, site| {
                    let n = site
                        .iter()
                        .try_fold(1u128, |p, &k| p.checked_mul(trips[k]))?;
                    sum.checked_add(n)
                })
            })
            .collect()
    }
}

/// The most counters one index may use (the corners evaluated are 2^n).
const MAX_VARS: usize = 6;

impl ParTest {
    /// Whether the iterations are independent at these values: `read`
    /// gives a scalar's value (as its type), `shape` an array's extents
    /// and `id` its identity (by frame slot: two names of one array have
    /// one identity, and their accesses are tested together). None: run
    /// the loop in order (including when it has no turns).
    pub fn plan(
        &self,
        read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
        shape: &dyn Fn(usize) -> Option<Vec<usize>>,
        id: &dyn Fn(usize) -> Option<u64>,
    ) -> Option<Plan> {
        let ranges = self.ranges(read)?;
        if ranges.iter().any(|&(lo, end)| end < lo) {
            return None;
        }
        let (plo, pend) = ranges[0];
        let count = pend - plo + 1;
        if count < 2 {
            return None;
        }
        let work = ranges
            .iter()
            .map(|&(l, e)| (e - l + 1) as u128)
            .try_fold(1u128, |a, n| a.checked_mul(n))
            .unwrap_or(u128::MAX);
        for (a, _) in &self.written {
            let dims = shape(*a)?;
            let me = id(*a)?;
            // Every name of this array, written or read.
            let mut accesses: Vec<&Vec<u32>> = Vec::new();
            for (b, list) in &self.written {
                if id(*b)? == me {
                    accesses.extend(list);
                }
            }
            for (b, list) in &self.read_only {
                if id(*b)? == me {
                    accesses.extend(list.as_ref()?);
                }
            }
            let mut forms = Vec::with_capacity(accesses.len());
            for ix in accesses {
                if ix.len() != dims.len() {
                    return None;
                }
                // Row-major strides: the flat index is affine too.
                let mut flat = Affine::zero(ranges.len());
                let mut stride: i128 = 1;
                for (k, &n) in ix.iter().enumerate().rev() {
                    let f = self.affine(n, &ranges, read)?;
                    flat.add_scaled(&f, stride);
                    stride = stride.checked_mul(dims[k] as i128)?;
                }
                forms.push(flat);
            }
            if !disjoint(&forms, &ranges) {
                return None;
            }
        }
        Some(Plan {
            lo: i64::try_from(plo).ok()?,
            end: i64::try_from(pend).ok()?,
            work,
        })
    }

    /// Whether the loop writes the array in frame slot `slot`.
    pub fn writes(&self, slot: usize) -> bool {
        self.written.iter().any(|(s, _)| *s == slot)
    }

    /// Node `n`'s value with the counters at `point` (a counter not in
    /// `point` has no value); None when a node's value leaves its type.
    fn eval(
        &self,
        n: u32,
        point: &[i128],
        read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
    ) -> Option<i128> {
        let (node, ty) = self.nodes[n as usize];
        let v = match node {
            Node::Var(k) => *point.get(k)?,
            Node::Slot(s) => read(Leaf::Slot(s), ty?)?,
            Node::Global(s) => read(Leaf::Global(s), ty?)?,
            Node::Const(c) => c,
            Node::Add(a, b) => self.eval(a, point, read)? + self.eval(b, point, read)?,
            Node::Sub(a, b) => self.eval(a, point, read)? - self.eval(b, point, read)?,
            Node::Mul(a, b) => self
                .eval(a, point, read)?
                .checked_mul(self.eval(b, point, read)?)?,
            Node::Neg(a) => -self.eval(a, point, read)?,
            Node::Min(a, b) => self.eval(a, point, read)?.min(self.eval(b, point, read)?),
            Node::Max(a, b) => self.eval(a, point, read)?.max(self.eval(b, point, read)?),
            Node::Cast(a) => self.eval(a, point, read)?,
        };
        fits(v, ty).then_some(v)
    }

    /// Node `n` as an affine function of the counters over `ranges`, each
    /// node checked within its type at every corner of the counters it
    /// uses.
    fn affine(
        &self,
        n: u32,
        ranges: &[(i128, i128)],
        read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
    ) -> Option<Affine> {
        let used = self.vars_of(n);
        let lows: Vec<i128> = ranges.iter().map(|r| r.0).collect();
        for corner in 0u32..1 << used.len() {
            let mut point = lows.clone();
            for (bit, &k) in used.iter().enumerate() {
                if corner & (1 << bit) != 0 {
                    point[k] = ranges[k].1;
                }
            }
            self.eval(n, &point, read)?;
        }
        let c0 = self.eval(n, &lows, read)?;
        let mut f = Affine::zero(ranges.len());
        for &k in &used {
            if ranges[k].1 > ranges[k].0 {
                let mut point = lows.clone();
                point[k] += 1;
                f.coef[k] = self.eval(n, &point, read)? - c0;
            }
        }
        // The base at counter value 0, so `c0 + sum(coef * v)` holds.
        f.c0 = c0;
        for &k in &used {
            f.c0 = f.c0.checked_sub(f.coef[k].checked_mul(ranges[k].0)?)?;
        }
        Some(f)
    }

    /// The counters node `n` uses, sorted.
    fn vars_of(&self, n: u32) -> Vec<usize> {
        let mut out = Vec::new();
        vars(&self.nodes, n, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Why not, as an error.
pub fn refused<T>(span: Span, what: impl Into<String>) -> Result<T, Why> {
    Err(Why {
        span,
        what: what.into(),
    })
}

fn vars_count(nodes: &[(Node, Option<Scalar>)], n: u32) -> usize {
    let mut out = Vec::new();
    vars(nodes, n, &mut out);
    out.sort_unstable();
    out.dedup();
    out.len()
}

fn vars(nodes: &[(Node, Option<Scalar>)], n: u32, out: &mut Vec<usize>) {
    match nodes[n as usize].0 {
        Node::Var(k) => out.push(k),
        Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) | Node::Min(a, b) | Node::Max(a, b) => {
            vars(nodes, a, out);
            vars(nodes, b, out);
        }
        Node::Neg(a) | Node::Cast(a) => vars(nodes, a, out),
        Node::Slot(_) | Node::Global(_) | Node::Const(_) => {}
    }
}

/// Whether `v` is a value of type `t` (`None`: an integer literal, `i64`).
fn fits(v: i128, t: Option<Scalar>) -> bool {
    t.unwrap_or(Scalar::I64)
        .int_range()
        .is_some_and(|(lo, hi)| (lo..=hi).contains(&v))
}

/// `c0 + sum(coef[k] * v_k)`.
#[derive(Debug, Clone, PartialEq)]
struct Affine {
    c0: i128,
    coef: Vec<i128>,
}

impl Affine {
    fn zero(n: usize) -> Affine {
        Affine {
            c0: 0,
            coef: vec![0; n],
        }
    }

    fn add_scaled(&mut self, f: &Affine, s: i128) {
        self.c0 += f.c0 * s;
        for (a, b) in self.coef.iter_mut().zip(&f.coef) {
            *a += b * s;
        }
    }
}

/// Whether distinct values of counter 0 give every access of `forms`
/// distinct elements (the digit test of the module's comment).
fn disjoint(forms: &[Affine], ranges: &[(i128, i128)]) -> bool {
    let count = ranges[0].1 - ranges[0].0 + 1;
    let c = forms[0].coef[0];
    if c == 0 || forms.iter().any(|f| f.coef[0] != c) {
        return false;
    }
    let c = c.abs();
    // G: the gcd of every other coefficient, and every difference of two
    // accesses' bases, too large to be in the rest (a field's planes
    // picked by a counter or by constants).
    let limit = count.saturating_mul(c);
    let mut g: i128 = 0;
    for f in forms {
        let d = (f.c0 - forms[0].c0).abs();
        for &x in f.coef[1..].iter().chain([&d]) {
            if x.abs() >= limit {
                g = gcd(g, x.abs());
            }
        }
    }
    // The rest's coefficients; their terms' window, and the bases, which
    // may differ between accesses by multiples of G.
    if g != 0 && (g % c != 0 || g / c < count) {
        return false;
    }
    let base0 = forms[0].c0;
    let (mut low, mut high) = (i128::MAX, i128::MIN);
    for f in forms {
        let mut d = f.c0 - base0;
        if g != 0 {
            d = d.rem_euclid(g);
            if d > g / 2 {
                d -= g;
            }
        }
        let (mut lo, mut hi) = (d, d);
        for (k, &x) in f.coef.iter().enumerate().skip(1) {
            if g != 0 && x.abs() >= limit {
                continue;
            }
            let (a, b) = (x * ranges[k].0, x * ranges[k].1);
            lo += a.min(b);
            hi += a.max(b);
        }
        low = low.min(lo);
        high = high.max(hi);
    }
    high - low < c
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
