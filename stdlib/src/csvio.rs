//! `load_csv` / `save_csv`: numeric tables as comma-separated text. The
//! `csv` crate splits and writes the records (quoting, CRLF, spaces around
//! fields); this module turns fields into elements of the type asked for.
//! A file whose first line has no comma has columns separated by spaces or
//! tabs (the data files of many benchmarks), split here by white space.
//!
//! A file is read as a 2-D array (rows x columns; one column gives N x 1).
//! A first line with no number in it is a header and skipped.
//! Every row must have as many fields as the first. Values are written as
//! `print` shows them (floats in Rust's shortest round-trip form), rank 1
//! one per line, rank 2 one row per line.

use crate::array::Array;
use crate::format;
use lang::{Scalar, Value};
use std::fmt;
use std::path::Path;

#[derive(Debug)]
pub enum CsvError {
    Io(std::io::Error),
    Csv(csv::Error),
    /// Field `field` (from 1) of line `line` is not a `ty`.
    Parse {
        line: u64,
        field: usize,
        text: String,
        ty: Scalar,
    },
    /// Line `line` has `found` fields where the first row has `want`.
    Ragged {
        line: u64,
        found: usize,
        want: usize,
    },
    /// Only arrays of rank 1 and 2 are written.
    Rank(usize),
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CsvError::Io(e) => write!(f, "{e}"),
            CsvError::Csv(e) => write!(f, "{e}"),
            CsvError::Parse {
                line,
                field,
                text,
                ty,
            } => write!(f, "line {line}, field {field}: `{text}` is not a `{ty}`"),
            CsvError::Ragged { line, found, want } => write!(
                f,
                "line {line} has {found} fields, but the first row has {want}"
            ),
            CsvError::Rank(r) => write!(
                f,
                "a CSV file holds a rank 1 or 2 array, not rank {r} (reshape it first)"
            ),
        }
    }
}

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
/// than the caller allows (each value read takes a few words until the
/// array is built).
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

/// One line's fields and its line number (from 1).
type Record = Result<(u64, Vec<String>), CsvError>;

/// Whether the first line that is not blank has a comma in it (else the
/// columns are separated by white space). Looks only into the buffer: a
/// first line longer than it is read as comma-separated if the buffer
/// holds a comma.
fn comma_separated(file: &mut impl std::io::BufRead) -> std::io::Result<bool> {
    let buf = file.fill_buf()?;
    let first = buf
        .split(|&b| b == b'\n')
        .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
        .unwrap_or(&[]);
    Ok(first.contains(&b','))
}

/// The table `file` holds (see [`load_within`]): comma-separated, or
/// separated by white space when the first line has no comma.
#[allow(clippy::result_large_err)]
pub fn read_table(
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
    let mut file = std::io::BufReader::with_capacity(1 << 16, file);
    let commas = tri!(comma_separated(&mut file).map_err(CsvError::Io));
    let records: Box<dyn Iterator<Item = Record>> = if commas {
        let rd = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(file);
        Box::new(rd.into_records().enumerate().map(|(k, rec)| {
            let rec = rec.map_err(CsvError::Csv)?;
            let line = rec.position().map_or(k as u64 + 1, |p| p.line());
            Ok((line, rec.iter().map(str::to_string).collect()))
        }))
    } else {
        // Columns separated by spaces or tabs (any number of them), as
        // NumPy's `loadtxt` reads them by default.
        Box::new(std::io::BufRead::lines(file).enumerate().map(|(k, l)| {
            let l = l.map_err(CsvError::Io)?;
            Ok((
                k as u64 + 1,
                l.split_whitespace().map(str::to_string).collect(),
            ))
        }))
    };
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

/// Write `a` (rank 1: one value per line; rank 2: one row per line).
pub fn save(a: &Array, path: &Path) -> Result<(), CsvError> {
    let (rows, cols) = match a.shape() {
        [n] => (*n, 1),
        [r, c] => (*r, *c),
        s => return Err(CsvError::Rank(s.len())),
    };
    let mut w = csv::Writer::from_path(path).map_err(CsvError::Csv)?;
    let d = a.data();
    for r in 0..rows {
        let rec = (0..cols).map(|c| d.get(r * cols + c).map(format::scalar).unwrap_or_default());
        w.write_record(rec).map_err(CsvError::Csv)?;
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
}
