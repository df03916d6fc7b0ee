"""The numcodecs codec with Zarr (zarr-python 3: format 2 and format 3 arrays)."""

from __future__ import annotations

import warnings

import numcodecs
import numpy as np
import pytest
import zarr

import wavelane
from conftest import gradient
from wavelane.numcodecs import Wavelane


def test_the_entry_point_registers_the_codec():
    codec = numcodecs.get_codec({"id": "wavelane", "lossless": True, "layers": 1})
    assert isinstance(codec, Wavelane)
    assert codec.get_config() == {"id": "wavelane", "lossless": True, "layers": 1}
    lossy = Wavelane(bpp=1.5, layers=2, levels=3)
    assert numcodecs.get_codec(lossy.get_config()) == lossy
    assert wavelane.Wavelane is Wavelane


def test_chunk_round_trip_and_out_buffer():
    codec = Wavelane(lossless=True)
    chunk = gradient(64, 48, 3, np.uint16)
    data = codec.encode(chunk)
    assert data == wavelane.encode(chunk, lossless=True)
    assert np.array_equal(codec.decode(data), chunk)
    out = np.empty(chunk.size, np.uint16)
    codec.decode(np.frombuffer(data, np.uint8), out=out)
    assert np.array_equal(out.reshape(chunk.shape), chunk)


@pytest.mark.parametrize(
    "chunk, message",
    [
        (np.zeros((4, 4), np.int16), "got shape \\(4, 4\\) of int16"),
        (np.zeros((2, 4, 4, 1), np.uint8), "got shape \\(2, 4, 4, 1\\)"),
        (np.zeros(16, np.uint8), "got shape \\(16,\\)"),
        (np.zeros((4, 4, 6), np.uint8), "1 to 4 components"),
    ],
)
def test_chunks_that_are_not_images_are_value_errors(chunk, message):
    with pytest.raises(ValueError, match=message):
        Wavelane(lossless=True).encode(chunk)


def test_bad_options_fail_at_construction():
    for kwargs in ({"bpp": 0}, {"bpp": 1, "psnr": 30}, {"layers": 40}, {"levels": 20}, {"backend": "x"}):
        with pytest.raises(ValueError):
            Wavelane(**kwargs)


@pytest.mark.parametrize("shape, chunks", [((600, 800), (256, 256)), ((300, 200, 3), (128, 96, 3))])
@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
def test_zarr_format_2_lossless(tmp_path, shape, chunks, dtype):
    image = gradient(*shape[:2], shape[2] if len(shape) == 3 else 0, np.dtype(dtype).type)
    z = zarr.create_array(
        tmp_path / "a.zarr", shape=shape, chunks=chunks, dtype=dtype, zarr_format=2,
        compressors=Wavelane(lossless=True),
    )
    z[:] = image
    back = zarr.open_array(tmp_path / "a.zarr", mode="r")
    assert back.metadata.compressor.get_config()["id"] == "wavelane"
    assert np.array_equal(back[:], image)
    # Each chunk file is one .wl image of the chunk (edge chunks padded).
    first = (tmp_path / "a.zarr" / ".".join(["0"] * len(shape))).read_bytes()
    assert wavelane.info(first)["shape"] == chunks


def test_zarr_format_2_lossy_bpp(tmp_path):
    image = gradient(512, 512, 0, np.uint16, seed=5)
    z = zarr.create_array(tmp_path / "b.zarr", shape=image.shape, chunks=(256, 256), dtype="uint16",
                          zarr_format=2, compressors=Wavelane(bpp=2.0))
    z[:] = image
    stored = sum(p.stat().st_size for p in (tmp_path / "b.zarr").glob("[0-9]*"))
    assert stored * 8 <= 2.0 * image.size + 4 * 8
    error = np.abs(zarr.open_array(tmp_path / "b.zarr")[:].astype(int) - image)
    assert 0 < error.mean() < 2000


def test_zarr_format_3_serializer(tmp_path):
    from wavelane.zarr3 import Wavelane as Wavelane3

    image = gradient(300, 400, 3, np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(tmp_path / "c.zarr", shape=image.shape, chunks=(128, 128, 3), dtype="uint8",
                              serializer=Wavelane3(lossless=True), compressors=None)
        z[:] = image
        back = zarr.open_array(tmp_path / "c.zarr", mode="r")
        assert np.array_equal(back[:], image)
    assert back.metadata.to_dict()["codecs"][0]["name"] == "numcodecs.wavelane"
    chunk = (tmp_path / "c.zarr" / "c" / "0" / "0" / "0").read_bytes()
    assert chunk == wavelane.encode(image[:128, :128], lossless=True)
