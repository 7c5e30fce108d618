//! `write_png`: a `u8[,]` array as an 8-bit grayscale PNG, a `u8[,,]`
//! array of shape H x W x 3 as 8-bit RGB (crate `png`).

use crate::array::{Array, Data};
use std::path::Path;

/// Write `a` to `path` as a PNG; the error is a readable message.
pub fn write_png(a: &Array, path: &Path) -> Result<(), String> {
    let (h, w, color) = match a.shape() {
        &[h, w] => (h, w, png::ColorType::Grayscale),
        &[h, w, 3] => (h, w, png::ColorType::Rgb),
        s => {
            return Err(format!(
                "an image must be H x W (gray) or H x W x 3 (RGB), not {s:?}"
            ))
        }
    };
    if h == 0 || w == 0 || h > u32::MAX as usize || w > u32::MAX as usize {
        return Err(format!("cannot write an image of {h} x {w} pixels"));
    }
    let d = a.data();
    let Data::U8(pixels) = &*d else {
        return Err("an image must be a `u8` array".into());
    };
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w as u32, h as u32);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    let mut wr = enc.write_header().map_err(|e| e.to_string())?;
    wr.write_image_data(pixels).map_err(|e| e.to_string())?;
    wr.finish().map_err(|e| e.to_string())
}
