//! Run-time diagnostics (codes `accl::run::*`), each with the span of the
//! failing expression.

use super::present::Fault;
use super::region::Region;
use super::wait::WaitStop;
use lang::{Diag, Span};

pub fn internal(span: Span, what: &str) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::internal",
            format!("internal interpreter error: {what}"),
            span,
            "here",
        )
        .with_help("this is a bug in accl; please report it with the script"),
    )
}

pub fn uninit() -> Box<Diag> {
    internal(
        Span::default(),
        "an array variable was read before it was set",
    )
}

pub fn div_by_zero(span: Span) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::division_by_zero",
            "integer division by zero",
            span,
            "the divisor is zero",
        )
        .with_help("check the divisor first, or divide floats (which give inf or NaN)"),
    )
}

pub fn out_of_bounds(ix: Span, whole: Span, axis: usize, k: i64, extent: usize) -> Box<Diag> {
    let mut d = Diag::error(
        "accl::run::index_out_of_bounds",
        format!("index {k} is out of bounds for axis {axis} of extent {extent}"),
        ix,
        format!("index {k}, extent {extent}"),
    );
    if whole != ix && !whole.is_empty() {
        d = d.with_label(whole, "in this access");
    }
    Box::new(d.with_help(format!("valid indices of axis {axis} are 0..{extent}")))
}

pub fn op_limit(span: Span, limit: u64) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::operation_limit",
            format!("the script ran more than {limit} operations"),
            span,
            "stopped here",
        )
        .with_help("the host set this limit (Engine::set_max_operations)"),
    )
}

pub fn aborted(span: Span) -> Box<Diag> {
    Box::new(Diag::error(
        "accl::run::aborted",
        "the script was stopped by the host",
        span,
        "stopped here",
    ))
}

pub fn array_limit(span: Span, bytes: i128, limit: usize) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::array_limit",
            format!("this array would take {bytes} bytes, more than the limit of {limit}"),
            span,
            "allocated here",
        )
        .with_help("the host set this limit (Engine::set_max_array_bytes)"),
    )
}

pub fn time_limit(span: Span, limit: std::time::Duration) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::time_limit",
            format!("the script ran longer than {limit:?}"),
            span,
            "stopped here",
        )
        .with_help("the host set this limit (Engine::set_time_limit); it also bounds device waits"),
    )
}

pub fn recursion(span: Span, limit: usize) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::recursion_limit",
            format!("calls nested more than {limit} deep"),
            span,
            "this call went too deep",
        )
        .with_help("is the recursion missing a base case?"),
    )
}

/// `exit(code)`: not a failure, but it ends the run like one; the code is
/// [`exit_code`] of the diagnostic.
pub fn exit(span: Span, code: i32) -> Box<Diag> {
    Box::new(Diag::error(
        EXIT,
        format!("exit({code})"),
        span,
        "the script ends here",
    ))
}

/// The diagnostic code of [`exit`].
pub const EXIT: &str = "accl::run::exit";

/// The status of an `exit(code)` diagnostic (`None` for any other).
pub fn exit_code(d: &Diag) -> Option<i32> {
    if d.code != EXIT {
        return None;
    }
    d.message
        .strip_prefix("exit(")?
        .strip_suffix(')')?
        .parse()
        .ok()
}

pub fn assert_failed(span: Span, msg: Option<&str>) -> Box<Diag> {
    Box::new(Diag::error(
        "accl::run::assert_failed",
        match msg {
            Some(m) => format!("assertion failed: {m}"),
            None => "assertion failed".to_string(),
        },
        span,
        "this condition is false",
    ))
}

pub fn io(span: Span, path: &std::path::Path, err: impl std::fmt::Display) -> Box<Diag> {
    Box::new(Diag::error(
        "accl::run::io",
        format!("cannot access `{}`: {err}", path.display()),
        span,
        "in this call",
    ))
}

/// A table file that was read but does not hold a table of that type.
pub fn bad_table(span: Span, path: &std::path::Path, err: impl std::fmt::Display) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::bad_table",
            format!("`{}` is not a table of numbers: {err}", path.display()),
            span,
            "read from this file",
        )
        .with_help(
            "columns are separated by commas, or by spaces and tabs when the first line has no \
             comma; every row has as many fields as the first; a first line with no number is a header",
        ),
    )
}

pub fn fs_disabled(span: Span, name: &str) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::fs_disabled",
            format!("`{name}` needs file-system access, which is off"),
            span,
            "file access refused",
        )
        .with_help("the embedding host must enable it (Engine::set_fs_access)"),
    )
}

pub fn bad_shape(span: Span, what: impl std::fmt::Display) -> Box<Diag> {
    Box::new(Diag::error(
        "accl::run::bad_shape",
        format!("cannot make this array: {what}"),
        span,
        "here",
    ))
}

