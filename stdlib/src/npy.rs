//! The NumPy `.npy` format (versions 1.0, 2.0 and 3.0), done by hand.
//!
//! Written: version 1.0 (2.0 when the header does not fit in 64 KiB),
//! little-endian, C order, header padded with spaces to a multiple of 64
//! bytes and ended by `\n`, exactly as `numpy.save` writes it. Read: any of
//! the three versions, either byte order (`<`, `>`, `|`, `=`), C or Fortran
//! order (Fortran data is reordered to row-major); the element type must be
//! the one asked for (no silent conversion). Every malformed input is an
//! error, never a panic.

use crate::array::{Array, Data};
use lang::Scalar;
use std::fmt;

#[derive(Debug)]
pub enum NpyError {
    Io(std::io::Error),
    Format(String),
    Type { want: Scalar, found: String },
    Rank { want: usize, found: usize },
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io(e) => write!(f, "{e}"),
            NpyError::Format(m) => write!(f, "not a valid .npy file: {m}"),
            NpyError::Type { want, found } => {
                write!(f, "the file holds `{found}` elements, not `{want}`")
            }
            NpyError::Rank { want, found } => write!(
                f,
                "the file holds a {found}-dimensional array, not {want}-dimensional"
            ),
        }
    }
}

fn descr(t: Scalar) -> &'static str {
    match t {
        Scalar::Bool => "|b1",
        Scalar::I32 => "<i4",
        Scalar::I64 => "<i8",
        Scalar::U32 => "<u4",
        Scalar::U8 => "|u1",
        Scalar::F32 => "<f4",
        Scalar::F64 => "<f8",
    }
}

/// The bytes of a `.npy` file holding `a`.
pub fn encode(a: &Array) -> Vec<u8> {
    let shape = match a.shape() {
        [n] => format!("({n},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr(a.scalar())
    );
    let (version, len_bytes) = if dict.len() + 1 + 10 < 65536 {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let pre = 6 + 2 + len_bytes;
    let total = (pre + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - pre;
    let mut out = Vec::with_capacity(total + a.len() * a.scalar().size());
    out.extend_from_slice(b"\x93NUMPY");
    out.extend_from_slice(&[version, 0]);
    if len_bytes == 2 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    let d = a.data();
    if cfg!(target_endian = "little") {
        out.extend_from_slice(d.bytes());
    } else {
        let s = a.scalar().size();
        for c in d.bytes().chunks(s) {
            out.extend(c.iter().rev());
        }
    }
    out
}

/// Write `a` to `path`.
pub fn save(a: &Array, path: &std::path::Path) -> Result<(), NpyError> {
    std::fs::write(path, encode(a)).map_err(NpyError::Io)
}

/// Read `path` as an array of element type `t`; `rank` None accepts any rank
/// and flattens it.
pub fn load(path: &std::path::Path, t: Scalar, rank: Option<usize>) -> Result<Array, NpyError> {
    let bytes = std::fs::read(path).map_err(NpyError::Io)?;
    decode(&bytes, t, rank)
}

fn bad(m: impl Into<String>) -> NpyError {
    NpyError::Format(m.into())
}

/// Parse the bytes of a `.npy` file.
pub fn decode(bytes: &[u8], t: Scalar, rank: Option<usize>) -> Result<Array, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("missing the \\x93NUMPY magic"));
    }
    let (hlen, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(format!("unknown version {v}"))),
    };
    let end = start
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("truncated header"))?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("header is not text"))?;
    let descr = dict_str(header, "descr")?;
    let fortran = match dict_raw(header, "fortran_order")?.trim_start() {
        s if s.starts_with("True") => true,
        s if s.starts_with("False") => false,
        _ => return Err(bad("bad fortran_order")),
    };
    let shape = dict_shape(header)?;
    let (order, code) = descr.split_at(descr.len().min(1));
    let found = match code {
        "b1" => Scalar::Bool,
        "i4" => Scalar::I32,
        "i8" => Scalar::I64,
        "u4" => Scalar::U32,
        "u1" => Scalar::U8,
        "f4" => Scalar::F32,
        "f8" => Scalar::F64,
        _ => {
            return Err(NpyError::Type {
                want: t,
                found: descr.to_string(),
            })
        }
    };
    if found != t {
        return Err(NpyError::Type {
            want: t,
            found: found.name().to_string(),
        });
    }
    let swap = match order {
        "<" | "|" => cfg!(target_endian = "big"),
        ">" => cfg!(target_endian = "little"),
        "=" => false,
        _ => return Err(bad(format!("unknown byte order in `{descr}`"))),
    };
    if let Some(r) = rank {
        if shape.len() != r {
            return Err(NpyError::Rank {
                want: r,
                found: shape.len(),
            });
        }
    }
    let dims: Vec<i128> = shape.iter().map(|&d| d as i128).collect();
    let out_shape = crate::array::shape_of(&dims, t).map_err(|e| bad(e.to_string()))?;
    let n: usize = out_shape.iter().product();
    let size = t.size();
    let body = &bytes[end..];
    if body.len() < n * size {
        return Err(bad(format!(
            "{} data bytes for {n} elements of {size} bytes",
            body.len()
        )));
    }
    let mut raw = body[..n * size].to_vec();
    if swap {
        raw.chunks_mut(size).for_each(|c| c.reverse());
    }
    if fortran && out_shape.len() > 1 {
        let mut c_order = vec![0u8; raw.len()];
        let s = &out_shape;
        for (fi, chunk) in raw.chunks(size).enumerate() {
            // Fortran index fi → (i0, i1, i2) with i0 fastest.
            let mut rem = fi;
            let mut idx = [0usize; 3];
            for (k, &d) in s.iter().enumerate() {
                idx[k] = rem % d;
                rem /= d;
            }
            let ci = idx
                .iter()
                .zip(s.iter())
                .fold(0, |acc, (&i, &d)| acc * d + i);
            c_order[ci * size..(ci + 1) * size].copy_from_slice(chunk);
        }
        raw = c_order;
    }
    let mut data = Data::zeros(t, n);
    data.write_bytes(0, &raw);
    let shape = if rank.is_none() { vec![n] } else { out_shape };
    Array::new(data, shape).map_err(|e| bad(e.to_string()))
}

