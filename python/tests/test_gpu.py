"""backend="gpu" through Python: the Vulkan device (lavapipe in CI) gives the CPU's bytes."""

from __future__ import annotations

import numpy as np

import wavelane
from conftest import gradient


def test_gpu_lossless_encode_and_decode_equal_the_cpu():
    for image in (gradient(300, 257, 3, np.uint16), gradient(129, 200, 0, np.uint8)):
        cpu = wavelane.encode(image, lossless=True, backend="cpu")
        gpu = wavelane.encode(image, lossless=True, backend="gpu")
        assert gpu == cpu
        assert np.array_equal(wavelane.decode(cpu, backend="gpu"), image)
        assert np.array_equal(wavelane.decode(cpu, reduce=1, backend="gpu"), wavelane.decode(cpu, reduce=1, backend="cpu"))


def test_gpu_lossy_encode_equals_the_cpu():
    # The default lossy wavelet is the fixed-point 9/7: the same bytes too.
    image = gradient(160, 144, 3, np.uint8, seed=2)
    assert wavelane.encode(image, bpp=1.5, backend="gpu") == wavelane.encode(image, bpp=1.5, backend="cpu")
