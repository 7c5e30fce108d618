//! `accl bench device --only private`: a `parallel loop` with a small
//! private array against the same loops computing each value where it is
//! used, and against the same arithmetic on scalar locals with no loop
//! (what the array costs over registers; arrays cannot be declared inside
//! a construct), one iteration per lane (`gang vector`: a loop of 16 turns
//! would otherwise be spread over the lanes), at the default vector length,
//! at 64 and at 256, where a workgroup's copies need 256 x the section.

use super::{median, Bench, Sizes};

/// Elements of the private array (f32).
const LEN: usize = 16;

/// The kernel of one case: every iteration fills its copy from its index
/// and sums products of its elements, so nothing folds away.
fn array_src(vl: &str) -> String {
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
fn loops_src(vl: &str) -> String {
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
fn locals_src(vl: &str) -> String {
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

pub(super) fn private_arrays(
    b: &mut Bench,
    z: &Sizes,
    _: &vk_runtime::AdapterInfo,
) -> Result<(), String> {
    let n = z.private;
    b.eval(&format!(
        "let n = {n}; let out = zeros(f32, n); let tmp = zeros(f32, {LEN}); \
         enter data create(out);"
    ))?;
    for (vl, label) in [
        ("", "default"),
        ("vector_length(64)", "vl 64"),
        ("vector_length(256)", "vl 256"),
    ] {
        let arr = median(b.kernel_ns(&array_src(vl))?);
        // Every element: sum over k of (i + k)(i + 15 - k).
        b.eval(&format!(
            "update self(out); let last = {n} - 1; let want = 0.0; \
             for k in 0..{LEN} {{ want += ((last + k) as f64) * ((last + {} - k) as f64); }} \
             assert(abs(out[last] as f64 - want) <= 1e-5 * want, \"private bench\");",
            LEN - 1
        ))?;
        let lps = median(b.kernel_ns(&loops_src(vl))?);
        let loc = median(b.kernel_ns(&locals_src(vl))?);
        outln!(
            "private f32[{LEN}]  {n} it, {label:7}: {:8.3} ms private array, \
             {:8.3} ms same loops without it, {:8.3} ms scalar locals",
            arr / 1e6,
            lps / 1e6,
            loc / 1e6,
        );
    }
    b.eval("exit data delete(out);")?;
    Ok(())
}
