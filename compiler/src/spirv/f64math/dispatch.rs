//! Which algorithm computes each device function: the one place that
//! names them all, for the writer ([`super::emit`]) and the unit tests.

use super::{exp_log, trig, Fun, Ops, F};

/// The body of `f` on `a` (its arity's arguments).
pub(super) fn body<'a, O: Ops>(f: Fun, a: &[F<'a, O>]) -> F<'a, O> {
    match f {
        Fun::Exp => exp_log::exp(a[0]),
        Fun::Expo2 => exp_log::expo2(a[0]),
        Fun::Exp2 => exp_log::exp2(a[0]),
        Fun::Log => exp_log::log(a[0]),
        Fun::Log2 => exp_log::log2(a[0]),
        Fun::Pow => exp_log::pow(a[0], a[1]),
        Fun::Sinh => exp_log::sinh(a[0]),
        Fun::Cosh => exp_log::cosh(a[0]),
        Fun::Tanh => exp_log::tanh(a[0]),
        Fun::Trig => trig::trig(a[0], a[1]),
        Fun::Asin => trig::asin(a[0]),
        Fun::Acos => trig::acos(a[0]),
        Fun::Atan => trig::atan(a[0]),
        Fun::Atan2 => trig::atan2(a[0], a[1]),
    }
}
