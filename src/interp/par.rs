//! Plain host loops on several threads: a compiled `for` loop whose
//! iterations the JIT's test ([`host_jit::par`]) finds independent when it
//! starts runs its range in chunks on the machine's threads, each chunk
//! with its own copy of the frame's scalars, integer reductions combined
//! after. Only where no operation, time or progress limit is set (such a
//! limit stops a run at the exact operation, on one thread; async work
//! held back behind running work is submitted before the loop instead of
//! during it) and where the loop has enough turns to pay for the threads.

use super::machine::Ctx;
use super::native::threads;
use super::phases;
use super::scalar::{bits_to_value, value_to_bits};
use super::spread::{chunks, threaded, Globals, Spread};
use super::value::{Frame, R};
use host_jit::par::{Leaf, ParTest, Plan};
use host_jit::runtime::ArrDesc;
use host_jit::{ParUnit, Site};
use lang::{Scalar, Span};

/// Turns of the innermost loops below which a loop stays on one thread:
/// starting the threads costs about as much.
const WORK: u128 = 1 << 16;

/// What a compiled loop needs to run on threads.
pub struct ParRun<'a> {
    pub unit: &'a ParUnit,
    pub span: Span,
    pub scalars: &'a [usize],
    pub arrays: &'a [(usize, Scalar, u8)],
    pub sites: &'a [Site],
}

impl ParRun<'_> {
    /// Run the loop on several threads when its test allows (the arrays
    /// described by `descs`, from `handles`); None: run it in order.
    pub fn run(
        &self,
        handles: &[stdlib::Array],
        descs: &[ArrDesc],
        fr: &mut Frame,
        cx: &mut Ctx,
    ) -> Option<R<()>> {
        let n = threads();
        if n < 2 || !cx.unlimited() {
            return None;
        }
        let test = &self.unit.test;
        let (plan, chunks, starts) = {
            let top = cx.globals.as_ref().map(|g| &g.s[..]);
            let read = reader(fr, top);
            // The turns first: most loops that start often are short.
            if test.work(&read)? < WORK {
                return None;
            }
            let plan = apart(test, self.arrays, handles, &read)?;
            let count = (plan.end as i128 - plan.lo as i128 + 1) as u128;
            let chunks = chunks(plan.lo, plan.end, plan.work / count);
            // Each chunk's first value of every generator state the loop
            // steps.
            let mut starts: Vec<(usize, Vec<u64>)> = Vec::new();
            if !test.recurrences.is_empty() {
                let steps = test.steps(&read)?;
                for (r, per) in test.recurrences.iter().zip(steps) {
                    let bits = match top {
                        None => *fr.s.get(r.slot)?,
                        Some(g) => *g.get(r.slot)?,
                    };
                    let v = bits_to_value(r.ty, bits).as_i128()?;
                    let mut firsts = Vec::with_capacity(chunks.len());
                    for c in &chunks {
                        let turns = (c.0 as i128 - plan.lo as i128) as u128;
                        let x = r.jump(v, turns.checked_mul(per)?)?;
                        firsts.push(value_to_bits(lang::Value::I64(x as i64), r.ty));
                    }
                    starts.push((r.slot, firsts));
                }
            }
            (plan, chunks, starts)
        };
        let n = n.min(chunks.len());
        if n < 2 {
            return None;
        }
        let top: Option<Vec<u64>> = cx.globals.as_ref().map(|g| g.s.clone());
        let spread = Spread {
            span: self.span,
            entry: self.unit.entry,
            scalars: self.scalars,
            reductions: &test.reductions,
            sites: self.sites,
            globals: match &top {
                None => Globals::Own,
                Some(g) => Globals::Copy(g),
            },
            starts: &starts,
        };
        cx.submit_held();
        let t0 = phases::clock();
        let r = threaded(&spread, &[plan.lo, plan.end], &chunks, n, descs, fr, cx);
        phases::native(t0);
        phases::spread(t0);
        cx.reset_check();
        Some(r)
    }
}

/// A reader of the frame's scalars (and the top-level ones, `top`, when
/// the loop is in a function) for a test, by type.
pub fn reader<'a>(
    fr: &'a Frame,
    top: Option<&'a [u64]>,
) -> impl Fn(Leaf, Scalar) -> Option<i128> + 'a {
    move |leaf: Leaf, t: Scalar| {
        let bits = match (leaf, top) {
            (Leaf::Slot(s), _) | (Leaf::Global(s), None) => *fr.s.get(s)?,
            (Leaf::Global(s), Some(g)) => *g.get(s)?,
        };
        bits_to_value(t, bits).as_i128()
    }
}

/// Whether `test` finds the iterations apart at the frame's values
/// (`read`) and the arrays' shapes and identities (`handles`, in the order
/// of `arrays`): two names of one array are tested as one.
pub fn apart(
    test: &ParTest,
    arrays: &[(usize, Scalar, u8)],
    handles: &[stdlib::Array],
    read: &dyn Fn(Leaf, Scalar) -> Option<i128>,
) -> Option<Plan> {
    let handle = |slot: usize| {
        let k = arrays.iter().position(|a| a.0 == slot)?;
        handles.get(k)
    };
    let shape = |slot: usize| Some(handle(slot)?.shape().to_vec());
    let id = |slot: usize| Some(handle(slot)?.id());
    test.plan(read, &shape, &id)
}
