"""Notebooks executed headless through a real Jupyter client (nbclient):
the accl kernel, and the %%accl magic in an IPython notebook."""

import base64
import struct

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook


def run(nb, kernel, tmp_path, monkeypatch, jupyter_path=None):
    if jupyter_path:
        monkeypatch.setenv("JUPYTER_PATH", jupyter_path)
    NotebookClient(
        nb, kernel_name=kernel, timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    return nb


def texts(cell):
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif "data" in o and "text/plain" in o.data:
            out.append(o.data["text/plain"])
    return "".join(out)


def png_size(o):
    raw = base64.b64decode(o.data["image/png"])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", raw[16:24])


def test_accl_kernel(kernel_path, tmp_path, monkeypatch):
    nb = new_notebook(
        cells=[
            new_code_cell("let x = zeros(f32, 4);\nparallel loop for i in 0..4 { x[i] = i as f32 * 1.5; }\nx[3]"),
            new_code_cell(':vars\nprintln("sum = ", sum(x));'),
            new_code_cell(
                "let img = zeros(u8, 16, 32);\n"
                "for r in 0..16 { for c in 0..32 { img[r, c] = (c * 8) as u8; } }\n"
                'write_png(img, "ramp.png");'
            ),
            new_code_cell("let m = zeros(f64, 8, 8);\nm[7, 7] = 1.0;\nm"),
            new_code_cell("let y = 1;\nlet z = x[9];"),
            new_code_cell("y + 1"),
        ]
    )
    run(nb, "accl", tmp_path, monkeypatch, kernel_path)
    c = nb.cells
    assert texts(c[0]) == "4.5"
    assert "x  f32[]  shape [4]" in texts(c[1]) and "sum = 9" in texts(c[1])
    # write_png's picture, inline: 32 x 16 pixels.
    images = [o for o in c[2].outputs if "data" in o and "image/png" in o.data]
    assert len(images) == 1 and png_size(images[0]) == (32, 16)
    assert (tmp_path / "ramp.png").exists()
    # A 2-D array value is shown as a picture too (8 x 8 scaled to 256 x 256).
    shown = [o for o in c[3].outputs if o.output_type == "execute_result"]
    assert "image/png" in shown[0].data and png_size(shown[0]) == (256, 256)
    # The error names the cell's own line 2, and the cell kept nothing.
    err = [o for o in c[4].outputs if o.output_type == "error"][0]
    assert err.ename == "RunError" and err.evalue == "accl::run::index_out_of_bounds"
    assert any("[cell[5]:2:11]" in line for line in err.traceback)
    assert "y" not in texts(c[5]) and c[5].outputs[0].output_type == "error"
    assert c[5].outputs[0].evalue == "accl::name::unknown"


def test_accl_magic_shares_arrays_with_numpy(tmp_path, monkeypatch):
    nb = new_notebook(
        cells=[
            new_code_cell("import numpy as np\n%load_ext accl.magic\na = np.arange(4.0)\nk = 3.0"),
            new_code_cell("%%accl\nparallel loop for i in 0..len(a) { a[i] = a[i] * k; }\nlet total = sum(a);"),
            new_code_cell("print(a.tolist(), total)\na[0] = 100.0"),
            new_code_cell("%%accl\na[0] + 1.0"),
            new_code_cell("%%accl\nlet q = 1;\nlet r = a[99];"),
        ]
    )
    run(nb, "python3", tmp_path, monkeypatch)
    c = nb.cells
    assert [o.output_type for o in c[1].outputs] == []
    assert texts(c[2]) == "[0.0, 3.0, 6.0, 9.0] 18.0\n"
    # After the first cell, `a` is the engine's array: NumPy's write is seen.
    assert texts(c[3]) == "101.0"
    # A diagnostic, not a Python traceback: the cell's line 2.
    err = c[4].outputs[0]
    assert err.output_type == "error" and err.ename == "RunError"
    assert any("[%%accl:2:" in line for line in err.traceback)
    assert any("index 99 is out of bounds" in line for line in err.traceback)
    assert not any("Traceback" in line for line in err.traceback)


def test_kernel_interrupt_stops_a_running_cell(kernel_path, monkeypatch):
    import time

    from jupyter_client.manager import start_new_kernel

    monkeypatch.setenv("JUPYTER_PATH", kernel_path)
    km, kc = start_new_kernel(kernel_name="accl")
    try:
        kc.execute_interactive("let n = 41;", timeout=60)
        kc.execute("let spins = 0; while true { spins += 1; }")
        time.sleep(1.0)
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=60)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        # The engine goes on, with the state from before the cell.
        outputs = []
        kc.execute_interactive("n + 1", timeout=60, output_hook=outputs.append)
        results = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
        assert results == ["42"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
