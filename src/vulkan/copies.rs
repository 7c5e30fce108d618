//! The storage of a compute construct's hidden arrays of private copies
//! (`lang::check::private_arrays`: made just before the construct, which
//! takes each with `create`, or `copyin` for `firstprivate`). A launch
//! whose lanes keep their copies as function-local arrays
//! (`compiler::private_copies::local_sizes`) never reads or writes the
//! hidden array, so its `create` makes a four-byte placeholder instead of
//! device memory of one copy per iteration (miniWeather's three arrays of
//! 64 MiB at each of 1,806 launches); any other `create` of one leaves its
//! storage uncleared until the first launch that may read it clears it.

use crate::interp::error;
use crate::interp::machine::CConstruct;
use crate::interp::queue::QueueId;
use crate::interp::value::{Frame, R};
use std::cell::Cell;
use std::rc::Rc;
use vk_runtime::Buffer;

/// Lanes hold small private copies as local arrays, unless
/// `ACCL_LOCAL_COPIES=0` (a knob for measuring).
pub fn local_copies_on() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("ACCL_LOCAL_COPIES").is_none_or(|v| v != "0"))
}

/// The ids of the hidden arrays of `private` copies that construct `c`'s
/// kernel uses (the construct creates them), and of those the ones whose
/// launch will keep every copy in its lanes (with bounds-check mode
/// `checks`, none).
pub fn hidden_copies(c: &CConstruct, fr: &Frame, checks: bool) -> (Vec<u64>, Vec<u64>) {
    let Some(code) = c.device.as_deref() else {
        return (Vec::new(), Vec::new());
    };
    let Ok(kernel) = &code.kernel else {
        return (Vec::new(), Vec::new());
    };
    let id = |a: compiler::kir::ArrayH| {
        let host = kernel.arrays[a].host.index();
        fr.a.get(host)?.as_ref().map(|x| x.id())
    };
    let ids: Vec<u64> = kernel
        .private_copies
        .iter()
        .filter(|p| !p.first)
        .filter_map(|p| id(p.array))
        .collect();
    // A launch may take the `auto` loop's other kernel instead: keep the
    // storage (the two kernels' choices are not compared here).
    if ids.is_empty() || code.variant.is_some() || !local_copies_on() {
        return (ids, Vec::new());
    }
    let dims: Vec<Option<Vec<u64>>> = kernel
        .arrays
        .iter()
        .map(|(_, ap)| {
            let a = fr.a.get(ap.host.index())?.as_ref()?;
            Some(a.shape().iter().map(|&d| d as u64).collect())
        })
        .collect();
    let local = compiler::private_copies::local_sizes(kernel, checks, |i| dims.get(i)?.as_deref());
    let placeholders = kernel
        .private_copies
        .iter()
        .zip(local)
        .filter(|(p, n)| *n > 0 && !p.first)
        .filter_map(|(p, _)| id(p.array))
        .collect();
    (ids, placeholders)
}

/// A bound array of private copies left uncleared: its binding index and
/// the flag its storage shares ([`super::storage::SecBuf::unzeroed`]).
pub type Unzeroed = (usize, Rc<Cell<bool>>);

/// Before a launch under `local` (the spec's `local_copies`): clear the
/// bound arrays of private copies left uncleared (`unzeroed`) that it may
/// read; a placeholder (`placeholders`, by binding index) it may read is
/// an error, which [`hidden_copies`] makes sure never happens.
#[allow(clippy::too_many_arguments)]
pub fn before_launch(
    d: &mut super::device::DevState,
    queue: QueueId,
    c: &CConstruct,
    kernel: &compiler::Kernel,
    local: [u8; compiler::private_copies::LOCAL_ARRAYS],
    bound: &[(Buffer, compiler::ArrayArgs, u64)],
    (unzeroed, placeholders): (&[Unzeroed], &[usize]),
) -> R<()> {
    let is_local = |i: usize| {
        kernel
            .private_copies
            .iter()
            .take(compiler::private_copies::LOCAL_ARRAYS)
            .position(|p| p.array.index() == i)
            .is_some_and(|k| local[k] > 0)
    };
    if let Some(&i) = placeholders.iter().find(|&&i| !is_local(i)) {
        return Err(error::internal(
            c.span,
            &format!(
                "the kernel reads `{}`, whose copies were to stay in its lanes",
                kernel.arrays[lang::arena::Handle::new(i)].name
            ),
        ));
    }
    for (i, flag) in unzeroed {
        if !is_local(*i) && flag.get() {
            d.zero(queue, &bound[*i].0).map_err(|f| {
                error::fault(c.span, "the kernel", &f, |m| error::internal(c.span, m))
            })?;
            flag.set(false);
        }
    }
    Ok(())
}
