"""Type stubs for the compiled extension."""

from typing import (
    Any,
    Callable,
    Generic,
    Iterable,
    Iterator,
    Literal,
    Mapping,
    Optional,
    TypeVar,
    Union,
    overload,
)

from ._custom_types import Extension

T = TypeVar("T")

#: The package's version, compiled in from Cargo.toml (``polycodec.__version__``).
__version__: str

# The one static list of format names (type checkers need a literal one); at run time
# ``FORMATS`` is the source, and tests/test_types_matrix.py checks that the two agree.
Format = Literal["json", "msgpack", "avro", "pickle"]
#: Each format this build implements, by name, with its capabilities:
#: ``unions_need_tag`` is False where the wire says which union alternative follows;
#: ``keeps_raw`` is True where a value can be kept as its encoded bytes (``Raw``).
FORMATS: Mapping[str, Mapping[str, bool]]
Rename = Union[
    None,
    Literal["camel", "pascal", "kebab", "lower", "upper", "screaming_snake"],
    Mapping[str, str],
    Callable[[str], Optional[str]],
]
Buffer = Union[bytes, bytearray, memoryview, str, "Raw"]

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
        errors: Literal["first", "all"] = "first",
        schema: Union[None, str, Mapping[str, Any], list[Any]] = None,
        framing: Optional[Literal["single-object", "confluent"]] = None,
        schema_id: Optional[int] = None,
        compression: Optional[Literal["null", "deflate", "snappy", "zstandard"]] = None,
        max_block_size: Optional[int] = None,
        max_decompressed_size: Optional[int] = None,
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
        errors: Literal["first", "all"] = "first",
        schema: Union[None, str, Mapping[str, Any], list[Any]] = None,
        framing: Optional[Literal["single-object", "confluent"]] = None,
        schema_id: Optional[int] = None,
        compression: Optional[Literal["null", "deflate", "snappy", "zstandard"]] = None,
        max_block_size: Optional[int] = None,
        max_decompressed_size: Optional[int] = None,
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
        self,
        data: Any,
        /,
        *,
        builtin_types: Optional[Iterable[Any]] = None,
        from_attributes: bool = False,
    ) -> T: ...
    def encode_one(self, value: T, /) -> bytes: ...
    def encode_many(self, values: Any, /) -> bytes: ...
    def encode_into(self, value: T, buffer: bytearray, /, offset: int = 0) -> None: ...
    def encode_many_into(self, values: Any, buffer: bytearray, /, offset: int = 0) -> None: ...
    def decode_one(self, buf: Buffer, /, *, writer_schema: Any = None) -> T: ...
    def decode_many(self, buf: Buffer, /) -> list[T]: ...
    def encode_stream(self, values: Iterable[T], /) -> bytes: ...
    def stream_decoder(self) -> StreamDecoder[T]: ...
    def write_file(
        self,
        fp: Any,
        values: Iterable[T],
        /,
        *,
        sync_interval: Optional[int] = None,
        metadata: Optional[dict[str, bytes]] = None,
        append: bool = False,
    ) -> int: ...
    def iter_file(self, fp: Any, /, *, chunk_size: int = 65536) -> FileIter[T]: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    def _field_access(self) -> dict[str, str]: ...

def encode_json_spec(spec: tuple[list[tuple[str, dict[str, Any]]], int], value: Any) -> bytes: ...

class Raw:
    """A value kept as its encoded bytes (JSON text, a MessagePack value) and written back as
    they are. A decoded Raw refers to the input ``bytes`` instead of copying them."""

    def __init__(self, data: Union[bytes, bytearray, memoryview, str, Raw] = b"", /) -> None: ...
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def view(self) -> memoryview:
        """The bytes as a memoryview, without a copy."""

    def copy(self) -> Raw:
        """A Raw with bytes of its own, which keeps no input it was decoded from alive."""

    def __reduce__(self) -> tuple[Any, ...]: ...

class StreamDecoder(Generic[T]):
    """Decodes one stream fed in chunks that may split it anywhere; not thread-safe."""

    def __init__(self, codec: Codec[T]) -> None: ...
    def feed(self, chunk: Union[bytes, bytearray, memoryview], /) -> list[T]: ...
    def finish(self) -> list[T]: ...
    @property
    def codec(self) -> Codec[T]: ...
    @property
    def offset(self) -> int: ...
    @property
    def index(self) -> int: ...
    @property
    def buffered(self) -> int: ...
    @property
    def ready(self) -> bool: ...
    @property
    def writer_schema(self) -> Any:
        """An Avro container's writer schema (JSON values), None until its header is fed."""

    @property
    def container_codec(self) -> Optional[str]:
        """An Avro container's codec name, None until its header is fed."""

    @property
    def metadata(self) -> Optional[dict[str, bytes]]:
        """An Avro container's user metadata, None until its header is fed."""

class FileIter(Generic[T]):
    """The lazy iterator `Codec.iter_file` returns."""

    def __iter__(self) -> FileIter[T]: ...
    def __next__(self) -> T: ...
    @property
    def writer_schema(self) -> Any:
        """The Avro container's writer schema (JSON values); reads the header if need be."""

    @property
    def codec(self) -> str:
        """The Avro container's codec: "null", "deflate", "snappy" or "zstandard"."""

    @property
    def metadata(self) -> dict[str, bytes]:
        """The Avro container's user metadata (header entries other than avro.*)."""

def rebuild_codec(type: Any, format: str, options: dict[str, Any]) -> Codec[Any]: ...

# The options generation of the extension's own caches (src/shape.rs), counted by
# polycodec._options each time a class is given options.
def _options_changed() -> None: ...

class _Compiled:
    """A codec's compiled plan and format state (src/python_api/), made by polycodec._build."""

    def __init__(
        self,
        spec: Any,
        format: str,
        format_options: dict[str, Any],
        compile_options: dict[str, Any],
        state: Any,
    ) -> None: ...

# The Avro schema layer (formats/avro/schema.rs, src/codecs/avro/schema.rs), used by _avro/.
class ParsedSchema:
    """A parsed, validated Avro schema, kept in Rust."""

    @property
    def canonical(self) -> str: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def root(self) -> int: ...
    def nodes(self) -> list[dict[str, Any]]:
        """The arena's nodes as dicts."""

def _avro_parse(text: str | bytes) -> ParsedSchema:
    """Parses and validates a schema (JSON text); ``ValueError`` with the reason if invalid."""

def _avro_fingerprint(data: bytes) -> int:
    """The CRC-64-AVRO fingerprint of ``data``, unsigned."""

# A diagnostic for benches/floor.py (src/py/floor.rs), not an API.
def _floor_create(
    cls: type[T], names: list[str], rows: list[tuple[Any, ...]], /, *, portable: bool = False
) -> list[T]:
    """Instances of the dataclass ``cls`` from ready field values (each row in the order of
    ``names``), created the way the decoders create records and nothing else (with
    ``portable``, a plain dataclass's fields stored without its inline values)."""

# A diagnostic for the tests (src/py/cpython/mod.rs), not an API.
def _layouts() -> dict[str, str]:
    """Each of the CPython layouts this module can read directly, by name, and ``"in use"``
    (known for this interpreter, passed its check when the module loaded, and not turned off
    by ``POLYCODEC_PORTABLE``) or the reason it is not."""
