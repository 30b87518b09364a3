"""``python -m polycodec``: a command line for files of records, whatever wrote them: Avro
object container files, MessagePack streams, JSON Lines and pickles (of lists, or one after
another). No class is needed: Avro values get types built from the file's writer schema
(``_avro.schema_types``), the other formats are read untyped (``Codec(Any, ...)``).

Every input is read as a stream, a chunk at a time (``Codec.iter_file``; Avro ``count`` reads
block headers only), so memory stays bounded however large the file is: by one Avro block, one
pickle, one MessagePack value or JSON line, plus a chunk.

Exit status: 0 on success, 1 when a file cannot be read or written (the message, one line on
stderr, names the file and where: the record's index and byte offset, or a value's path),
2 for a command line argparse refuses.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import dataclass
from typing import (
    Any,
    BinaryIO,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Optional,
    Sequence,
)

from ._avro import COMPRESSIONS, PRIMITIVES, SchemaError, parse_schema
from ._avro.schema_types import SchemaTypes, SchemaValueError
from ._errors import DecodeError, EncodeError
from ._polycodec import Codec

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
FORMATS = ("avro", "msgpack", "jsonl", "pickle")
FORMAT_NAMES = {
    "avro": "an Avro object container file",
    "msgpack": "a MessagePack stream",
    "jsonl": "JSON Lines",
    "pickle": "pickles",
}
# The codec format of each stream format but Avro.
STREAM_CODECS: Dict[str, Literal["json", "msgpack", "pickle"]] = {
    "jsonl": "json",
    "msgpack": "msgpack",
    "pickle": "pickle",
}
# How far detection looks for the end of the first JSON line.
DETECT_SIZE = 1 << 20
# Records convert encodes at once: a pickle it writes is a list of up to this many, an Avro
# block holds this many (write_file's default of 4,000 would hold four times the objects).
BATCH = 1000


class CliError(Exception):
    """A failure reported as ``polycodec: <file>: <message>`` with exit status 1; the file is
    ``path``, or the command's input when that is None."""

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.path = path


class Replayable(io.RawIOBase):
    """An input read from its start again after a first look (format detection, the Avro
    header), without seeking: what was read is kept until ``replay`` has given it back. Works
    the same on a pipe and a file."""

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__()
        self.raw = raw
        # what a pipe has now, rather than waiting for all that was asked
        self.read_raw: Callable[[int], bytes] = getattr(raw, "read1", raw.read)
        self.kept = bytearray()
        self.at = 0
        self.keeping = True
        self.position = 0  # bytes given since the start (or the last replay)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.at < len(self.kept):
            size = min(len(view), len(self.kept) - self.at)
            view[:size] = self.kept[self.at : self.at + size]
            self.at += size
            if not self.keeping and self.at == len(self.kept):
                self.kept, self.at = bytearray(), 0
            self.position += size
            return size
        data = self.read_raw(len(view))
        if self.keeping:
            self.kept += data
            self.at += len(data)
        view[: len(data)] = data
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if (offset, whence) != (0, io.SEEK_CUR):  # what BufferedReader.tell asks
            raise io.UnsupportedOperation("seek")
        return self.position

    def replay(self, keep: bool = False) -> None:
        """From the start again; what is read from now on is kept only with ``keep``."""
        self.at = 0
        self.position = 0
        self.keeping = keep

    def close(self) -> None:
        """Not closed by a reader over it that is dropped (each look makes one): see release."""

    def release(self) -> None:
        self.raw.close()
        super().close()


@dataclass
class Header:
    schema_text: str
    codec: str
    metadata: Dict[str, bytes]  # the user's keys, not avro.*
    sync: bytes


def _read_exactly(fp: BinaryIO, size: int, what: str) -> bytes:
    data = fp.read(size)
    if len(data) != size:
        raise CliError(f"the file ends inside {what} (truncated)")
    return data


