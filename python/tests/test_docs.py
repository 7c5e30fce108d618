"""The examples of docs/python.md and docs/jupyter.md, run as written."""

import base64
import pathlib
import re

import nbformat  # noqa: F401
from nbformat.v4 import new_code_cell, new_notebook

from test_notebook import run

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


def blocks(doc, lang):
    return re.findall(rf"```{lang}\n(.*?)```", (DOCS / doc).read_text(), re.S)


def test_python_md(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = blocks("python.md", "python")
    assert len(code) == 3
    ns = {}
    for c in code:
        exec(compile(c, "docs/python.md", "exec"), ns)


def test_jupyter_md_kernel_session(kernel_path, tmp_path, monkeypatch):
    cells = blocks("jupyter.md", "accl")
    assert len(cells) == 3
    nb = run(new_notebook(cells=[new_code_cell(c) for c in cells]), "accl", tmp_path, monkeypatch, kernel_path)
    outs = [o for c in nb.cells for o in c.outputs]
    assert not [o for o in outs if o.output_type == "error"]
    images = [o for o in outs if "data" in o and "image/png" in o.data]
    assert len(images) == 2
    assert all(base64.b64decode(o.data["image/png"])[:4] == b"\x89PNG" for o in images)
    text = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert "field  f32[,]  shape [64, 64]" in text and "max = " in text


def test_jupyter_md_magic(tmp_path, monkeypatch):
    cells = blocks("jupyter.md", "python")
    assert len(cells) == 3
    nb = run(new_notebook(cells=[new_code_cell(c) for c in cells]), "python3", tmp_path, monkeypatch)
    outs = [o for c in nb.cells for o in c.outputs]
    assert not [o for o in outs if o.output_type == "error"]
    assert nb.cells[2].outputs[0].text == "[0.  0.5 1.  1.5 2. ] 5.0\n"
