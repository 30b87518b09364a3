"""``Ext``: a MessagePack extension value (a type code and its bytes), as ``typing.Any`` decodes
one polycodec has no Python type for, and as it is written back; msgspec's
``msgspec.msgpack.Ext`` with the same checks and equality."""

from __future__ import annotations

from typing import Any, Tuple, Union


class Ext:
    """A MessagePack extension value: ``code`` (-128 to 127) and ``data`` (the payload).

    Decoding MessagePack into ``Any`` gives one for every extension type other than the
    timestamp (-1); encoding one under ``Any`` writes it in the smallest extension form.
    """

    __slots__ = ("code", "data")

    code: int
    data: Union[bytes, bytearray, memoryview]

    def __init__(self, code: int, data: Union[bytes, bytearray, memoryview]) -> None:
        if not isinstance(code, int) or isinstance(code, bool):
            raise TypeError(f"code must be an int, got {type(code).__name__}")
        if not -128 <= code <= 127:
            raise ValueError("code must be an int between -128 and 127")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"data must be a bytes, bytearray or memoryview, got {type(data).__name__}"
            )
        self.code = code
        self.data = data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ext):
            return NotImplemented
        return self.code == other.code and self.data == other.data

    # ``data`` may be a bytearray, which can change: no hash, as msgspec's has none.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Ext({self.code!r}, {self.data!r})"

    def __reduce__(self) -> Tuple[Any, ...]:
        data = self.data if not isinstance(self.data, memoryview) else self.data.tobytes()
        return (Ext, (self.code, data))