def _read_long(fp: BinaryIO, what: str) -> int:
    """One zig-zag varint, as Avro writes every int and long."""
    value = shift = 0
    while True:
        byte = fp.read(1)
        if not byte:
            raise CliError(f"the file ends inside {what} (truncated)")
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return (value >> 1) ^ -(value & 1)
        shift += 7
        if shift > 63:
            raise CliError(f"{what} is not a valid Avro long")


def _read_size(fp: BinaryIO, what: str) -> int:
    size = _read_long(fp, what)
    if size < 0 or size > 1 << 62:
        raise CliError(f"{what} is {size}, which no file can hold (corrupt)")
    return size


def read_header(fp: BinaryIO) -> Header:
    """The container header: magic, the metadata map, the sync marker."""
    if fp.read(4) != MAGIC:
        raise CliError("not an Avro object container file (it does not start with Obj\\x01)")
    metadata: Dict[str, bytes] = {}
    while True:
        count = _read_long(fp, "the header's metadata")
        if count == 0:
            break
        if count < 0:  # a block with its byte size, which we do not need
            count = -count
            _read_long(fp, "the header's metadata")
        for _ in range(count):
            key_size = _read_size(fp, "a metadata key's length")
            key = _read_exactly(fp, key_size, "a metadata key")
            value_size = _read_size(fp, "a metadata value's length")
            metadata[key.decode("utf-8", "replace")] = _read_exactly(
                fp, value_size, "a metadata value"
            )
    sync = _read_exactly(fp, SYNC_SIZE, "the header's sync marker")
    schema = metadata.pop("avro.schema", None)
    if schema is None:
        raise CliError("the header has no avro.schema")
    codec = metadata.pop("avro.codec", b"null").decode("utf-8", "replace")
    user = {k: v for k, v in metadata.items() if not k.startswith("avro.")}
    return Header(schema.decode("utf-8", "replace"), codec, user, sync)


def count_blocks(fp: Any, header: Header) -> int:
    """The sum of the blocks' record counts, read after the header; each block's data is
    skipped a chunk at a time, not decoded."""
    total = 0
    while fp.peek(1):
        start = fp.tell()
        count = _read_long(fp, f"the record count of the block at byte {start}")
        if count < 0:
            raise CliError(f"the block at byte {start} has a negative record count (corrupt)")
        left = _read_size(fp, f"the byte size of the block at byte {start}")
        while left:
            skipped = len(fp.read(min(left, 1 << 20)))
            if skipped == 0:
                raise CliError(f"the file ends inside the block at byte {start} (truncated)")
            left -= skipped
        sync = fp.read(SYNC_SIZE)
        if len(sync) < SYNC_SIZE:
            raise CliError(f"the file ends inside the block at byte {start} (truncated)")
        if sync != header.sync:
            raise CliError(f"the block at byte {start} ends without the sync marker (corrupt)")
        total += count
    return total


# -- inputs ----------------------------------------------------------------------------------


def detect(head: bytes, complete: bool) -> str:
    """The format of an input from its first bytes (``complete``: they are the whole input).

    Avro containers start with ``Obj\\x01`` and pickles of protocol 2 to 5 with ``\\x80`` and
    the protocol. MessagePack has no magic number, so JSON Lines is told from it by its first
    line: the bytes before the first newline (within 1 MiB) are UTF-8 JSON; when the first MiB
    holds no whole line and reads as text that starts as JSON does, the input is refused rather
    than guessed. Anything else is read as MessagePack; an empty input is an empty stream. Ambiguous inputs exist (the
    MessagePack stream of the ints 49 and 10 is the JSON line ``1``; an empty MessagePack map
    followed by the int 2 looks like a pickle's start): ``--from`` says what a file is."""
    if head.startswith(MAGIC) or (complete and head and MAGIC.startswith(head)):
        return "avro"  # (the start of the magic alone: a container cut short)
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return "pickle"
    lines = head.split(b"\n")
    if not complete:
        lines.pop()  # a line that may go on past what was read
    first = next((line for line in lines if line.strip()), None)
    if first is None and complete:
        return "jsonl"  # nothing, or blank lines: an empty stream
    if first is None:  # no whole line in the first MiB: text that may be JSON is not guessed
        try:
            text = head[: DETECT_SIZE - 4].decode("utf-8").lstrip()
        except UnicodeDecodeError:
            return "msgpack"
        if text[:1] in ("{", "[", '"'):
            raise CliError(
                "cannot tell JSON Lines from MessagePack (the first 1 MiB holds no whole line "
                "and reads as text): say which with --from jsonl or --from msgpack"
            )
        return "msgpack"
    try:
        json.loads(first.decode("utf-8"))
    except ValueError:
        return "msgpack"
    return "jsonl"


