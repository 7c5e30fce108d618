//! What the bodies of the writer's helper functions (`frem`, `exact32`)
//! share: a structured selection written while a closure builds the
//! taken branch.

use super::spv;
use super::types::Module;
use rspirv::spirv::{SelectionControl, Word};
use std::cell::{Cell, RefCell};

/// `if c { then() } else { v }` as a structured selection, the value of
/// type `ty` a phi after it; `cur` is the block being written, which
/// `then` may move on.
pub(super) fn when(
    m: &RefCell<&mut Module>,
    cur: &Cell<Word>,
    (ty, control): (Word, SelectionControl),
    c: Word,
    v: Word,
    then: impl FnOnce() -> Word,
) -> Word {
    let pre = cur.get();
    let (tl, merge) = {
        let mut m = m.borrow_mut();
        let (tl, merge) = (m.b.id(), m.b.id());
        spv(m.b.selection_merge(merge, control));
        spv(m.b.branch_conditional(c, tl, merge, []));
        spv(m.b.begin_block(Some(tl)));
        (tl, merge)
    };
    cur.set(tl);
    let tv = then();
    let tend = cur.get();
    let mut m = m.borrow_mut();
    spv(m.b.branch(merge));
    spv(m.b.begin_block(Some(merge)));
    cur.set(merge);
    spv(m.b.phi(ty, None, [(tv, tend), (v, pre)]))
}
