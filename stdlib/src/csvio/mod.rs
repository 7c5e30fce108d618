//! `load_csv` / `save_csv`: numeric tables as text. A file whose first
//! line has a comma is comma-separated (spaces around fields are trimmed,
//! CRLF line ends read); one whose first line has none has columns
//! separated by spaces or tabs (the data files of many benchmarks).
//!
//! Plain text is read by [`scan`]: in 64 MiB blocks, each parsed on every
//! core straight into a typed vector (~100-170 MB/s on two cores, against
//! ~16-30 MB/s when each field went through the `csv` crate and a `Value`).
//! Comma-separated text that quotes fields, or ends lines with `\r` alone,
//! in its first 64 KiB still goes through the `csv` crate.
//!
//! A file is read as a 2-D array (rows x columns; one column gives N x 1).
//! A first line with no number in it is a header and skipped.
//! Every row must have as many fields as the first. Values are written as
//! `print` shows them (floats in Rust's shortest round-trip form), rank 1
//! one per line, rank 2 one row per line, batches of rows formatted on
//! every core.

use crate::array::Array;
use crate::format;
use lang::{Scalar, Value};
use std::io::Read;
use std::path::Path;

mod error;
mod scan;

pub use error::CsvError;

/// One field as an element of type `t`.
fn field(text: &str, t: Scalar) -> Option<Value> {
    let v = if t.is_float() {
        Value::F64(text.parse::<f64>().ok()?)
    } else if t == Scalar::Bool {
        match text {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => return None,
        }
    } else {
        Value::IntLit(text.parse::<i128>().ok()?)
    };
    match (v, t) {
        (Value::F64(x), Scalar::F32) => Some(Value::F32(x as f32)),
        (Value::IntLit(_), _) => v.concretize(t),
        _ => Some(v),
    }
}

/// The table in `path` as a `t[,]` array.
pub fn load(path: &Path, t: Scalar) -> Result<Array, CsvError> {
    load_within(path, t, usize::MAX).unwrap_or_else(|n| {
        Err(CsvError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("more than {n} values"),
        )))
    })
}

/// [`load`], stopping once the table holds more than `max_values` values:
/// `Err(values so far)` then, so that a large file cannot take more memory
/// than the caller allows (the text is read 64 MiB at a time; a value
/// read takes its element's size).
#[allow(clippy::result_large_err)]
pub fn load_within(
    path: &Path,
    t: Scalar,
    max_values: usize,
) -> Result<Result<Array, CsvError>, usize> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Ok(Err(CsvError::Io(e))),
    };
    read_table(file, t, max_values)
}

/// Bytes looked at to choose the separator and the path.
const HEAD: u64 = 1 << 16;

/// The table `file` holds (see [`load_within`]): comma-separated, or
/// separated by white space when the first line has no comma. Plain text
/// takes the fast path ([`scan`]); comma-separated text whose first 64 KiB
/// quote a field or end a line with `\r` alone is read by the `csv` crate.
#[allow(clippy::result_large_err)]
pub fn read_table(
    mut file: impl std::io::Read,
    t: Scalar,
    max_values: usize,
) -> Result<Result<Array, CsvError>, usize> {
    let mut head = Vec::new();
    if let Err(e) = file.by_ref().take(HEAD).read_to_end(&mut head) {
        return Ok(Err(CsvError::Io(e)));
    }
    let sep = scan::separator(&head);
    if scan::plain(&head, sep) {
        scan::read(file, head, t, sep, max_values)
    } else {
        read_quoted(std::io::Cursor::new(head).chain(file), t, max_values)
    }
}

