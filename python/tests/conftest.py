"""Shared helpers of the Python tests (run by scripts/test.sh: pytest python/tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def gradient(height: int, width: int, components: int = 0, dtype=np.uint8, seed: int = 0) -> np.ndarray:
    """A smooth image with noise: compressible, but not trivially."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    y, x = np.mgrid[0:height, 0:width]
    base = (x * 3 + y * 5) % (top + 1)
    shape = (height, width) if components == 0 else (height, width, components)
    noise = rng.integers(0, 16, shape)
    if components:
        base = base[..., None] + np.arange(components) * 17
    return ((base + noise) % (top + 1)).astype(dtype)


def write_pnm(path: Path, image: np.ndarray) -> None:
    """A binary PGM (H x W) or PPM (H x W x 3), 8- or 16-bit (big-endian)."""
    magic = b"P5" if image.ndim == 2 else b"P6"
    top = 255 if image.dtype == np.uint8 else 65535
    data = image.astype(">u2").tobytes() if top == 65535 else image.tobytes()
    path.write_bytes(magic + f" {image.shape[1]} {image.shape[0]} {top}\n".encode() + data)


def pytest_sessionfinish(session, exitstatus):
    # The suite never skips: a skipped test would hide a missing package or
    # device (scripts/test.sh runs it), so any skip fails the run.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped and session.exitstatus == 0:
        reporter.write_line(f"{skipped} test(s) skipped: the Python suite must not skip", red=True)
        session.exitstatus = 1
