"""wavelane: the wavelane wavelet image codec for numpy, numcodecs/Zarr and Dask.

>>> import numpy as np, wavelane
>>> img = np.random.default_rng(0).integers(0, 4096, (64, 48, 3), dtype=np.uint16)
>>> data = wavelane.encode(img, lossless=True)
>>> bool((wavelane.decode(data) == img).all())
True
>>> wavelane.info(data)["shape"]
(64, 48, 3)

``encode``, ``decode`` and ``info`` are the Rust library's own code
(the extension module ``wavelane._wavelane``); they release the GIL while
coding. Errors of the library are :class:`WavelaneError`, a subclass of
``ValueError``; bad arguments are ``ValueError``. The numcodecs codec is
``wavelane.numcodecs.Wavelane`` (also ``wavelane.Wavelane``, imported on
first use so that numcodecs stays optional), the Dask helpers are in
``wavelane.dask``. docs/python.md in the repository is the guide.
"""

from ._wavelane import WavelaneError, __version__, decode, encode, encode_file, info

__all__ = ["encode", "decode", "info", "encode_file", "WavelaneError", "Wavelane", "__version__"]


def __getattr__(name):
    # numcodecs is an optional dependency: import the codec only when asked.
    if name == "Wavelane":
        from .numcodecs import Wavelane

        return Wavelane
    raise AttributeError(f"module 'wavelane' has no attribute {name!r}")
