"""Rich output for notebooks: accl values as MIME bundles, arrays as
pictures where a picture says more than the numbers (the Jupyter kernel
and the `%%accl` magic share it).

A 2-D array of at least 8 x 8 elements shows as a grayscale image (u8 as
is, other types scaled from their minimum to their maximum), an
H x W x 3 u8 array as an RGB image, and a 1-D array of at least 32
elements as a line plot; all with the text form too. PNG is written here
with zlib (8-bit gray or RGB needs nothing more), so the kernel needs no
imaging package.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any, Dict

import numpy as np

MIN_SIDE = 8
MIN_PLOT = 32
PLOT_W, PLOT_H = 480, 160


def png(pixels: np.ndarray) -> bytes:
    """PNG bytes of an H x W (gray) or H x W x 3 (RGB) uint8 array."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    h, w = pixels.shape[:2]
    color = 2 if pixels.ndim == 3 else 0
    rows = pixels.reshape(h, -1)
    raw = b"".join(b"\x00" + rows[i].tobytes() for i in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _scaled(a: np.ndarray) -> np.ndarray:
    """Values scaled from their minimum (0) to their maximum (255)."""
    a = np.asarray(a, dtype=np.float64)
    finite = np.isfinite(a)
    if not finite.any():
        return np.zeros(a.shape, dtype=np.uint8)
    lo, hi = a[finite].min(), a[finite].max()
    span = hi - lo if hi > lo else 1.0
    return np.clip(np.where(finite, (a - lo) / span * 255.0, 0), 0, 255).astype(np.uint8)


def _upscaled(img: np.ndarray, at_least: int = 256) -> np.ndarray:
    """Small images repeated pixel by pixel, so they can be seen."""
    k = max(1, at_least // max(img.shape[0], img.shape[1]))
    return np.repeat(np.repeat(img, k, axis=0), k, axis=1) if k > 1 else img


def plot(y: np.ndarray) -> bytes:
    """A line plot of a 1-D array as PNG bytes (black on white)."""
    y = np.asarray(y, dtype=np.float64)
    img = np.full((PLOT_H, PLOT_W), 255, dtype=np.uint8)
    n = len(y)
    xs = np.linspace(0, PLOT_W - 1, n).round().astype(int)
    ys = (PLOT_H - 1) - _scaled(y).astype(int) * (PLOT_H - 1) // 255
    for i in range(n):
        j = min(i + 1, n - 1)
        lo, hi = sorted((ys[i], ys[j]))
        for x in range(xs[i], max(xs[j], xs[i] + 1)):
            img[lo : hi + 1, x] = 0
    return png(img)


def picture(a: Any) -> bytes | None:
    """PNG bytes for an array that reads better as a picture, else None."""
    if not isinstance(a, np.ndarray):
        return None
    if a.ndim == 3 and a.shape[2] == 3 and a.dtype == np.uint8:
        return png(_upscaled(a))
    if a.ndim == 2 and min(a.shape) >= MIN_SIDE:
        img = a if a.dtype == np.uint8 else _scaled(a)
        return png(_upscaled(img))
    if a.ndim == 1 and len(a) >= MIN_PLOT and a.dtype != np.bool_:
        return plot(a)
    return None


def bundle(value: Any) -> Dict[str, str]:
    """The MIME bundle of an accl value: its text, and a picture of it."""
    data = {"text/plain": repr(value)}
    image = picture(value)
    if image is not None:
        data["image/png"] = base64.b64encode(image).decode("ascii")
    return data