pub fn bad_axis(span: Span, k: i128, rank: usize) -> Box<Diag> {
    Box::new(Diag::error(
        "accl::run::bad_axis",
        format!("axis {k} does not exist in an array of rank {rank}"),
        span,
        format!("axes are 0..{rank}"),
    ))
}

pub fn bad_device(span: Span, d: i128, n: usize) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::bad_device",
            format!("there is no device {d}"),
            span,
            format!("devices are 0..{n}"),
        )
        .with_help("acc_get_num_devices() tells how many devices there are"),
    )
}

pub fn host_fn(span: Span, name: &str, msg: &str) -> Box<Diag> {
    Box::new(Diag::error(
        "accl::run::host_function",
        format!("`{name}` failed: {msg}"),
        span,
        "in this call",
    ))
}

pub fn not_present(span: Span, name: &str, section: &str, dev: usize, why: &str) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::not_present",
            format!("`{name}{section}` is not present on device {dev}"),
            span,
            why.to_string(),
        )
        .with_help(format!(
            "copy it to the device first: `enter data copyin({name})` or a `data` region"
        )),
    )
}

pub fn partially_present(
    span: Span,
    name: &str,
    want: &Region,
    have: &Region,
    shape: &[usize],
    dev: usize,
) -> Box<Diag> {
    let label = if want.is_rows() && have.is_rows() {
        format!(
            "rows {}..{} overlap the present rows {}..{} without lying inside them",
            want.lo, want.hi, have.lo, have.hi
        )
    } else {
        format!(
            "elements {} overlap the present box {} without lying inside it",
            want.range_text(shape),
            have.range_text(shape)
        )
    };
    Box::new(
        Diag::error(
            "accl::run::partially_present",
            format!(
                "`{name}{}` is partially present on device {dev}",
                want.clause_text(shape)
            ),
            span,
            label,
        )
        .with_help("a section must lie inside the present data, or not overlap it at all"),
    )
}

/// A section with an axis `k` outside the array: `written` holds each
/// written axis's `(lo, count)`, None for `:`.
pub fn bad_section(
    span: Span,
    name: &str,
    written: &[Option<(i128, i128)>],
    k: usize,
    shape: &[usize],
) -> Box<Diag> {
    let rows = shape.first().copied().unwrap_or(0);
    if let [Some((lo, n))] = written {
        return Box::new(Diag::error(
            "accl::run::bad_section",
            format!("section `{name}[{lo}:{n}]` is outside the array's {rows} rows"),
            span,
            "this section",
        ));
    }
    let text: Vec<String> = written
        .iter()
        .map(|a| match a {
            Some((lo, n)) => format!("{lo}:{n}"),
            None => ":".to_string(),
        })
        .collect();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let dim = shape.get(k).copied().unwrap_or(0);
    let label = match written.get(k).copied().flatten() {
        Some((lo, n)) if lo < 0 || n < 0 => format!("axis {k}: `{lo}:{n}` is negative"),
        Some((lo, n)) => format!(
            "axis {k}: `{lo}:{n}` ends at {}, past its {dim} elements",
            lo + n
        ),
        None => format!("axis {k}"),
    };
    Box::new(
        Diag::error(
            "accl::run::bad_section",
            format!(
                "section `{name}[{}]` is outside the array's shape [{}]",
                text.join(", "),
                dims.join(", ")
            ),
            span,
            label,
        )
        .with_help("each axis `lo:count` needs 0 <= lo and lo + count <= the axis's extent"),
    )
}

/// A data operation the device could not carry out (too large, out of
/// memory, device lost); `what` is the runtime's message.
pub fn device(span: Span, name: &str, what: &Fault) -> Box<Diag> {
    fault(span, name, what, |what| {
        Box::new(
            Diag::error(
                "accl::device::data",
                format!("cannot move `{name}` to or from the device: {what}"),
                span,
                "this data clause",
            )
            .with_help(
                "the host array is unchanged; run with `--host` to use the host reference backend",
            ),
        )
    })
}

/// A device fault as a diagnostic at `span`: out of memory, device lost and
/// a stopped wait have codes of their own; any other failure is `failed`'s.
pub fn fault(
    span: Span,
    name: &str,
    f: &Fault,
    failed: impl FnOnce(&str) -> Box<Diag>,
) -> Box<Diag> {
    match f {
        Fault::Failed(m) => failed(m),
        Fault::OutOfMemory(m) => Box::new(
            Diag::error(
                "accl::device::out_of_memory",
                format!("out of device memory for `{name}`: {m}"),
                span,
                "needed here",
            )
            .with_help(
                "the host array is unchanged; release device data that is no longer needed \
                 (`exit data delete(..)`), or keep a smaller section on the device at a time",
            ),
        ),
        Fault::Lost(m) => Box::new(
            Diag::error(
                "accl::device::lost",
                format!("the device was lost: {m}"),
                span,
                "while running this",
            )
            .with_help(
                "this device cannot be used any more: create a new Engine (or rerun the script); \
                     host arrays hold what they held before this construct",
            ),
        ),
        Fault::Stopped(WaitStop::TimeLimit(t)) => time_limit(span, *t),
        Fault::Stopped(WaitStop::Aborted) => aborted(span),
        Fault::Kernel(d) => d.clone(),
    }
}

