//! The stack the recursive passes run on. Expression trees are bounded
//! ([`crate::MAX_EXPR_DEPTH`]), but a flat chain of 10,000 operators is a
//! tree 10,000 deep, and every pass over it (checking, lowering, the
//! interpreter, the kernel compiler) recurses that deep: more than the
//! 2 MiB of a spawned thread. The entry points switch to a large stack
//! segment (`stacker`: mapped, so only the pages used are committed)
//! unless the one they run on has room left.

/// Room an entry point wants left on its stack before it starts.
pub const RED_ZONE: usize = 32 << 20;
/// The size of the segment it switches to otherwise.
pub const SEGMENT: usize = 256 << 20;

/// Run `f` on a stack with at least [`RED_ZONE`] bytes left.
pub fn large<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Room a script function call wants left before it runs its body.
pub const CALL_RED_ZONE: usize = 4 << 20;
/// The segment a call switches to otherwise: deep recursion in a script
/// (as deep as the engine's call-depth limit allows) goes on in segments of
/// this size, one after another.
pub const CALL_SEGMENT: usize = 64 << 20;

/// Run a script call's body `f` with at least [`CALL_RED_ZONE`] bytes of
/// stack left (a check of the stack pointer; a new segment when short).
#[inline]
pub fn for_call<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(CALL_RED_ZONE, CALL_SEGMENT, f)
}
