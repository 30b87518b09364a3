"""polycodec: typed encoding and decoding of Python dataclasses, driven by one compiled plan.

>>> import dataclasses, polycodec
>>> @dataclasses.dataclass
... class Point:
...     x: int
...     y: int
>>> codec = polycodec.Codec(Point, format="json")
>>> codec.encode_one(Point(1, 2))
b'{"x":1,"y":2}'
>>> codec.decode_one(b'{"x": 1, "y": 2}')
Point(x=1, y=2)
"""

import sys as _sys

from . import _custom_types, _msgpack_ext
from ._custom_types import Extension
from ._errors import DecodeError, EncodeError, ValidationError
from ._frames import AvroFrameInfo, avro_fingerprint, avro_frame_info
from ._meta import Avro, AvroName, Meta
from ._msgpack_ext import Ext
from ._options import Options, options
from ._polycodec import Codec, FileIter, Raw, StreamDecoder
from ._polycodec import __version__ as __version__
from ._unset import UNSET, UnsetType

# Renamed modules (issue 42): pickles of ``Ext`` and ``Extension`` made before name the old ones.
_sys.modules.setdefault(__name__ + "._ext", _msgpack_ext)
_sys.modules.setdefault(__name__ + "._extension", _custom_types)
from ._api import (
    decode_many,
    decode_one,
    encode_into,
    encode_many,
    encode_many_into,
    encode_one,
    from_builtins,
    json_schema,
    to_builtins,
)

__all__ = [
    "Avro",
    "AvroFrameInfo",
    "AvroName",
    "Codec",
    "DecodeError",
    "EncodeError",
    "Ext",
    "Extension",
    "FileIter",
    "Meta",
    "Options",
    "Raw",
    "StreamDecoder",
    "UNSET",
    "UnsetType",
    "ValidationError",
    "avro_fingerprint",
    "avro_frame_info",
    "decode_many",
    "decode_one",
    "encode_into",
    "encode_many",
    "encode_many_into",
    "encode_one",
    "from_builtins",
    "json_schema",
    "options",
    "to_builtins",
]
