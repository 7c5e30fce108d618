"""NumPy's own arrays passed to accl without a copy (borrowed), written in
place; the layouts that are still copied; the lifetime of borrowed
memory."""

import gc
import weakref

import accl
import numpy as np
import pytest

DTYPES = {np.float32: "f32", np.float64: "f64", np.int32: "i32", np.uint8: "u8"}


def scale_source(t, rank):
    """fn scale(x, m): x[..] = x[..] * m + 1 over every element, through
    a compute construct (so on the device for a Vulkan engine)."""
    axes = ",".join([""] * rank)
    idx = ", ".join("ijk"[:rank])
    heads = " { ".join(f"for {v} in 0..shape(x, {d})" for d, v in enumerate("ijk"[:rank]))
    collapse = f"collapse({rank}) " if rank > 1 else ""
    return (
        f"fn scale(x: {t}[{axes}], m: {t}) {{ parallel loop {collapse}{heads} "
        f"{{ x[{idx}] = x[{idx}] * m + (1 as {t}); {'}' * rank} }}"
    )


@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES.values()))
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_written_in_place_without_a_copy(engine, dtype, rank):
    t = DTYPES[dtype]
    mod = engine.compile(scale_source(t, rank))
    shape = (3, 4, 5)[:rank]
    n = int(np.prod(shape))
    a = (np.arange(n) % 50).astype(dtype).reshape(shape)
    assert not accl.is_shared(a) and not accl.is_copied(a)
    ptr = a.ctypes.data
    mod.scale(a, 3)
    # x * 3 + 1 for x = k % 50: at most 148, within u8.
    assert a.reshape(-1).tolist() == [(k % 50) * 3 + 1 for k in range(n)]
    assert a.ctypes.data == ptr
    mod.scale(a, 2)
    assert a.reshape(-1)[-1] == ((n - 1) % 50 * 3 + 1) * 2 + 1


def test_accl_sees_numpy_writes_between_calls(engine):
    x = np.zeros(1000, dtype=np.float64)
    engine["x"] = x
    # The engine's variable is x's memory: no copy in either direction.
    assert engine["x"].ctypes.data == x.ctypes.data
    x[7] = 2.5
    assert engine.eval("x[7]") == 2.5
    engine.run("x[8] = x[7] * 4.0;")
    assert x[8] == 10.0
    mod = engine.compile(
        "fn total(v: f64[]) -> f64 { let s = 0.0; for i in 0..len(v) { s = s + v[i]; } return s; }"
    )
    x[:] = 1.0
    assert mod.total(x) == 1000.0
    x[999] = 101.0
    assert mod.total(x) == 1100.0


def test_the_same_buffer_is_the_same_accl_array():
    # present() finds data entered for a NumPy array passed later, which
    # needs the same accl array at each call (and so one device import).
    engine = accl.Engine(device=0)
    x = np.zeros(1 << 18, dtype=np.float32)
    engine["x"] = x
    step = engine.compile(
        "fn step(x: f32[]) { parallel loop present(x) for i in 0..len(x) { x[i] = x[i] + 1.0; } }"
    ).step
    engine.run("enter data copyin(x);")
    for _ in range(5):
        step(x)
    assert x[3] == 0.0  # the device has the data; the host copy waits
    engine.run("exit data copyout(x);")
    assert x[3] == 5.0 and x[-1] == 5.0
    assert engine.validation_messages() == []


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)),
        lambda: np.arange(24, dtype=np.float32).reshape(3, 8)[:, ::2],
        lambda: np.arange(24, dtype=np.float32)[::2].reshape(3, 4),
        lambda: np.frombuffer(bytearray(49), dtype=np.uint8, offset=1)[:48].view(np.float32).reshape(3, 4),
    ],
    ids=["fortran", "strided", "every-other", "misaligned"],
)
def test_other_layouts_are_copied_and_written_back(engine, make):
    a = make()
    a[...] = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert accl.is_copied(a)
    want = a * 2.0 + 1.0
    mod = engine.compile(scale_source("f32", 2))
    mod.scale(a, 2.0)
    assert a.tolist() == want.tolist()


def test_read_only_and_bool_arrays_are_copied(engine):
    r = np.arange(4, dtype=np.float32)
    r.flags.writeable = False
    b = np.array([True, False, True])
    assert accl.is_copied(r) and accl.is_copied(b)
    mod = engine.compile(
        "fn first(x: f32[]) -> f32 { return x[3]; }\n"
        "fn count(b: bool[]) -> i32 { let n = 0; for i in 0..len(b) { if b[i] { n = n + 1; } } return n; }"
    )
    assert mod.first(r) == 3.0 and mod.count(b) == 2
    # Any byte but 0 in a bool array (put there through a uint8 view) is
    # true, as NumPy reads it.
    odd = np.array([0, 2, 1, 255], dtype=np.uint8).view(np.bool_)
    assert mod.count(odd) == 3


def test_overlapping_arguments_are_copied(engine):
    # y = x[1:] shares x's memory: borrowing both would make two accl
    # arrays over one buffer, so the second is copied and written back,
    # as two separate arrays.
    mod = engine.compile(
        "fn shift(x: f32[], y: f32[]) { for i in 0..len(y) { y[i] = x[i] + 10.0; } }"
    )
    x = np.arange(5, dtype=np.float32)
    mod.shift(x, x[1:])
    assert x.tolist() == [0.0, 10.0, 11.0, 12.0, 13.0]
    # The same array twice is one accl array: the writes are seen at once.
    z = np.arange(5, dtype=np.float32)
    mod.shift(z, z)
    assert z.tolist() == [10.0, 11.0, 12.0, 13.0, 14.0]


def test_borrowed_arrays_are_let_go(engine):
    mod = engine.compile(scale_source("f32", 1))
    n = 1 << 20  # 4 MB: large enough for a device to import its pages
    x = np.ones(n, dtype=np.float32)
    mod.scale(x, 2.0)
    assert x[0] == 3.0
    gone = weakref.ref(x)
    del x
    gc.collect()
    # New arrays of the same size, possibly at the same address, are new
    # memory: the results are theirs, computed from their own values.
    for k in range(3):
        y = np.full(n, float(k), dtype=np.float32)
        mod.scale(y, 2.0)
        assert y[0] == 2.0 * k + 1.0 and y[-1] == 2.0 * k + 1.0
        del y
    gc.collect()
    # The next call let go of x (only accl held it).
    assert gone() is None
    # An engine variable keeps a borrowed array's memory alive.
    engine["keep"] = np.arange(10, dtype=np.int64) * 3
    gc.collect()
    mod.scale(np.ones(4, dtype=np.float32), 1.0)
    assert engine.eval("keep[9]") == 27
