//! Shifts whose count has another integer type than the shifted value, on
//! the device against the host reference.

use crate::common;
use common::{same_as_host, Floats};

#[test]
fn counts_of_any_integer_type() {
    let (host, dev) = same_as_host(
        "let n = 64; let a = zeros(u32, n); let b = zeros(i64, n); let c = zeros(i32, n);
         let d = zeros(u8, n);
         for y in 1..3 { let q: u32 = 1u32 << (y - 1); a[y] = q; }
         parallel loop for i in 0..n {
             let y: i32 = i % 40;
             let k: u32 = (i % 7) as u32;
             a[i] = 1u32 << (y % 32);
             b[i] = (1 as i64) << y;
             b[i] = b[i] >> k;
             c[i] = -1024 >> (i as i64 % 8);
             d[i] = (255 as u8) >> (i % 8);
             let m: u32 = 3u32;
             m <<= k;
             m <<= y % 3;
             c[i] >>= (i as u32) % 5u32;
             a[i] += m;
         }
         assert(b[39] == ((1 as i64) << 39) >> 4);
         assert(c[3] == -16);",
        Floats::Exact,
    );
    for r in [&host.result, &dev.result] {
        if let Err(e) = r {
            panic!("failed:\n{}", e.render(100));
        }
    }
}
