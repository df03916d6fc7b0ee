"""wavelane.encode / decode / info / encode_file: round trips, options, errors."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import wavelane
from conftest import gradient, write_pnm


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("components", [0, 1, 2, 3, 4])
def test_lossless_round_trip_is_exact(dtype, components):
    image = gradient(37, 53, components, dtype)
    data = wavelane.encode(image, lossless=True)
    assert isinstance(data, bytes)
    out = wavelane.decode(data)
    assert out.dtype == dtype
    # One component comes back as H x W whatever the input's rank.
    assert np.array_equal(out, image.reshape(37, 53) if components in (0, 1) else image)


def test_default_target_is_lossless_and_equals_lossless_true():
    image = gradient(40, 40, 3)
    assert wavelane.encode(image) == wavelane.encode(image, lossless=True)


def test_strided_arrays_code_like_their_contiguous_copy():
    image = gradient(64, 80, 3, np.uint16)
    view = image[::2, 1::3, :]
    assert not view.flags.c_contiguous
    assert wavelane.encode(view) == wavelane.encode(np.ascontiguousarray(view))
    fortran = np.asfortranarray(image)
    assert wavelane.encode(fortran) == wavelane.encode(image)


def test_bpp_target_bounds_the_size_and_is_lossy():
    image = gradient(128, 96, 0, np.uint8, seed=3)
    data = wavelane.encode(image, bpp=1.0)
    assert len(data) * 8 <= 1.0 * 128 * 96 + 8
    out = wavelane.decode(data)
    assert out.shape == image.shape and not np.array_equal(out, image)


def test_psnr_target_reaches_its_psnr():
    image = gradient(96, 96, 0, np.uint8, seed=4)
    out = wavelane.decode(wavelane.encode(image, psnr=35.0))
    mse = np.mean((out.astype(float) - image) ** 2)
    assert 10 * np.log10(255**2 / mse) >= 35.0 - 0.05


def test_reduce_layers_and_info():
    image = gradient(100, 61, 3, np.uint16)
    data = wavelane.encode(image, bpp=1.0, layers=3, levels=3)
    meta = wavelane.info(data)
    assert meta["shape"] == (100, 61, 3) and meta["dtype"] == "uint16"
    assert (meta["width"], meta["height"], meta["components"]) == (61, 100, 3)
    assert (meta["levels"], meta["layers"], meta["bit_depth"]) == (3, 3, 16)
    assert meta["complete"] and meta["bytes"] == meta["full_bytes"] == len(data)
    assert wavelane.decode(data, reduce=2).shape == (25, 16, 3)
    one = wavelane.decode(data, layers=1)
    assert one.shape == image.shape
    assert not np.array_equal(one, wavelane.decode(data))
    # A truncated prefix with the header decodes; info says it is a prefix.
    prefix = data[: len(data) // 2]
    assert not wavelane.info(prefix)["complete"]
    assert wavelane.decode(prefix).shape == image.shape


@pytest.mark.parametrize("kind", [bytearray, memoryview, lambda b: np.frombuffer(b, np.uint8)])
def test_decode_takes_bytes_like(kind):
    image = gradient(20, 30)
    data = wavelane.encode(image)
    assert np.array_equal(wavelane.decode(kind(data)), image)
    assert wavelane.info(kind(data))["shape"] == (20, 30)


@pytest.mark.parametrize(
    "array, kwargs, message",
    [
        (np.zeros((8, 8), np.int32), {}, "dtype int32"),
        (np.zeros((8, 8), np.float32), {}, "dtype float32"),
        (np.zeros(8, np.uint8), {}, "1 dimensions"),
        (np.zeros((2, 8, 8, 1), np.uint8), {}, "4 dimensions"),
        (np.zeros((8, 8, 5), np.uint8), {}, "1 to 4 components"),
        (np.zeros((0, 8), np.uint8), {}, "height and width"),
        (np.zeros((8, 70000), np.uint8), {}, "height and width"),
        ([[1, 2], [3, 4]], {}, "expected a numpy array"),
        (np.zeros((8, 8), np.uint8), {"bpp": 0}, "bpp=0"),
        (np.zeros((8, 8), np.uint8), {"bpp": -1.5}, "bpp=-1.5"),
        (np.zeros((8, 8), np.uint8), {"psnr": float("nan")}, "psnr=NaN"),
        (np.zeros((8, 8), np.uint8), {"bpp": 1, "psnr": 30}, "not both"),
        (np.zeros((8, 8), np.uint8), {"lossless": True, "bpp": 1}, "lossless=True"),
        (np.zeros((8, 8), np.uint8), {"layers": 0}, "layers=0"),
        (np.zeros((8, 8), np.uint8), {"layers": 2**70}, f"layers={2**70} is outside"),
        (np.zeros((8, 8), np.uint8), {"levels": 17}, "levels=17"),
        (np.zeros((8, 8), np.uint8), {"backend": "tpu"}, "unknown backend"),
    ],
)
def test_bad_encode_arguments_are_value_errors(array, kwargs, message):
    with pytest.raises(ValueError, match=message):
        wavelane.encode(array, **kwargs)


def test_library_errors_are_wavelane_errors_with_the_rust_message():
    assert issubclass(wavelane.WavelaneError, ValueError)
    # Too many levels for the size: the library's OptionsError::Levels.
    with pytest.raises(wavelane.WavelaneError, match="levels: a 8x8 image allows at most"):
        wavelane.encode(np.zeros((8, 8), np.uint8), levels=9)
    data = wavelane.encode(gradient(64, 64))
    with pytest.raises(wavelane.WavelaneError, match="--reduce 9"):
        wavelane.decode(data, reduce=9)
    for bad in (b"", b"not a wavelane file at all", data[:10]):
        with pytest.raises(wavelane.WavelaneError):
            wavelane.decode(bad)
        with pytest.raises(wavelane.WavelaneError):
            wavelane.info(bad)
    damaged = bytearray(data)
    damaged[len(data) - 5] ^= 0xFF
    with pytest.raises(wavelane.WavelaneError, match="CRC"):
        wavelane.decode(bytes(damaged))


def test_bad_decode_arguments_are_value_errors():
    data = wavelane.encode(gradient(16, 16))
    with pytest.raises(ValueError, match="expected bytes"):
        wavelane.decode(12345)
    with pytest.raises(ValueError, match="reduce=-1"):
        wavelane.decode(data, reduce=-1)
    with pytest.raises(ValueError, match=f"reduce={-(2**80)} is outside"):
        wavelane.decode(data, reduce=-(2**80))
    with pytest.raises(ValueError, match="layers=0"):
        wavelane.decode(data, layers=0)
    with pytest.raises(ValueError, match="unknown backend"):
        wavelane.decode(data, backend="nope")


def test_random_bytes_never_crash():
    rng = np.random.default_rng(7)
    data = wavelane.encode(gradient(48, 48, 3))
    for _ in range(200):
        junk = bytearray(data)
        for i in rng.integers(0, len(junk), 4):
            junk[i] = rng.integers(0, 256)
        try:
            wavelane.decode(bytes(junk))
        except wavelane.WavelaneError:
            pass


def test_the_gil_is_released_while_coding():
    # Python code of another thread runs while encode is inside Rust: the
    # main thread records a timestamp strictly between the call's start and
    # end. With the GIL held through the call none could be recorded.
    image = gradient(1536, 1536, 3, np.uint16)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        wavelane.encode(image, lossless=True, backend="cpu")
        span["end"] = time.perf_counter()

    thread = threading.Thread(target=work)
    stamps = []
    thread.start()
    while thread.is_alive():
        stamps.append(time.perf_counter())
    thread.join()
    start, end = span["start"], span["end"]
    margin = (end - start) * 0.1
    inside = [t for t in stamps if start + margin < t < end - margin]
    assert end - start > 0.05, "the encode was too quick to tell"
    assert inside, f"no Python ran during {end - start:.3f} s of encode"


def test_encode_file_writes_what_encode_returns(tmp_path):
    gray = gradient(70, 90, 0, np.uint16)
    rgb = gradient(50, 40, 3, np.uint8)
    write_pnm(tmp_path / "g.pgm", gray)
    write_pnm(tmp_path / "c.ppm", rgb)
    n = wavelane.encode_file(tmp_path / "g.pgm", tmp_path / "g.wl", lossless=True)
    assert (tmp_path / "g.wl").read_bytes() == wavelane.encode(gray, lossless=True)
    assert n == (tmp_path / "g.wl").stat().st_size
    wavelane.encode_file(str(tmp_path / "c.ppm"), str(tmp_path / "c.wl"), bpp=2.0)
    assert (tmp_path / "c.wl").read_bytes() == wavelane.encode(rgb, bpp=2.0)
    with pytest.raises(wavelane.WavelaneError, match="missing.png"):
        wavelane.encode_file(tmp_path / "missing.png", tmp_path / "m.wl")
    assert not (tmp_path / "m.wl").exists()
    with pytest.raises(OSError, match="no-such-dir"):
        wavelane.encode_file(tmp_path / "g.pgm", tmp_path / "no-such-dir" / "g.wl")
    # Only the outputs are left: no temporaries.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.ppm", "c.wl", "g.pgm", "g.wl"]