/// A format string `format` refused. When the string is a literal without
/// escapes, the label points at the offending part inside it; `text` is
/// the text being run, which spans index (None: unknown).
pub fn bad_format(span: Span, e: &stdlib::text::FmtError, text: Option<&str>) -> Box<Diag> {
    let literal = text
        .and_then(|t| t.get(span.range()))
        .filter(|t| t.starts_with('"') && t.ends_with('"') && !t.contains('\\'));
    let at = match literal {
        Some(_) => Span::new(
            span.start as usize + 1 + e.at.start,
            span.start as usize + 1 + e.at.end.max(e.at.start + 1),
        ),
        None => span,
    };
    Box::new(
        Diag::error(
            "accl::run::bad_format",
            format!("bad format string: {}", e.message),
            at,
            "here",
        )
        .with_help("placeholders are `{}`, `{:.3}`, `{:>8}`, `{:08.2}`, `{:e}`, `{:x}`, `{1}`; `{{` and `}}` are braces"),
    )
}

/// `arg(k)` of a script given fewer parameters.
pub fn missing_arg(span: Span, k: i128, given: usize) -> Box<Diag> {
    let have = match given {
        0 => "no parameters".to_string(),
        1 => "1 parameter".to_string(),
        n => format!("{n} parameters"),
    };
    Box::new(
        Diag::error(
            "accl::run::missing_argument",
            format!("no parameter {k}: the script was given {have}"),
            span,
            format!("parameter {k}"),
        )
        .with_help("pass parameters after `--`: `accl run FILE -- 100 0.5`, or give a default: `arg_i32(0, 100)`"),
    )
}

/// A parameter that does not parse as the type asked for.
pub fn bad_arg(span: Span, k: i128, text: &str, ty: &str) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::bad_argument",
            format!("parameter {k} is `{text}`, which is not an `{ty}`"),
            span,
            format!("reads parameter {k} as `{ty}`"),
        )
        .with_help(if ty == "i32" {
            "pass a whole number in i32's range, e.g. `-- 100`"
        } else {
            "pass a number, e.g. `-- 0.5` or `-- 1e-6`"
        }),
    )
}

/// `acc_memcpy_device` of arrays of different sizes.
pub fn count_mismatch(span: Span, msg: &str) -> Box<Diag> {
    Box::new(
        Diag::error("accl::run::size_mismatch", msg.to_string(), span, "in this call")
            .with_help("copy between arrays of the same element count (or a section of the larger one through `update`)"),
    )
}

/// An `acc_get_property` name that is not known.
pub fn bad_property(span: Span, func: &str, what: &str) -> Box<Diag> {
    let known = if func == "acc_get_property" {
        "`\"memory\"` and `\"free_memory\"`"
    } else {
        "`\"name\"`, `\"vendor\"` and `\"driver\"`"
    };
    Box::new(
        Diag::error(
            "accl::run::bad_property",
            format!("`{func}` has no property `{what}`"),
            span,
            "unknown property",
        )
        .with_help(format!("its properties are {known}")),
    )
}

/// `set device_type(t) [device_num(k)]` with no such device.
pub fn no_device_of_type(span: Span, t: &str, k: i128, devices: &[String]) -> Box<Diag> {
    let what = if k == 0 {
        format!("there is no `{t}` device")
    } else {
        format!("there is no `{t}` device number {k}")
    };
    Box::new(
        Diag::error("accl::run::bad_device", what, span, "chooses the device")
            .with_help(format!("the devices are: {}", devices.join("; "))),
    )
}

/// A string (or other text a script builds) larger than the memory limit.
pub fn memory_limit(span: Span, what: &str, bytes: usize, limit: usize) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::memory_limit",
            format!("this {what} would take {bytes} bytes, more than the limit of {limit}"),
            span,
            "allocated here",
        )
        .with_help(
            "the memory limit bounds every array and string a script makes \
             (Engine::set_max_array_bytes, `accl run --max-memory`)",
        ),
    )
}

/// The system refused an allocation the limit allowed.
pub fn out_of_memory(span: Span, what: &str, bytes: usize) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::out_of_memory",
            format!("the system refused {bytes} bytes for this {what}"),
            span,
            "allocated here",
        )
        .with_help("lower the memory limit (`accl run --max-memory`) or make the value smaller"),
    )
}
