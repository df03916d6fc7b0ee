from ._wavelane import WavelaneError as WavelaneError
from ._wavelane import __version__ as __version__
from ._wavelane import decode as decode
from ._wavelane import encode as encode
from ._wavelane import encode_file as encode_file
from ._wavelane import info as info
from .numcodecs import Wavelane as Wavelane

__all__ = ["encode", "decode", "info", "encode_file", "WavelaneError", "Wavelane", "__version__"]
