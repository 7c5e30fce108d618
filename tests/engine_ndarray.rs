//! ndarray arrays in and out (`--features ndarray`; scripts/test runs the
//! suite with it): moved without a copy in standard layout, copied in
//! row-major order otherwise.
#![cfg(feature = "ndarray")]

use accl::stdlib::Elem;
use accl::Engine;
use ndarray::{arr1, s, Array, Array1, Array2, Array3, ArrayD, IxDyn};

fn ptr<T: Elem>(e: &Engine, name: &str) -> *const T {
    e.with_ndarray::<T, _>(name, |v| v.as_ptr()).unwrap()
}

fn moves_in_and_out<T: Elem>(make: impl Fn(usize) -> T) {
    let mut e = Engine::new();
    let a1: Array1<T> = (0..5).map(&make).collect();
    let a2 = Array2::from_shape_fn((2, 3), |(i, j)| make(i * 3 + j));
    let a3 = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| make(i * 12 + j * 4 + k));
    let ad = ArrayD::from_shape_fn(IxDyn(&[3, 2]), |ix| make(ix[0] * 2 + ix[1]));
    let p = [a1.as_ptr(), a2.as_ptr(), a3.as_ptr(), ad.as_ptr()];
    let want = [
        a1.iter().copied().collect::<Vec<T>>(),
        a2.iter().copied().collect(),
        a3.iter().copied().collect(),
        ad.iter().copied().collect(),
    ];
    e.set_ndarray("a1", a1).unwrap();
    e.set_ndarray("a2", a2).unwrap();
    e.set_ndarray("a3", a3).unwrap();
    e.set_ndarray("ad", ad).unwrap();
    for (k, name) in ["a1", "a2", "a3", "ad"].into_iter().enumerate() {
        assert_eq!(ptr::<T>(&e, name), p[k], "{name} moved in");
        assert_eq!(e.get_array::<T>(name).unwrap().0, want[k]);
        // A copy out is a copy.
        let c = e.get_ndarray::<T>(name).unwrap();
        assert_ne!(c.as_ptr(), p[k]);
        assert_eq!(c.iter().copied().collect::<Vec<T>>(), want[k]);
    }
    assert_eq!(
        e.eval("len(a1) + len(a2) + len(a3) + len(ad)")
            .unwrap()
            .unwrap()
            .to_string(),
        "41"
    );
    for (k, name) in ["a1", "a2", "a3", "ad"].into_iter().enumerate() {
        let t = e.take_ndarray::<T>(name).unwrap();
        assert_eq!(t.as_ptr(), p[k], "{name} moved out");
        assert_eq!(t.iter().copied().collect::<Vec<T>>(), want[k]);
        assert!(e.array(name).is_none());
    }
}

#[test]
fn every_element_type_moves_in_and_out() {
    moves_in_and_out(|i| i % 2 == 0);
    moves_in_and_out(|i| i as i32 - 3);
    moves_in_and_out(|i| i as i64 * 1000);
    moves_in_and_out(|i| i as u32);
    moves_in_and_out(|i| i as u8);
    moves_in_and_out(|i| i as f32 / 2.0);
    moves_in_and_out(|i| i as f64 / 3.0);
}

#[test]
fn other_layouts_are_copied_in_row_major_order() {
    let mut e = Engine::new();
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as i32);
    // Fortran order.
    let f = m.t().to_owned();
    assert!(!f.is_standard_layout());
    e.set_ndarray("f", f.clone()).unwrap();
    assert_eq!(
        e.get_array::<i32>("f").unwrap(),
        (f.iter().copied().collect(), vec![4, 3])
    );
    assert_eq!(e.eval_as::<i32>("f[3, 2]").unwrap(), 23);
    // Rows 1.. of an owned array: standard layout, but not the whole buffer.
    let rows = m.clone().slice_move(s![1.., ..]);
    assert!(rows.is_standard_layout());
    e.set_ndarray("rows", rows).unwrap();
    assert_eq!(e.get_array::<i32>("rows").unwrap().1, [2, 4]);
    assert_eq!(
        e.eval_as::<i32>("rows[0, 0] + rows[1, 3]").unwrap(),
        10 + 23
    );
    // Every other column: strided.
    let cols = m.slice_move(s![.., ..;2]);
    e.set_ndarray("cols", cols).unwrap();
    assert_eq!(
        e.get_array::<i32>("cols").unwrap().0,
        [0, 2, 10, 12, 20, 22]
    );
    // Empty axes are fine; rank 0 and 4 are not accl arrays.
    e.set_ndarray("empty", Array2::<f32>::zeros((0, 3)))
        .unwrap();
    assert_eq!(e.eval_as::<i32>("len(empty)").unwrap(), 0);
    let err = e.set_ndarray("s", ndarray::arr0(1.0f32)).unwrap_err();
    assert_eq!(err.code(), "accl::engine::bad_shape");
    let four = Array::<u8, _>::zeros((1, 1, 1, 1));
    assert_eq!(
        e.set_ndarray("four", four).unwrap_err().code(),
        "accl::engine::bad_shape"
    );
    assert!(e.array("four").is_none());
}

#[test]
fn take_copies_when_the_storage_is_shared() {
    let mut e = Engine::new();
    e.set_ndarray("x", arr1(&[1.0f64, 2.0, 3.0])).unwrap();
    let p = ptr::<f64>(&e, "x");
    // Another name for the same array: the buffer stays with it.
    e.eval("let y = x;").unwrap();
    let x = e.take_ndarray::<f64>("x").unwrap();
    assert_ne!(x.as_ptr(), p);
    assert_eq!(x.as_slice().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(ptr::<f64>(&e, "y"), p);
    // A handle the embedder keeps: the same.
    let h = e.array("y").unwrap();
    let y = e.take_ndarray::<f64>("y").unwrap();
    assert_ne!(y.as_ptr(), p);
    assert_eq!(h.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0]);
    // The wrong element type or no such array: None, and nothing removed.
    e.eval("let z = arange(i32, 2);").unwrap();
    assert!(e.take_ndarray::<f64>("z").is_none());
    assert!(e.get_ndarray::<u8>("z").is_none());
    assert!(e.with_ndarray::<f32, _>("z", |_| ()).is_none());
    assert!(e.take_ndarray::<f64>("nope").is_none());
    assert!(e.array("z").is_some());
}

#[test]
fn views_read_and_write_in_place() {
    let mut e = Engine::new();
    e.eval("let g = zeros(f32, 2, 3);").unwrap();
    let p = ptr::<f32>(&e, "g");
    e.with_ndarray_mut::<f32, _>("g", |mut v| {
        assert_eq!(v.as_ptr(), p);
        v.slice_mut(s![1, ..]).fill(2.0);
    })
    .unwrap();
    assert_eq!(e.eval_as::<f32>("sum(g)").unwrap(), 6.0);
    let row_sums = e
        .with_ndarray::<f32, _>("g", |v| v.sum_axis(ndarray::Axis(1)))
        .unwrap();
    assert_eq!(row_sums.as_slice().unwrap(), [0.0, 6.0]);
}
