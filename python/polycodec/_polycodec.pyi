"""Type stubs for the compiled extension."""

from typing import (
    Any,
    Callable,
    Generic,
    Iterable,
    Literal,
    Mapping,
    Optional,
    TypeVar,
    Union,
    overload,
)

from ._extension import Extension

T = TypeVar("T")

Format = Literal["json", "msgpack", "avro", "pickle"]
Rename = Union[
    None,
    Literal["camel", "pascal", "kebab", "screaming_snake"],
    Mapping[str, str],
    Callable[[str], Optional[str]],
]
Buffer = Union[bytes, bytearray, memoryview, str]

class Codec(Generic[T]):
    """Encodes and decodes values of one type in one format; the plan is compiled once."""

    @overload
    def __init__(
        self: Codec[T],
        type: type[T],
        format: Format = "json",
        *,
        rename: Rename = None,
        omit_defaults: bool = False,
        forbid_unknown_fields: bool = False,
        strict: bool = True,
        array_like: bool = False,
        extensions: Optional[Mapping[type, Extension]] = None,
        schema: Union[None, str, Mapping[str, Any], list[Any]] = None,
        framing: Optional[Literal["single-object", "confluent"]] = None,
        schema_id: Optional[int] = None,
        compression: Optional[Literal["null", "deflate", "snappy", "zstandard"]] = None,
        protocol: Optional[int] = None,
        fast_path: Union[None, bool, Literal["only"]] = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Codec[Any],
        type: Any,
        format: Format = "json",
        *,
        rename: Rename = None,
        omit_defaults: bool = False,
        forbid_unknown_fields: bool = False,
        strict: bool = True,
        array_like: bool = False,
        extensions: Optional[Mapping[type, Extension]] = None,
        schema: Union[None, str, Mapping[str, Any], list[Any]] = None,
        framing: Optional[Literal["single-object", "confluent"]] = None,
        schema_id: Optional[int] = None,
        compression: Optional[Literal["null", "deflate", "snappy", "zstandard"]] = None,
        protocol: Optional[int] = None,
        fast_path: Union[None, bool, Literal["only"]] = None,
    ) -> None: ...
    @property
    def type(self) -> Any: ...
    @property
    def format(self) -> str: ...
    @property
    def schema(self) -> Any: ...
    def json_schema(self, *, ref_template: Optional[str] = None) -> dict[str, Any]: ...
    def to_builtins(self, value: T, /, *, builtin_types: Optional[Iterable[Any]] = None) -> Any: ...
    def from_builtins(
        self, data: Any, /, *, builtin_types: Optional[Iterable[Any]] = None
    ) -> T: ...
    def encode_one(self, value: T, /) -> bytes: ...
    def encode_many(self, values: Any, /) -> bytes: ...
    def decode_one(self, buf: Buffer, /, *, writer_schema: Any = None) -> T: ...
    def decode_many(self, buf: Buffer, /) -> list[T]: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    def _field_access(self) -> dict[str, str]: ...

def encode_json_spec(spec: tuple[list[tuple[str, dict[str, Any]]], int], value: Any) -> bytes: ...
def rebuild_codec(type: Any, format: str, options: dict[str, Any]) -> Codec[Any]: ...