class Input:
    """One input file (``-``: standard input), its format, and for Avro its header and the
    Python types of its writer schema."""

    def __init__(self, path: str, format: Optional[str]) -> None:
        self.path = path
        try:
            raw: BinaryIO = sys.stdin.buffer if path == "-" else open(path, "rb")
        except OSError as err:
            raise CliError(err.strerror or str(err)) from None
        self.source = Replayable(raw)
        self.header: Optional[Header] = None
        try:
            head = io.BufferedReader(self.source).read(DETECT_SIZE)  # (until EOF or that)
            self.format = format or detect(head, len(head) < DETECT_SIZE)
            if self.format == "avro":  # the header is read, then read again by iter_file
                self.source.replay(keep=True)
                self.header = read_header(io.BufferedReader(self.source))
        except BaseException:
            self.close()
            raise
        self.source.replay()

    def name(self) -> str:
        return FORMAT_NAMES[self.format]

    def close(self) -> None:
        self.source.release()

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _schema_types(schema: Any) -> SchemaTypes:
    try:
        return SchemaTypes(schema)
    except TypeError as err:  # a schema polycodec cannot hold in Python types
        raise CliError(f"polycodec cannot read this schema: {err}") from None


def _parse_schema_text(text: str) -> Any:
    """The schema as JSON values, once polycodec's schema parser has accepted it."""
    try:
        parse_schema(text)
    except SchemaError as err:
        raise CliError(f"invalid Avro schema: {err}") from None
    if text.strip() in PRIMITIVES:  # a bare name such as long, which the parser takes too
        return text.strip()
    return json.loads(text)


def _avro_codec(types: SchemaTypes, schema_text: str, **options: Any) -> Codec[Any]:
    try:
        return Codec(types.type, "avro", schema=schema_text, **options)
    except TypeError as err:
        raise CliError(f"polycodec cannot read this schema: {err}") from None


class Records:
    """The records of an input, read lazily: for Avro, values of the writer schema's types
    (``types``); otherwise untyped values, each pickle that is a list giving its items."""

    def __init__(self, source: Input) -> None:
        self.source = source
        self.types: Optional[SchemaTypes] = None
        if source.header is not None:
            self.types = _schema_types(_parse_schema_text(source.header.schema_text))
            self.codec = _avro_codec(self.types, source.header.schema_text)
        else:
            self.codec = Codec(Any, STREAM_CODECS[source.format])
        self.index = 0  # records given so far

    def __iter__(self) -> Iterator[Any]:
        values = self.codec.iter_file(io.BufferedReader(self.source.source))
        if self.source.format != "pickle":
            for value in values:
                yield value
                self.index += 1
            return
        for value in values:
            if type(value) is list:  # a pickle of a list: its items are the records
                for item in value:
                    yield item
                    self.index += 1
            else:
                yield value
                self.index += 1

    def json_lines(self, pretty: bool = False) -> Callable[[Any], bytes]:
        """A record to its line of JSON: for Avro, its Avro JSON encoding (as avro-tools tojson
        and fastavro.json_writer write it), otherwise polycodec's untyped JSON form."""
        types = self.types
        if types is not None:
            return lambda value: _json_line(types.to_json(value), pretty)
        json_codec: Codec[Any] = Codec(Any, "json")
        if pretty:
            return lambda value: _json_line(json.loads(json_codec.encode_one(value)), pretty)
        return lambda value: json_codec.encode_one(value) + b"\n"

    def to_python(self) -> Callable[[Any], Any]:
        """A record to plain Python values (dicts keyed by the Avro field names, enum symbols
        as strings; bytes, datetimes, decimals and UUIDs as themselves)."""
        types = self.types
        if types is None:
            return lambda value: value
        return types.to_python


