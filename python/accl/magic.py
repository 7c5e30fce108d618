"""`%%accl`: accl cells in an IPython notebook, sharing arrays by name.

    %load_ext accl.magic
    %%accl
    for i in 0..len(a) { a[i] = a[i] * 2.0; }

Before the cell runs, each NumPy array and scalar of the notebook that the
cell names is bound in the magic's engine (an array in accl memory is
shared, a row-major NumPy array borrowed, any other copied). After it, each engine variable the cell names
is bound in the notebook as a NumPy view of the engine's array (or a
scalar), so later Python code and later cells see one array. `%accl_engine
host` (or a device) starts a fresh engine on another backend. The cell's
value, if any, is the magic's result.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

import accl

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shareable(v: Any) -> bool:
    return (
        isinstance(v, (np.ndarray, np.generic, float, str))
        or (isinstance(v, int) and not isinstance(v, type))
    ) and not callable(v)


@magics_class
class AcclMagics(Magics):
    engine: accl.Engine | None = None

    def _engine(self) -> accl.Engine:
        if self.engine is None:
            self.engine = accl.Engine(device="auto")
        return self.engine

    @line_magic
    def accl_engine(self, line: str) -> str:
        """Start a fresh engine: `host`, `auto`, a device number or list."""
        arg = line.strip() or "auto"
        self.engine = accl.Engine(device=int(arg) if arg.isdigit() else arg)
        return self.engine.backend

    @cell_magic
    def accl(self, line: str, cell: str) -> Any:
        e = self._engine()
        ns = self.shell.user_ns
        names = set(NAME.findall(cell))
        for n in names:
            if n in ns and not n.startswith("_") and _shareable(ns[n]):
                e[n] = ns[n]
        value = e.eval(cell, name="%%accl")
        for n in names:
            if n in e:
                ns[n] = e[n]
        return value


def load_ipython_extension(ip: Any) -> None:
    ip.register_magics(AcclMagics)