/// Comma-separated text, through the `csv` crate (quoting, `\r` line ends).
#[allow(clippy::result_large_err)]
fn read_quoted(
    file: impl std::io::Read,
    t: Scalar,
    max_values: usize,
) -> Result<Result<Array, CsvError>, usize> {
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => return Ok(Err(e)),
            }
        };
    }
    let rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(file);
    let records = rd.into_records().enumerate().map(|(k, rec)| {
        let rec = rec.map_err(CsvError::Csv)?;
        let line = rec.position().map_or(k as u64 + 1, |p| p.line());
        Ok::<_, CsvError>((line, rec.iter().map(str::to_string).collect::<Vec<_>>()))
    });
    let mut values: Vec<Value> = Vec::new();
    let (mut rows, mut cols) = (0usize, None::<usize>);
    for (k, rec) in records.enumerate() {
        let (line, rec) = tri!(rec);
        if rec.iter().all(String::is_empty) {
            continue; // a blank line
        }
        let parsed: Result<Vec<Value>, CsvError> = rec
            .iter()
            .enumerate()
            .map(|(i, s)| {
                field(s, t).ok_or_else(|| CsvError::Parse {
                    line,
                    field: i + 1,
                    text: s.to_string(),
                    ty: t,
                })
            })
            .collect();
        let row = match parsed {
            Ok(r) => r,
            // A header: a first line with no number in it.
            Err(_) if k == 0 && rec.iter().all(|s| s.parse::<f64>().is_err()) => continue,
            Err(e) => return Ok(Err(e)),
        };
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                return Ok(Err(CsvError::Ragged {
                    line,
                    found: row.len(),
                    want: c,
                }))
            }
            _ => {}
        }
        if values.len().saturating_add(row.len()) > max_values {
            return Err(values.len().saturating_add(row.len()));
        }
        values.extend(row);
        rows += 1;
    }
    let cols = cols.unwrap_or(0);
    let a = tri!(Array::zeros(t, vec![rows, cols]).map_err(|e| {
        CsvError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            e.to_string(),
        ))
    }));
    {
        let mut d = a.data_mut();
        for (i, v) in values.into_iter().enumerate() {
            d.set(i, v);
        }
    }
    Ok(Ok(a))
}

/// Values formatted per task when writing.
const WRITE_BATCH: usize = 1 << 14;