fn dict_raw<'h>(header: &'h str, key: &str) -> Result<&'h str, NpyError> {
    for q in ['\'', '"'] {
        let pat = format!("{q}{key}{q}");
        if let Some(p) = header.find(&pat) {
            let rest = header[p + pat.len()..].trim_start();
            return rest
                .strip_prefix(':')
                .ok_or_else(|| bad(format!("no value for `{key}`")));
        }
    }
    Err(bad(format!("no `{key}` in the header")))
}

fn dict_str<'h>(header: &'h str, key: &str) -> Result<&'h str, NpyError> {
    let v = dict_raw(header, key)?.trim_start();
    let q = v
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or_else(|| bad(format!("`{key}` is not a string")))?;
    let v = &v[1..];
    let e = v
        .find(q)
        .ok_or_else(|| bad(format!("unterminated `{key}`")))?;
    Ok(&v[..e])
}

fn dict_shape(header: &str) -> Result<Vec<usize>, NpyError> {
    let v = dict_raw(header, "shape")?.trim_start();
    let v = v
        .strip_prefix('(')
        .ok_or_else(|| bad("shape is not a tuple"))?;
    let e = v.find(')').ok_or_else(|| bad("unterminated shape"))?;
    let mut out = Vec::new();
    for part in v[..e].split(',') {
        let p = part.trim().trim_end_matches('L');
        if p.is_empty() {
            continue;
        }
        out.push(
            p.parse::<usize>()
                .map_err(|_| bad(format!("bad dimension `{p}`")))?,
        );
    }
    if out.is_empty() {
        // A 0-d array: one element.
        out.push(1);
    }
    if out.len() > 3 {
        return Err(bad(format!(
            "{} dimensions (accl arrays have 1 to 3)",
            out.len()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_type() {
        let a = Array::from_vec(vec![1.5f32, -2.0, 3.25, 4.0, 5.0, 6.0], vec![2, 3]).unwrap();
        let b = decode(&encode(&a), Scalar::F32, Some(2)).unwrap();
        assert_eq!(a, b);

        let h = encode(&a);
        assert_eq!((h.len() - 24) % 64, 0);
        let bo = Array::from_vec(vec![true, false, true], vec![3]).unwrap();
        assert_eq!(decode(&encode(&bo), Scalar::Bool, None).unwrap(), bo);
        assert!(matches!(
            decode(&encode(&bo), Scalar::U8, None),
            Err(NpyError::Type { .. })
        ));
        assert!(decode(b"\x93NUMPY\x01\x00\xff\xff", Scalar::U8, None).is_err());
    }

    #[test]
    fn fortran_and_big_endian() {
        // numpy: np.array([[1,2,3],[4,5,6]], dtype='>i4', order='F')
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        let dict = "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }";
        let mut h = dict.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        for v in [1i32, 4, 2, 5, 3, 6] {
            f.extend_from_slice(&v.to_be_bytes());
        }
        let a = decode(&f, Scalar::I32, Some(2)).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    }
}
