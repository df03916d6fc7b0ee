"""wavelane.dask on a LocalCluster of worker processes: same bytes as one
process, and a worker killed mid-run loses no output."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest
import zarr
from distributed import Client, LocalCluster

import wavelane
import wavelane.dask
from conftest import gradient, write_pnm


@pytest.fixture(scope="module")
def client():
    # One coding thread per worker: the workers share this machine's cores.
    with LocalCluster(
        n_workers=3,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env={"RAYON_NUM_THREADS": "1"},
    ) as cluster, Client(cluster) as client:
        yield client


def make_inputs(directory, count, size):
    paths, images = [], []
    for i in range(count):
        image = gradient(size, size + 8 * i, 3 if i % 3 == 0 else 0, np.uint16 if i % 2 else np.uint8, seed=i)
        if image.ndim == 3:
            image = image.astype(np.uint8)
        path = directory / f"img{i:02}.{'ppm' if image.ndim == 3 else 'pgm'}"
        write_pnm(path, image)
        paths.append(path)
        images.append(image)
    return paths, images


def test_encode_files_equals_one_process(tmp_path, client):
    paths, images = make_inputs(tmp_path, 6, 96)
    out = tmp_path / "out"
    written = wavelane.dask.encode_files(paths, out, client=client, bpp=3.0, layers=2)
    assert [p.name for p, _ in written] == [p.stem + ".wl" for p in paths]
    for (dst, size), image in zip(written, images):
        assert dst.read_bytes() == wavelane.encode(image, bpp=3.0, layers=2)
        assert size == dst.stat().st_size


def test_encode_files_reports_a_bad_input(tmp_path, client):
    (tmp_path / "bad.pgm").write_bytes(b"P5 not an image")
    with pytest.raises(wavelane.WavelaneError, match="bad.pgm"):
        wavelane.dask.encode_files([tmp_path / "bad.pgm"], tmp_path / "out", client=client, retries=0)
    with pytest.raises(ValueError, match="both write"):
        wavelane.dask.encode_files(["a/x.png", "b/x.pgm"], tmp_path / "out", client=client)
    with pytest.raises(ValueError, match="unknown encoder options"):
        wavelane.dask.encode_files([], tmp_path / "out", client=client, quality=3)


def test_a_worker_killed_mid_run_loses_no_output(tmp_path, client):
    paths, images = make_inputs(tmp_path, 18, 640)
    out = tmp_path / "out"
    result = {}

    def run():
        try:
            result["written"] = wavelane.dask.encode_files(paths, out, client=client, lossless=True)
        except BaseException as e:  # reported by the assertion below
            result["error"] = e

    runner = threading.Thread(target=run)
    runner.start()
    # Wait until the run is under way (a first output is complete), then
    # kill a worker process that holds tasks in progress.
    deadline = time.monotonic() + 120
    killed = None
    while killed is None and time.monotonic() < deadline and runner.is_alive():
        if out.exists() and any(p.suffix == ".wl" for p in out.iterdir()):
            busy = {addr: keys for addr, keys in client.processing().items() if keys}
            if busy:
                addr, keys = next(iter(busy.items()))
                pid = client.run(os.getpid, workers=[addr])[addr]
                os.kill(pid, signal.SIGKILL)
                killed = (addr, keys)
        time.sleep(0.01)
    runner.join(timeout=300)
    assert killed is not None, "the run ended before a worker could be killed"
    assert "error" not in result, result.get("error")
    written = result["written"]
    assert len(written) == len(paths)
    for (dst, size), image in zip(written, images):
        data = dst.read_bytes()
        assert size == len(data)
        assert data == wavelane.encode(image, lossless=True)
        assert np.array_equal(wavelane.decode(data), image)
    # Every output complete, and the killed worker's temporaries removed by
    # the reruns that wrote the same targets.
    assert sorted(p.name for p in out.iterdir()) == sorted(p.stem + ".wl" for p in paths)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_to_zarr_equals_one_process(tmp_path, client, zarr_format):
    image = gradient(700, 520, 3, np.uint16, seed=9)
    chunks = (256, 200, 3)
    got = wavelane.dask.to_zarr(image, tmp_path / "dask.zarr", chunks=chunks, client=client,
                                zarr_format=zarr_format, lossless=True)
    assert np.array_equal(got[:], image)
    # The same array written by zarr in this process, without Dask.
    if zarr_format == 2:
        codec = {"compressors": wavelane.Wavelane(lossless=True)}
    else:
        from wavelane.zarr3 import Wavelane as Wavelane3

        codec = {"serializer": Wavelane3(lossless=True), "compressors": None}
    ref = zarr.create_array(tmp_path / "one.zarr", shape=image.shape, chunks=chunks, dtype=image.dtype,
                            zarr_format=zarr_format, fill_value=0, **codec)
    ref[:] = image
    files = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    dask_files, one_files = files(tmp_path / "dask.zarr"), files(tmp_path / "one.zarr")
    assert dask_files.keys() == one_files.keys()
    assert len(dask_files) > 8
    for name in dask_files:
        assert dask_files[name] == one_files[name], name
