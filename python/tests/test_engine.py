"""The package over NumPy: values, dtypes and layouts, in-place writes,
device data between calls, script files and parameters."""

import accl
import numpy as np
import pytest

TYPES = {
    np.bool_: "bool",
    np.int32: "i32",
    np.int64: "i64",
    np.uint32: "u32",
    np.uint8: "u8",
    np.float32: "f32",
    np.float64: "f64",
}


def bump_source(t, rank):
    """fn bump(x) adds 1 to every element (bool: negates it)."""
    axes = ",".join([""] * rank)
    idx = ", ".join("ijk"[:rank])
    update = f"!x[{idx}]" if t == "bool" else f"x[{idx}] + (1 as {t})"
    loops = ""
    close = ""
    for d, v in enumerate("ijk"[:rank]):
        loops += f"for {v} in 0..shape(x, {d}) {{ "
        close += "}"
    return f"fn bump(x: {t}[{axes}]) {{ {loops}x[{idx}] = {update}; {close} }}"


@pytest.mark.parametrize("dtype", list(TYPES), ids=list(TYPES.values()))
@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dtype_and_layout_round_trip(engine, dtype, rank, order):
    t = TYPES[dtype]
    mod = engine.compile(bump_source(t, rank))
    shape = (2, 3, 4)[:rank]
    n = int(np.prod(shape))
    base = (np.arange(n) % 2 == 0) if t == "bool" else np.arange(n) % 200
    a = np.array(base.reshape(shape), dtype=dtype, order=order)
    assert a.flags["F_CONTIGUOUS" if order == "F" else "C_CONTIGUOUS"]
    # Element [0, .., 0] is 0 (false) and the last is n - 1 (odd n-1: false
    # for bool): the known answers after bump.
    mod.bump(a)
    flat = a.reshape(-1, order="C")
    if t == "bool":
        assert flat[0] == False and flat[1] == True  # noqa: E712
        assert a.sum() == n // 2
    else:
        assert flat[0] == 1 and flat[-1] == (n - 1) % 200 + 1
        assert flat.tolist() == [(k % 200) + 1 for k in range(n)]
    # The same array through an engine variable, and back.
    engine["v"] = a
    back = engine["v"]
    assert back.dtype == np.dtype(dtype) and back.shape == shape
    assert (back == a).all()


def test_values_and_variables(engine):
    assert engine.eval("1 + 2") == 3
    assert engine.eval("let n: i64 = 20; n * 2 + 2") == 42
    assert engine.eval("1.5f32 * 2.0") == 3.0
    assert engine.eval("3 > 2") is True
    assert engine.eval("let s = 1;") is None
    engine["k"] = 7
    engine["h"] = 0.25
    engine["name"] = "heat"
    engine["f"] = np.float32(1.5)
    assert engine.variables()["k"] == "i32"
    assert engine.variables()["f"] == "f32"
    assert engine.eval("k * 2") == 14 and engine.eval("h * 4.0") == 1.0
    assert engine["name"] == "heat"
    assert "k" in engine and "nope" not in engine
    del engine["k"]
    assert "k" not in engine
    with pytest.raises(KeyError):
        engine["k"]


def test_in_place_writes_share_memory(engine):
    mod = engine.compile(
        "fn saxpy(a: f32, x: f32[], y: f32[]) {"
        " parallel loop for i in 0..len(x) { y[i] = a * x[i] + y[i]; } }"
    )
    x = accl.zeros(1000)
    x[:] = np.arange(1000)
    y = accl.zeros(1000)
    y[:] = 1.0
    assert accl.is_shared(x) and accl.is_shared(y)
    mod.saxpy(2.0, x, y)
    assert y[0] == 1.0 and y[999] == 1999.0
    # A NumPy array of NumPy's own is copied in and the writes copied back.
    z = np.ones(1000, dtype=np.float32)
    assert not accl.is_shared(z)
    mod.saxpy(3.0, x, z)
    assert z[10] == 31.0
    # An engine variable and the NumPy array it came from are one buffer.
    engine["y"] = y
    assert engine["y"].ctypes.data == y.ctypes.data
    engine.run("y[0] = 42.0;")
    assert y[0] == 42.0
    # A script's array, viewed by NumPy, outlives the engine's variable.
    engine.run("let w = zeros(f64, 3); w[2] = 5.0;")
    w = engine["w"]
    del engine["w"]
    assert w.tolist() == [0.0, 0.0, 5.0]
    # A function result is a NumPy array too.
    mod2 = engine.compile("fn ramp(n: i32) -> f64[] { let r = zeros(f64, n); for i in 0..n { r[i] = i as f64; } return r; }")
    assert mod2.ramp(4).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_device_data_stays_between_calls():
    e = accl.Engine(device=0)
    e["x"] = accl.zeros(256)
    x = e["x"]
    mod = e.compile(
        "fn step(x: f32[]) { parallel loop present(x) for i in 0..len(x) { x[i] = x[i] + 1.0; } }"
    )
    e.run("enter data copyin(x);")
    for _ in range(10):
        mod.step(x)
    # The host copy has not changed: the data stayed on the device.
    assert x[5] == 0.0
    e.run("exit data copyout(x);")
    assert x[5] == 10.0 and x[255] == 10.0
    assert e.validation_messages() == []


def test_run_file_and_args(engine, tmp_path):
    script = tmp_path / "params.accl"
    script.write_text("let total = arg_i32(0) + arg_i32(1);\ntotal * 2\n")
    assert engine.run(script, args=["3", "4"]) == 14
    assert engine.run(str(script), args=[10, 20]) == 60
    assert engine["total"] == 30


def test_print_goes_to_python_stdout(engine, capsys):
    engine.run('println("hello ", 6 * 7);')
    assert capsys.readouterr().out == "hello 42\n"


def test_meta_commands(engine):
    engine.run("let m = zeros(f64, 2, 3);")
    assert "m  f64[,]  shape [2, 3]" in engine.meta(":vars")
    assert engine.meta(":type m[0, 1] * 2.0").strip().endswith(": f64")
    assert "unknown command" in engine.meta(":bogus")
    # The engine's state survives a meta command.
    assert engine.eval("len(m)") == 6


def test_devices():
    lines = accl.devices()
    assert lines and lines[0].startswith("0: ")
