"""Reading the header of a framed Avro message without decoding it: which framing, and which
schema it names (a schema-registry id or a fingerprint), so a consumer can fetch the writer
schema before calling ``decode_one(buf, writer_schema=...)``."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from ._avro import canonical_form, fingerprint, parse_schema
from ._errors import DecodeError

__all__ = ["AvroFrameInfo", "avro_frame_info", "avro_fingerprint"]


class AvroFrameInfo(NamedTuple):
    """What the header of a framed Avro message says."""

    #: ``"confluent"`` (magic byte 0, 4-byte big-endian schema id) or ``"single-object"``
    #: (``C3 01``, 8-byte little-endian CRC-64-AVRO fingerprint).
    framing: Literal["confluent", "single-object"]
    #: The schema-registry id (confluent) or the writer schema's fingerprint (single-object),
    #: as an unsigned int.
    id: int


def avro_frame_info(buf: Any) -> AvroFrameInfo:
    """The framing and schema id or fingerprint of a framed Avro message.

    ``buf`` is bytes, bytearray or memoryview. A buffer that starts with neither framing's
    marker, or is shorter than its header, raises ``DecodeError``; the datum after the header
    is not read.
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes, bytearray or memoryview, got {type(buf).__qualname__}")
    view = memoryview(buf)
    if view.ndim != 1 or view.itemsize != 1:
        view = memoryview(view.tobytes())  # the bytes of a view of wider items
    head = bytes(view[:10])
    if head[:2] == b"\xc3\x01":
        if len(head) < 10:
            raise DecodeError(
                "truncated Avro single-object header: C3 01 must be followed by an 8-byte "
                f"fingerprint, got {len(head) - 2} bytes (at $)"
            )
        return AvroFrameInfo("single-object", int.from_bytes(head[2:10], "little"))
    if head[:1] == b"\x00":
        if len(head) < 5:
            raise DecodeError(
                "truncated Confluent header: byte 0 must be followed by a 4-byte schema id, "
                f"got {len(head) - 1} bytes (at $)"
            )
        return AvroFrameInfo("confluent", int.from_bytes(head[1:5], "big"))
    shown = head[:2].hex(" ") or "nothing"
    raise DecodeError(
        "not a framed Avro message: expected C3 01 (single-object encoding) or byte 0 "
        f"(Confluent framing), got {shown} (at $)"
    )


def avro_fingerprint(schema: Any) -> int:
    """The CRC-64-AVRO fingerprint of a schema's Parsing Canonical Form (a dict, list or JSON
    text), as single-object encoding writes it: to match a frame's fingerprint to a schema."""
    if isinstance(schema, (bytes, bytearray)):
        schema = schema.decode("utf-8")
    return fingerprint(canonical_form(parse_schema(schema)).encode())
