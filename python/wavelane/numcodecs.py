"""The numcodecs codec ``Wavelane`` (codec id ``"wavelane"``).

It codes each chunk of a Zarr array as one ``.wl`` image, so a chunk must
be an image: shape H x W (gray) or H x W x C with C in 1..=4, dtype uint8
or uint16. Other chunks are a ``ValueError`` naming the shape or dtype.

>>> import numpy as np, zarr
>>> from wavelane.numcodecs import Wavelane
>>> z = zarr.create_array(store={}, shape=(600, 800), chunks=(256, 256),
...                       dtype="uint16", zarr_format=2,
...                       compressors=Wavelane(lossless=True))
>>> z[:] = (np.arange(600 * 800) % 65536).astype(np.uint16).reshape(600, 800)
>>> int(z[599, 799])
21247

The codec is registered through the ``numcodecs.codecs`` entry point, so
``numcodecs.get_codec({"id": "wavelane", "lossless": True})`` and arrays
written by another process find it without importing wavelane first. For
Zarr format 3 arrays use :class:`wavelane.zarr3.Wavelane` as the
``serializer`` (it wraps this codec).

``backend`` ("auto", "cpu" or "gpu") is where this process codes; it is
not part of the stored configuration (the bytes do not depend on it), so a
reader elsewhere decodes with "auto".
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray, ndarray_copy

from . import _wavelane

__all__ = ["Wavelane"]


class Wavelane(Codec):
    """Codes each chunk (H x W or H x W x C, C <= 4, uint8/uint16) as a ``.wl`` image.

    The options are those of :func:`wavelane.encode`: with neither ``bpp``
    nor ``psnr`` the chunks are coded losslessly.

    >>> import numpy as np
    >>> codec = Wavelane(lossless=True)
    >>> chunk = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    >>> bool((codec.decode(codec.encode(chunk)).reshape(64, 64) == chunk).all())
    True
    """

    codec_id = "wavelane"

    def __init__(
        self,
        lossless: bool = False,
        bpp: Optional[float] = None,
        psnr: Optional[float] = None,
        layers: int = 1,
        levels: Optional[int] = None,
        backend: str = "auto",
    ) -> None:
        self.lossless = bool(lossless)
        self.bpp = None if bpp is None else float(bpp)
        self.psnr = None if psnr is None else float(psnr)
        self.layers = int(layers)
        self.levels = None if levels is None else int(levels)
        self.backend = backend
        # Check the options now, on a 1 x 1 image on the CPU, rather than on
        # the first chunk of a long write: the same checks raise the same
        # errors. The level count is checked against each chunk's size.
        _wavelane.encode(
            np.zeros((1, 1), np.uint8),
            lossless=self.lossless,
            bpp=self.bpp,
            psnr=self.psnr,
            layers=self.layers,
            backend="cpu",
        )
        if self.levels is not None and not 0 <= self.levels <= 16:
            raise ValueError(f"levels={self.levels} is outside 0..=16")
        if backend not in ("auto", "cpu", "gpu"):
            raise ValueError(f"unknown backend {backend!r} (expected cpu, gpu or auto)")

    def encode(self, buf: Any) -> bytes:
        chunk = ensure_ndarray(buf)
        if chunk.dtype not in (np.uint8, np.uint16) or chunk.ndim not in (2, 3):
            raise ValueError(
                f"wavelane codes image chunks: H x W or H x W x C (C <= 4) of uint8 "
                f"or uint16, got shape {chunk.shape} of {chunk.dtype}"
            )
        return _wavelane.encode(
            chunk,
            lossless=self.lossless,
            bpp=self.bpp,
            psnr=self.psnr,
            layers=self.layers,
            levels=self.levels,
            backend=self.backend,
        )

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        data = buf if isinstance(buf, bytes) else ensure_contiguous_ndarray(buf)
        image = _wavelane.decode(data, backend=self.backend)
        if out is None:
            return image
        return ndarray_copy(image, out)

    def get_config(self) -> Dict[str, Any]:
        config: Dict[str, Any] = {"id": self.codec_id, "lossless": self.lossless}
        for key in ("bpp", "psnr", "levels"):
            if getattr(self, key) is not None:
                config[key] = getattr(self, key)
        config["layers"] = self.layers
        return config

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"Wavelane({args})"