# -- outputs ---------------------------------------------------------------------------------


def _json_line(value: Any, pretty: bool = False) -> bytes:
    if pretty:
        return (json.dumps(value, indent=2) + "\n").encode()
    return (json.dumps(value, separators=(",", ":")) + "\n").encode()


def _batches(values: Iterable[Any], size: int) -> Iterator[List[Any]]:
    batch: List[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# -- the commands ----------------------------------------------------------------------------


def _where(records: Records, err: Exception) -> str:
    """Where a record that could not be read or converted is: its index (the decoder's own
    messages also name the stream value and its byte offset)."""
    return f"record {records.index}: {err}"


def cmd_cat(args: argparse.Namespace, out: BinaryIO) -> None:
    with Input(args.file, args.source_format) as source:
        records = Records(source)
        json_line = records.json_lines(args.pretty)
        try:
            for value in records:  # out is buffered: the lines before an error are written
                out.write(json_line(value))
        except (ValueError, EncodeError) as err:  # NaN, or a value JSON cannot hold
            if isinstance(err, DecodeError):
                raise
            raise CliError(_where(records, err)) from None


def cmd_schema(args: argparse.Namespace, out: BinaryIO) -> None:
    with Input(args.file, args.source_format) as source:
        if source.header is None:
            raise CliError(
                f"this is {source.name()}, which has no schema: schema reads the writer schema "
                "of an Avro object container file"
            )
        try:
            schema = json.loads(source.header.schema_text)
        except ValueError as err:
            raise CliError(f"the writer schema is not JSON: {err}") from None
        out.write((json.dumps(schema, indent=2) + "\n").encode())


def cmd_getmeta(args: argparse.Namespace, out: BinaryIO) -> None:
    with Input(args.file, args.source_format) as source:
        if source.header is None:
            raise CliError(f"this is {source.name()}: getmeta reads an Avro container's header")
        lines = [f"avro.codec\t{source.header.codec}\n"]
        for key, value in source.header.metadata.items():
            lines.append(f"{key}\t{value.decode('utf-8', 'backslashreplace')}\n")
        out.write("".join(lines).encode())


def cmd_count(args: argparse.Namespace, out: BinaryIO) -> None:
    with Input(args.file, args.source_format) as source:
        if source.header is not None:  # summed from the block headers
            reader = io.BufferedReader(source.source)
            total = count_blocks(reader, read_header(reader))
        else:
            total = sum(1 for _ in Records(source))
        out.write(f"{total}\n".encode())


def _read_schema(path: str) -> tuple[str, SchemaTypes]:
    try:
        with open(path, encoding="utf-8") as schema_file:
            text = schema_file.read()
    except OSError as err:
        raise CliError(str(err.strerror), path) from None
    try:
        return text, _schema_types(_parse_schema_text(text))
    except CliError as err:
        raise CliError(str(err), path) from None


def _to_avro_values(records: Records, types: SchemaTypes, same_schema: bool) -> Iterator[Any]:
    """The records as values of ``types``: Avro records as they are (same schema) or through
    their plain values; JSON Lines in the Avro JSON encoding; other values as plain values
    (dicts of field names)."""
    if same_schema:
        yield from records
        return
    if records.source.format == "jsonl":
        for data in records:
            try:
                yield types.from_json(data)
            except SchemaValueError as err:
                raise CliError(_where(records, err)) from None
        return
    to_python = records.to_python()
    for value in records:
        try:
            yield types.from_python(to_python(value))
        except SchemaValueError as err:
            raise CliError(_where(records, err)) from None


def _encoded(records: Records, target: str) -> Iterator[bytes]:
    """The bytes of the records in a stream format (not Avro)."""
    if target == "jsonl":
        json_line = records.json_lines()
        return (json_line(value) for value in records)
    to_python = records.to_python()
    plain = (to_python(value) for value in records)
    if target == "msgpack":
        msgpack: Codec[Any] = Codec(Any, "msgpack")
        return (msgpack.encode_stream(batch) for batch in _batches(plain, BATCH))
    pickle: Codec[Any] = Codec(Any, "pickle")
    return (pickle.encode_one(batch) for batch in _batches(plain, BATCH))


def cmd_convert(args: argparse.Namespace, out: BinaryIO) -> None:
    if args.codec is not None and args.target != "avro":
        raise CliError("--codec is for --to avro (the block codec of the container)")
    if args.schema is not None and args.target != "avro":
        raise CliError("--schema is for --to avro (the writer schema of the container)")
    if args.input != "-" and os.path.exists(args.output):
        if os.path.samefile(args.input, args.output):
            raise CliError("the output would overwrite the input", args.output)
    with Input(args.input, args.source_format) as source:
        records = Records(source)
        if args.target == "avro":
            if args.schema is not None:
                schema_text, types = _read_schema(args.schema)
            elif source.header is not None and records.types is not None:
                schema_text, types = source.header.schema_text, records.types
            else:
                raise CliError(
                    f"this is {source.name()}, which has no schema: --to avro needs "
                    "--schema FILE.avsc (the writer schema)"
                )
            codec = _avro_codec(types, schema_text, compression=args.codec or "null")
            values = _to_avro_values(records, types, types is records.types)
            write: Callable[[BinaryIO], object] = lambda target: codec.write_file(
                target, values, sync_interval=BATCH
            )
        else:
            pieces = _encoded(records, args.target)

            def write(target: BinaryIO) -> object:
                for piece in pieces:
                    target.write(piece)
                return None

        def write_all(target: BinaryIO) -> None:
            try:
                write(target)
            except (EncodeError, ValueError) as err:
                # write_file wraps what the values' iterator raised in an EncodeError
                cause = err.__cause__
                if isinstance(cause, (DecodeError, CliError)):
                    raise cause from None
                if isinstance(err, DecodeError):
                    raise
                raise CliError(_where(records, err)) from None

        if args.output == "-":
            write_all(out)
            return
        try:
            with open(args.output, "wb") as target:
                write_all(target)
        except OSError as err:
            if os.path.exists(args.output):  # written in part (a full disk)
                os.unlink(args.output)
            raise CliError(str(err.strerror), err.filename or args.output) from None
        except BaseException:
            os.unlink(args.output)  # a partial file is no file of its format
            raise


# -- the parser -------------------------------------------------------------------------------

DESCRIPTION = """\
Look into and convert files of records, whatever wrote them: Avro object container
files, MessagePack streams, JSON Lines, pickles. No class is needed. Files are read
as streams, in bounded memory however large they are."""

EPILOG = """\
formats (--from, detected when not given; --to):
  avro     an Avro object container file (starts with Obj\\x01)
  pickle   pickles one after another (protocol 2 to 5: starts with \\x80 and the
           protocol); a pickle of a list gives its items as records
  jsonl    JSON Lines: a JSON value a line (told by its first line being JSON)
  msgpack  MessagePack values one after another (no magic number: anything that
           is none of the above)

exit status: 0 on success, 1 when a file cannot be read or written (the message
names the file and where: the record, its byte offset, the path to the value),
2 for a bad command line.

examples:
  python -m polycodec cat events.avro | head
  python -m polycodec count events.msgpack
  python -m polycodec schema events.avro
  python -m polycodec convert events.avro events.jsonl --to jsonl
  python -m polycodec convert events.jsonl events.avro --to avro --schema event.avsc

avro-tools names: getschema (schema), tojson (cat), fromjson (convert --from jsonl
--to avro), getmeta (an Avro container's codec and user metadata)."""

JSON_OUT = """\
Avro records are printed in the Avro JSON encoding, as avro-tools tojson and
fastavro.json_writer write it: a union's non-null value as {"branch": value},
bytes and fixed as strings of code points 0-255, logical types as their
underlying type (a timestamp-millis as its long). Other formats' values are
printed in polycodec's untyped JSON form: bytes as base64, datetimes, dates,
times, decimals and UUIDs as strings, tuples and sets as arrays."""

TO_AVRO = """\
--to avro writes under the input's writer schema when the input is Avro, else
under --schema (required: no schema is guessed). JSON Lines are read in the Avro
JSON encoding (as cat prints Avro records); MessagePack and pickle records are
plain values: a dict of the record's fields, a union's value as itself. Each
record has every field of the schema (defaults are not filled in)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m polycodec",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, summary: str, details: str = "") -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=summary,
            description=f"{summary}\n\n{details}" if details else summary,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument(
            "--from",
            dest="source_format",
            choices=FORMATS,
            help="the input's format (default: detected from its first bytes)",
        )
        return sub

    def one_file(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("file", metavar="FILE", help="the input file, or - for standard input")

    def alias(of: str) -> str:
        return f"Another name for {of}, as avro-tools calls it."

    for name, summary in (
        ("cat", "Print each record as a line of JSON."),
        ("tojson", alias("cat")),
    ):
        sub = command(name, summary, JSON_OUT)
        one_file(sub)
        sub.add_argument("--pretty", action="store_true", help="indent each record over many lines")
        sub.set_defaults(run=cmd_cat)

    for name, summary in (
        ("schema", "Print an Avro container's writer schema, as indented JSON."),
        ("getschema", alias("schema")),
    ):
        sub = command(
            name, summary, "Other formats carry no schema: they are an error (exit status 1)."
        )
        one_file(sub)
        sub.set_defaults(run=cmd_schema)

    sub = command(
        "count",
        "Print the number of records.",
        "Avro: summed from the block headers, records are not decoded. Other formats:\n"
        "the values are decoded one at a time and counted (a pickle of a list counts\n"
        "its items).",
    )
    one_file(sub)
    sub.set_defaults(run=cmd_count)

    sub = command(
        "getmeta",
        "Print an Avro container's codec and user metadata.",
        "One 'key<TAB>value' a line, avro.codec first;\nvalues as UTF-8 text, other bytes as "
        "\\x escapes.",
    )
    one_file(sub)
    sub.set_defaults(run=cmd_getmeta)

    def convert_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--codec",
            choices=sorted(COMPRESSIONS),
            help="the Avro block codec (--to avro only; default: null)",
        )
        sub.add_argument("input", metavar="IN", help="the input file, or - for standard input")
        sub.add_argument(
            "output", metavar="OUT", help="the file to write (replaced), or - for standard output"
        )
        sub.set_defaults(run=cmd_convert)

    sub = command(
        "convert",
        "Convert a file to another format.",
        "jsonl: a JSON line a record, as cat prints them. msgpack: the records one after\n"
        "another. pickle: pickles of lists of up to 1000 records, one after another\n"
        "(pickle.load reads a file of up to 1000 records whole). avro: an object\n"
        "container file. OUT is removed when a record is refused.\n\n" + TO_AVRO,
    )
    sub.add_argument("--to", dest="target", choices=FORMATS, required=True, help="OUT's format")
    sub.add_argument(
        "--schema", metavar="SCHEMA.avsc", help="the writer schema, JSON text (--to avro only)"
    )
    convert_options(sub)

    sub = command(
        "fromjson",
        "Write an Avro container from JSON Lines: convert --from jsonl --to avro.",
        TO_AVRO,
    )
    sub.add_argument(
        "--schema", required=True, metavar="SCHEMA.avsc", help="the writer schema, JSON text"
    )
    sub.set_defaults(source_format="jsonl", target="avro")
    convert_options(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "fromjson":
        args.source_format = "jsonl"
    the_input = getattr(args, "file", None) or getattr(args, "input", None)
    out = sys.stdout.buffer
    try:
        args.run(args, out)
        out.flush()
    except (CliError, DecodeError) as err:
        path = (err.path if isinstance(err, CliError) else None) or the_input
        print(f"polycodec: {path}: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `cat FILE | head`: the reader left, which is no error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
