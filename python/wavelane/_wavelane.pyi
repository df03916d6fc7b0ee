"""Type stubs of the extension module (python/src/lib.rs)."""

import os
from typing import Any, Dict, Literal, Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str

BytesLike = Union[bytes, bytearray, memoryview, npt.NDArray[np.uint8]]
BackendName = Literal["auto", "cpu", "gpu"]

class WavelaneError(ValueError):
    """An error of the wavelane library, carrying its message."""

def encode(
    array: npt.NDArray[Union[np.uint8, np.uint16]],
    *,
    lossless: bool = False,
    bpp: Optional[float] = None,
    psnr: Optional[float] = None,
    layers: int = 1,
    levels: Optional[int] = None,
    backend: BackendName = "auto",
) -> bytes:
    """Encodes an H x W or H x W x C (C in 1..=4) uint8/uint16 array into `.wl` bytes."""

def encode_file(
    src: Union[str, "os.PathLike[str]"],
    dst: Union[str, "os.PathLike[str]"],
    *,
    lossless: bool = False,
    bpp: Optional[float] = None,
    psnr: Optional[float] = None,
    layers: int = 1,
    levels: Optional[int] = None,
    backend: BackendName = "auto",
) -> int:
    """Encodes an image file (PNG/PNM/TIFF) into a `.wl` file, written atomically; returns its size."""

def decode(
    data: BytesLike,
    *,
    reduce: int = 0,
    layers: Optional[int] = None,
    backend: BackendName = "auto",
) -> npt.NDArray[Any]:
    """Decodes `.wl` bytes into an H x W or H x W x C array."""

def info(data: BytesLike) -> Dict[str, Any]:
    """What a `.wl` file holds, without decoding it."""
