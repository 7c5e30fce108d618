"""Errors as accl.Error subclasses; the GIL released; Ctrl-C."""

import _thread
import threading

import accl
import numpy as np
import pytest


def test_run_error_carries_code_span_and_report(engine):
    with pytest.raises(accl.RunError) as info:
        engine.eval("let a = zeros(f32, 2);\nlet b = a[3];", name="cell")
    err = info.value
    assert isinstance(err, accl.Error)
    assert err.code == "accl::run::index_out_of_bounds"
    assert (err.file, err.line, err.column) == ("cell", 2, 11)
    assert err.span == (2, 11, 2, 12)
    assert "index 3 is out of bounds for axis 0 of extent 2" in err.report
    assert "valid indices of axis 0 are 0..2" == err.help
    # Nothing of the failed input was kept.
    assert "b" not in engine


def test_stage_classes(engine):
    with pytest.raises(accl.ParseError) as p:
        engine.eval("let = 3;")
    assert p.value.code.startswith("accl::parse::")
    with pytest.raises(accl.CheckError) as c:
        engine.eval("let x: f32 = true;")
    assert c.value.code.startswith("accl::type::")
    with pytest.raises(accl.CheckError) as n:
        engine.eval("nope + 1")
    assert n.value.code.startswith("accl::name::")


def test_argument_errors(engine):
    mod = engine.compile("fn f(x: f32[], n: i32) -> f32 { return x[n]; }")
    assert mod.f(np.array([1.0, 2.5], dtype=np.float32), 1) == 2.5
    with pytest.raises(accl.ApiError) as e:
        mod.f(np.zeros(2), 0)
    assert e.value.code == "accl::api::argument"
    assert "`f64[]`" in str(e.value) and "`f32[]`" in str(e.value)
    with pytest.raises(accl.ApiError, match="takes 2 arguments, not 1"):
        mod.f(np.zeros(2, dtype=np.float32))
    with pytest.raises(accl.ApiError, match="the function takes `i32`"):
        mod.f(np.zeros(2, dtype=np.float32), 1.5)
    with pytest.raises(accl.ApiError) as r:
        engine["z"] = np.zeros((1, 1, 1, 1))
    assert r.value.code == "accl::engine::bad_shape"
    with pytest.raises(AttributeError):
        mod.g
    with pytest.raises(accl.RunError) as b:
        mod.f(np.zeros(2, dtype=np.float32), 5)
    assert b.value.code == "accl::run::index_out_of_bounds"


def test_ctrl_c_interrupts_a_long_run(engine):
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        engine.run("let spins = 0; while true { spins += 1; }")
    timer.join()
    # The engine goes on, as before the interrupted input.
    assert "spins" not in engine
    assert engine.eval("2 + 2") == 4


def test_gil_is_released_while_accl_runs(engine):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=count)
    t.start()
    try:
        # Long enough for the other thread to be scheduled many times.
        engine.run("let s = 0.0; for i in 0..3000000 { s += 1.0; }")
        during = len(ticks)
    finally:
        stop.set()
        t.join()
    assert during > 0
    assert engine["s"] == 3000000.0


def test_an_engine_belongs_to_its_thread():
    e = accl.Engine(device="host")
    a = e.eval("let a = zeros(f32, 3); a")
    seen = []

    def other():
        for f in (lambda: e.eval("1"), lambda: e["a"], lambda: e.compile("fn g() { }")):
            try:
                f()
            except RuntimeError as err:
                seen.append(str(err))
        # An array in accl memory is an ordinary NumPy array elsewhere, but
        # it is not passed without a copy from there.
        seen.append(accl.is_shared(a))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert len(seen) == 4 and all("belong to the thread that made them" in m for m in seen[:3])
    assert seen[3] is False
    assert e.eval("len(a)") == 3 and accl.is_shared(a)
