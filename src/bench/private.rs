//! The kernels of `accl bench device --only private`: a `parallel loop` with a small
//! private array against the same loops computing each value where it is
//! used, and against the same arithmetic on scalar locals with no loop
//! (what the array costs over registers; arrays cannot be declared inside
//! a construct), one iteration per lane (`gang vector`: a loop of 16 turns
//! would otherwise be spread over the lanes), at the default vector length,
//! at 64 and at 256, where a workgroup's copies need 256 x the section.

/// Elements of the private array (f32).
pub(super) const LEN: usize = 16;

/// The kernel of one case: every iteration fills its copy from its index
/// and sums products of its elements, so nothing folds away.
pub(super) fn array_src(vl: &str) -> String {
    let last = LEN - 1;
    format!(
        "parallel loop gang vector present(out) private(tmp) {vl} for i in 0..n {{
             for k in 0..{LEN} {{ tmp[k] = (i + k) as f32; }}
             let s = 0.0f32;
             for k in 0..{LEN} {{ s += tmp[k] * tmp[{last} - k]; }}
             out[i] = s;
         }}"
    )
}

/// The same loops with no array: each product computed where it is used.
pub(super) fn loops_src(vl: &str) -> String {
    let last = LEN - 1;
    format!(
        "parallel loop gang vector present(out) {vl} for i in 0..n {{
             let s = 0.0f32;
             for k in 0..{LEN} {{ s += ((i + k) as f32) * ((i + {last} - k) as f32); }}
             out[i] = s;
         }}"
    )
}

/// The same arithmetic on `LEN` scalar locals.
pub(super) fn locals_src(vl: &str) -> String {
    let fill: String = (0..LEN)
        .map(|k| format!("let t{k} = (i + {k}) as f32; "))
        .collect();
    let sum: String = (0..LEN)
        .map(|k| format!("s += t{k} * t{}; ", LEN - 1 - k))
        .collect();
    format!(
        "parallel loop gang vector present(out) {vl} for i in 0..n {{
             {fill}
             let s = 0.0f32;
             {sum}
             out[i] = s;
         }}"
    )
}

/// Host code asserting the last element of `out` (`n` iterations): the
/// sum over k of (i + k)(i + 15 - k), to f32's rounding.
pub(super) fn check_src(n: u64) -> String {
    format!(
        "update self(out); let last = {n} - 1; let want = 0.0; \
         for k in 0..{LEN} {{ want += ((last + k) as f64) * ((last + {} - k) as f64); }} \
         assert(abs(out[last] as f64 - want) <= 1e-5 * want, \"private bench\");",
        LEN - 1
    )
}
