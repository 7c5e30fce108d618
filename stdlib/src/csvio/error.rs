//! What `load_csv` and `save_csv` report.

use lang::Scalar;
use std::fmt;

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
