"""accl from Python: an engine that runs accl source, with NumPy arrays in
and out (docs/python.md).

    import accl, numpy as np
    e = accl.Engine(device="auto")
    mod = e.compile("fn saxpy(a: f32, x: f32[], y: f32[]) { parallel loop for i in 0..len(x) { y[i] = a * x[i] + y[i]; } }")
    x = accl.zeros(1 << 20, np.float32)   # accl memory: passed without a copy
    mod.saxpy(2.0, x, y)                  # y is written in place
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence, Union

import numpy as np


def _stack_room(want: int = 64 << 20) -> None:
    """Let the main thread's stack grow to `want` bytes (RLIMIT_STACK's soft
    limit, raised when lower and the hard limit allows; Linux only).

    accl runs every input with at least 32 MiB of stack left. Under the
    usual 8 MiB limit that means a fresh stack segment mapped and unmapped
    at every call from Python (10 us of an empty call's 12, and more in a
    process whose other threads ran lately, such as a Vulkan driver's: the
    unmapping stops them). With room on the main thread's own stack, which
    Linux grows on demand up to the limit, no segment is made. Set
    ACCL_KEEP_STACK_LIMIT=1 to leave the limit alone."""
    if not sys.platform.startswith("linux") or os.environ.get("ACCL_KEEP_STACK_LIMIT"):
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return
    if hard != resource.RLIM_INFINITY and hard < want:
        return
    try:
        resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
    except (ValueError, OSError):
        pass


# Before the native module makes its first call on this thread, which is
# when the stack's extent is read.
_stack_room()

from . import _accl  # noqa: E402
from ._accl import (  # noqa: E402
    ApiError,
    CheckError,
    DeviceError,
    Engine as _Engine,
    Error,
    Function,
    Module,
    ParseError,
    RunError,
    devices,
)

__all__ = [
    "Engine",
    "Module",
    "Function",
    "Error",
    "ParseError",
    "CheckError",
    "DeviceError",
    "RunError",
    "ApiError",
    "devices",
    "zeros",
    "empty",
    "asarray",
    "is_shared",
    "is_copied",
]


def _render_traceback_(self: Error) -> list:
    # IPython shows this instead of a Python traceback: the diagnostic as
    # the command line prints it.
    return self.report.rstrip("\n").split("\n")


Error._render_traceback_ = _render_traceback_


def _shape(shape: Union[int, Sequence[int]]) -> list:
    return [int(shape)] if np.ndim(shape) == 0 else [int(n) for n in shape]


def zeros(shape: Union[int, Sequence[int]], dtype: Any = np.float32) -> np.ndarray:
    """A new array of zeros in accl's memory: engines take it without a copy."""
    return _accl.zeros(_shape(shape), np.dtype(dtype).name)


def empty(shape: Union[int, Sequence[int]], dtype: Any = np.float32) -> np.ndarray:
    """As `zeros` (accl's arrays always start zeroed)."""
    return zeros(shape, dtype)


def is_shared(a: Any) -> bool:
    """Whether `a` views a whole accl array (passed to accl as that array)."""
    return _accl.is_shared(a)


def is_copied(a: Any) -> bool:
    """Whether passing the NumPy array `a` to accl copies it: neither in
    accl's memory nor borrowable (Fortran order, strided, read-only,
    misaligned, bool). Row-major contiguous arrays are borrowed."""
    return _accl.is_copied(a)


def asarray(a: Any, dtype: Any = None) -> np.ndarray:
    """`a` in accl's memory: `a` itself when it is already there, else a copy
    (row-major, of `dtype` when given)."""
    src = np.asarray(a, dtype=dtype)
    if is_shared(src):
        return src
    out = zeros(src.shape, src.dtype)
    out[...] = src
    return out


class Engine(_Engine):
    """An accl engine: variables, declarations and device data persist
    between calls (as in a script or the REPL).

    `device` is "auto" (Vulkan device 0, else the host backend), "host", a
    device number, or a device list as ACCL_DEVICES takes it ("0,1", "gpu",
    "cpu").
    """

    def run(self, source_or_path: Union[str, "os.PathLike[str]"], args: Sequence[str] = ()) -> Any:
        """Run accl source, or the script file it names; the script's
        parameters (`arg(i)`) are `args`. Returns the value of a final
        expression, else None."""
        args = [str(a) for a in args]
        if isinstance(source_or_path, os.PathLike) or (
            "\n" not in source_or_path
            and source_or_path.endswith(".accl")
            and os.path.isfile(source_or_path)
        ):
            return super().run(None, path=os.fspath(source_or_path), args=args)
        return super().run(source_or_path, args=args)
