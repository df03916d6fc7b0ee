"""The codec for Zarr format 3 arrays: ``serializer=wavelane.zarr3.Wavelane(...)``.

Zarr 3 splits codecs into array-to-bytes serializers and bytes-to-bytes
compressors; a wavelane chunk is an image, so the codec is the serializer.
It wraps :class:`wavelane.numcodecs.Wavelane` the way zarr wraps numcodecs'
own array codecs (``zarr.codecs.numcodecs``), under the name
``numcodecs.wavelane`` (registered through the ``zarr.codecs`` entry
point, so readers find it without importing wavelane first).

>>> import numpy as np, zarr, warnings
>>> from wavelane.zarr3 import Wavelane
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")   # "not in the Zarr 3 specification"
...     z = zarr.create_array(store={}, shape=(300, 400, 3), chunks=(128, 128, 3),
...                           dtype="uint8", serializer=Wavelane(lossless=True))
>>> z[:] = 9
>>> int(z[299, 399, 2])
9

Needs zarr >= 3.1.3.
"""

from __future__ import annotations

from zarr.codecs.numcodecs._codecs import _NumcodecsArrayBytesCodec

__all__ = ["Wavelane"]


class Wavelane(_NumcodecsArrayBytesCodec, codec_name="wavelane"):
    """Zarr 3 serializer of :class:`wavelane.numcodecs.Wavelane`; same options."""
