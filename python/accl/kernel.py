"""The accl Jupyter kernel: cells are accl source run in one engine, so
state persists as in the REPL (docs/jupyter.md).

    python -m accl.kernel install [--user | --sys-prefix | --prefix DIR]

An ipykernel wrapper kernel: `do_execute` runs a cell; leading lines that
start with `:` are the REPL's meta commands; a value is shown as a MIME
bundle (`accl.display`); an image that `write_png` wrote with a literal
file name shows inline; a diagnostic shows as the command line prints it,
with the cell's own line numbers.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import tempfile
from typing import Any, Dict

from ipykernel.kernelbase import Kernel

import accl
from accl import display

WRITE_PNG = re.compile(r'\bwrite_png\s*\([^;]*?,\s*"([^"]+)"\s*\)')


class AcclKernel(Kernel):
    implementation = "accl"
    implementation_version = "0.1"
    language = "accl"
    language_version = "0.1"
    language_info = {
        "name": "accl",
        "mimetype": "text/x-accl",
        "file_extension": ".accl",
        "codemirror_mode": "rust",
        "pygments_lexer": "rust",
    }
    banner = "accl: an OpenACC-style array language (`:help` lists the meta commands)"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine = accl.Engine(device=os.environ.get("ACCL_KERNEL_DEVICE", "auto"))
        self.engine.set_print(lambda s: self._stream("stdout", s))

    def _stream(self, name: str, text: str) -> None:
        if text:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    def _show(self, data: Dict[str, str]) -> None:
        self.send_response(self.iopub_socket, "display_data", {"data": data, "metadata": {}})

    def do_execute(
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: Any = None,
        allow_stdin: bool = False,
    ) -> Dict[str, Any]:
        ok = {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}
        lines = code.split("\n")
        n_meta = 0
        while n_meta < len(lines) and lines[n_meta].lstrip().startswith(":"):
            n_meta += 1
        for line in lines[:n_meta]:
            self._stream("stdout", self.engine.meta(line.strip()))
        # Blank lines in place of the meta commands keep line numbers the cell's.
        source = "\n" * n_meta + "\n".join(lines[n_meta:])
        if not source.strip():
            return ok
        images = [(p, _mtime(p)) for p in WRITE_PNG.findall(source)]
        try:
            value = self.engine.eval(source, name=f"cell[{self.execution_count}]")
        except accl.Error as e:
            return self._error(type(e).__name__, e.code, e.report.splitlines())
        except KeyboardInterrupt:
            return self._error("KeyboardInterrupt", "interrupted", ["interrupted; variables are as before this cell"])
        for path, before in images:
            after = _mtime(path)
            if after is not None and after != before:
                with open(path, "rb") as f:
                    self._show({"image/png": base64.b64encode(f.read()).decode("ascii"), "text/plain": path})
        if value is not None and not silent:
            self.send_response(
                self.iopub_socket,
                "execute_result",
                {"execution_count": self.execution_count, "data": display.bundle(value), "metadata": {}},
            )
        return ok

    def _error(self, ename: str, evalue: str, traceback: list) -> Dict[str, Any]:
        content = {"ename": ename, "evalue": evalue, "traceback": traceback}
        self.send_response(self.iopub_socket, "error", content)
        return {
            "status": "error",
            "execution_count": self.execution_count,
            "ename": ename,
            "evalue": evalue,
            "traceback": traceback,
        }


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def install(argv: list) -> None:
    """Install the kernel spec (`accl`) for this Python."""
    from jupyter_client.kernelspec import KernelSpecManager

    ap = argparse.ArgumentParser(prog="python -m accl.kernel install")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user")
    where.add_argument("--sys-prefix", action="store_true", help="in this Python's prefix (a venv)")
    where.add_argument("--prefix", help="under this prefix")
    args = ap.parse_args(argv)
    spec = {
        "argv": [sys.executable, "-m", "accl.kernel", "-f", "{connection_file}"],
        "display_name": "accl",
        "language": "accl",
        "interrupt_mode": "signal",
    }
    prefix = sys.prefix if args.sys_prefix else args.prefix
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "kernel.json"), "w") as f:
            json.dump(spec, f, indent=1)
        dest = KernelSpecManager().install_kernel_spec(d, "accl", user=args.user, prefix=prefix)
    print(f"installed the accl kernel in {dest}")


def main() -> None:
    if sys.argv[1:2] == ["install"]:
        install(sys.argv[2:])
        return
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(kernel_class=AcclKernel)


if __name__ == "__main__":
    main()