/// Write `a` (rank 1: one value per line; rank 2: one row per line).
/// Batches of rows are formatted on every core and written in order.
pub fn save(a: &Array, path: &Path) -> Result<(), CsvError> {
    use rayon::prelude::*;
    use std::io::Write;
    let (rows, cols) = match a.shape() {
        [n] => (*n, 1),
        [r, c] => (*r, *c),
        s => return Err(CsvError::Rank(s.len())),
    };
    let held = a.data();
    let d: &crate::array::Data = &held;
    if cols == 0 {
        // Empty records, as the `csv` crate writes them.
        let mut w = csv::Writer::from_path(path).map_err(CsvError::Csv)?;
        for _ in 0..rows {
            w.write_record(std::iter::empty::<&str>())
                .map_err(CsvError::Csv)?;
        }
        return w.flush().map_err(CsvError::Io);
    }
    let file = std::fs::File::create(path).map_err(CsvError::Io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let batch = (WRITE_BATCH / cols).max(1);
    let format_rows = |first: usize| {
        let mut s = String::with_capacity(batch * cols * 12);
        for r in first..(first + batch).min(rows) {
            for c in 0..cols {
                if c > 0 {
                    s.push(',');
                }
                if let Some(v) = d.get(r * cols + c) {
                    format::write_scalar(&mut s, v);
                }
            }
            s.push('\n');
        }
        s
    };
    // A round of batches per core at a time bounds the text held at once.
    let round = batch * rayon::current_num_threads().max(1) * 4;
    for start in (0..rows).step_by(round) {
        let texts: Vec<String> = (start..(start + round).min(rows))
            .step_by(batch)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(format_rows)
            .collect();
        for t in texts {
            w.write_all(t.as_bytes()).map_err(CsvError::Io)?;
        }
    }
    w.flush().map_err(CsvError::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_round_trip_with_a_header_and_spaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, "x, y ,z\n1, 2.5, -3\n\n4,5e-3, 6\n").unwrap();
        let a = load(&p, Scalar::F64).unwrap();
        assert_eq!(a.shape(), &[2, 3]);
        assert_eq!(a.data().get(4), Some(Value::F64(0.005)));
        save(&a, &p).unwrap();
        let b = load(&p, Scalar::F64).unwrap();
        assert_eq!(a.data().bytes(), b.data().bytes());
        let i = load(&p, Scalar::I32);
        assert!(
            matches!(
                i,
                Err(CsvError::Parse {
                    line: 1,
                    field: 2,
                    ..
                })
            ),
            "{i:?}"
        );
        std::fs::write(&p, "1,2\n3\n").unwrap();
        let e = load(&p, Scalar::I32).unwrap_err().to_string();
        assert_eq!(e, "line 2 has 1 fields, but the first row has 2");
        std::fs::write(&p, "a,b\r\n1,2\r\n\r\n3\r\n").unwrap();
        let e = load(&p, Scalar::I32).unwrap_err().to_string();
        assert_eq!(e, "line 4 has 1 fields, but the first row has 2");
        // Quoted fields go through the `csv` crate.
        std::fs::write(&p, "\"x\",\"y\"\n\"1\", 2\n3,\"4\"\n").unwrap();
        let q = load(&p, Scalar::I32).unwrap();
        assert_eq!(q.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
        std::fs::write(&p, "1\n300\n").unwrap();
        let e = load(&p, Scalar::U8).unwrap_err().to_string();
        assert_eq!(e, "line 2, field 1: `300` is not a `u8`");
    }

    #[test]
    fn columns_separated_by_white_space() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, "# x y\n\n 1  2.5\t-3\n4 5e-3   6\n").unwrap();
        let a = load(&p, Scalar::F64).unwrap();
        assert_eq!(a.shape(), &[2, 3]);
        let want = [1.0, 2.5, -3.0, 4.0, 0.005, 6.0];
        for (i, w) in want.into_iter().enumerate() {
            assert_eq!(a.data().get(i), Some(Value::F64(w)));
        }
        std::fs::write(&p, "1 2\n3 x\n").unwrap();
        let e = load(&p, Scalar::I32).unwrap_err().to_string();
        assert_eq!(e, "line 2, field 2: `x` is not a `i32`");
        std::fs::write(&p, "1\n300\n").unwrap();
        let e = load(&p, Scalar::U8).unwrap_err().to_string();
        assert_eq!(e, "line 2, field 1: `300` is not a `u8`");
    }

    proptest::proptest! {
        /// The fast path reads plain comma-separated text exactly as the
        /// `csv` crate's path does: the same table or the same error.
        #[test]
        fn the_fast_path_agrees_with_the_csv_crate(
            rows in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!["1", "-2.5", " 3 ", "1e3", "x", "7\t", "true"]),
                    1..4,
                ),
                0..8,
            ),
            ty in proptest::sample::select(vec![Scalar::F64, Scalar::F32, Scalar::I32, Scalar::U8, Scalar::Bool]),
        ) {
            // No blank lines and LF only: the `csv` crate numbers the lines
            // after a blank line, or any line ended by CRLF, one short.
            let end = "\n";
            let text: String = rows.iter().map(|r| r.join(",") + end).collect();
            let text = format!("0,1{end}{text}");
            let fast = read_table(text.as_bytes(), ty, usize::MAX).unwrap();
            let slow = read_quoted(text.as_bytes(), ty, usize::MAX).unwrap();
            match (fast, slow) {
                (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b),
                (a, b) => proptest::prop_assert_eq!(
                    a.map(|_| ()).map_err(|e| e.to_string()),
                    b.map(|_| ()).map_err(|e| e.to_string())
                ),
            }
        }
    }

    proptest::proptest! {
        /// Any bytes: a table of at most `max` values, an error, or
        /// `Err(n)` with `n` over `max`; never a panic.
        #[test]
        fn any_bytes_read_within_the_limit(
            body in proptest::collection::vec(
                proptest::sample::select(b"0123456789.,-e \t\r\n\"x".to_vec()),
                0..200,
            ),
            max in 0usize..40,
            ty in proptest::sample::select(vec![Scalar::F64, Scalar::I32, Scalar::U8, Scalar::Bool]),
        ) {
            match read_table(&body[..], ty, max) {
                Ok(Ok(a)) => {
                    proptest::prop_assert!(a.len() <= max);
                    proptest::prop_assert_eq!(a.shape().len(), 2);
                }
                Ok(Err(e)) => {
                    let _ = e.to_string();
                }
                Err(n) => proptest::prop_assert!(n > max),
            }
        }
    }
}
