"""``python -m polycodec``: a command line for Avro object container files, in the manner of
avro-tools and ``python -m fastavro``. No class is needed: the types are built from the file's
writer schema (``_avro.schema_types``).

Exit status: 0 on success, 1 when a file cannot be read or written (the message, one line on
stderr, names the file and, for a value, its path), 2 for a command line argparse refuses.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Sequence, TextIO

from ._avro import CODECS, PRIMITIVES, SchemaError, parse_schema
from ._avro.schema_types import SchemaTypes, SchemaValueError
from ._errors import DecodeError, EncodeError
from ._polycodec import Codec

MAGIC = b"Obj\x01"
SYNC_SIZE = 16


class CliError(Exception):
    """A failure reported as ``polycodec: <message>`` with exit status 1."""


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


def _read_size(fp: BinaryIO, what: str, limit: int) -> int:
    size = _read_long(fp, what)
    if size < 0 or size > limit:
        raise CliError(f"{what} is {size}, which the file cannot hold (corrupt)")
    return size


def read_header(fp: BinaryIO, file_size: int) -> Header:
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
            key_size = _read_size(fp, "a metadata key's length", file_size)
            key = _read_exactly(fp, key_size, "a metadata key")
            value_size = _read_size(fp, "a metadata value's length", file_size)
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


def count_records(fp: BinaryIO, header: Header, file_size: int) -> int:
    """The sum of the blocks' record counts; each block's data is skipped, not read."""
    total = 0
    while fp.read(1) != b"":
        fp.seek(-1, io.SEEK_CUR)
        count = _read_long(fp, "a block's record count")
        if count < 0:
            raise CliError(f"a block at byte {fp.tell()} has a negative record count (corrupt)")
        size = _read_size(fp, "a block's byte size", file_size)
        if fp.tell() + size + SYNC_SIZE > file_size:
            raise CliError(f"the file ends inside a block at byte {fp.tell()} (truncated)")
        fp.seek(size, io.SEEK_CUR)
        if fp.read(SYNC_SIZE) != header.sync:
            raise CliError(f"the block before byte {fp.tell()} ends without the sync marker")
        total += count
    return total


def _file_size(fp: BinaryIO) -> int:
    return os.fstat(fp.fileno()).st_size


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


# -- the commands ----------------------------------------------------------------------------


def cmd_getschema(args: argparse.Namespace, out: TextIO) -> None:
    with _open(args.file) as fp:
        header = read_header(fp, _file_size(fp))
    try:
        out.write(json.dumps(json.loads(header.schema_text), indent=2) + "\n")
    except ValueError as err:
        raise CliError(f"the writer schema is not JSON: {err}") from None


def cmd_getmeta(args: argparse.Namespace, out: TextIO) -> None:
    with _open(args.file) as fp:
        header = read_header(fp, _file_size(fp))
    out.write(f"avro.codec\t{header.codec}\n")
    for key, value in header.metadata.items():
        out.write(f"{key}\t{value.decode('utf-8', 'backslashreplace')}\n")


def cmd_count(args: argparse.Namespace, out: TextIO) -> None:
    with _open(args.file) as fp:
        size = _file_size(fp)
        header = read_header(fp, size)
        out.write(f"{count_records(fp, header, size)}\n")


def cmd_tojson(args: argparse.Namespace, out: TextIO) -> None:
    with _open(args.file) as fp:
        header = read_header(fp, _file_size(fp))
        schema = _parse_schema_text(header.schema_text)
        types = _schema_types(schema)
        try:
            codec: Codec[Any] = Codec(types.type, "avro", schema=header.schema_text)
        except TypeError as err:
            raise CliError(f"polycodec cannot read this schema: {err}") from None
        fp.seek(0)
        indent = 2 if args.pretty else None
        separators = (", ", ": ") if args.pretty else (",", ":")
        for value in codec.iter_file(fp):
            text = json.dumps(types.to_json(value), indent=indent, separators=separators)
            out.write(text + "\n")


def _json_lines(source: TextIO, types: SchemaTypes, name: str, at: List[int]) -> Iterator[Any]:
    """The values of the lines; ``at[0]`` is the number of the line last read, for the
    message of an EncodeError that writing its value raises."""
    for number, line in enumerate(source, 1):
        at[0] = number
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as err:
            raise CliError(f"{name}:{number}: not JSON: {err}") from None
        try:
            yield types.from_json(data)
        except SchemaValueError as err:
            raise CliError(f"{name}:{number}: {err}") from None


def cmd_fromjson(args: argparse.Namespace, out: TextIO) -> None:
    try:
        with open(args.schema, encoding="utf-8") as schema_file:
            schema_text = schema_file.read()
    except OSError as err:
        raise CliError(f"{args.schema}: {err.strerror}") from None
    try:
        schema = _parse_schema_text(schema_text)
    except CliError as err:
        raise CliError(f"{args.schema}: {err}") from None
    types = _schema_types(schema)
    try:
        codec: Codec[Any] = Codec(types.type, "avro", schema=schema_text, compression=args.codec)
    except TypeError as err:
        raise CliError(f"polycodec cannot write this schema: {err}") from None
    source = sys.stdin if args.input == "-" else None
    try:
        with open(args.input, encoding="utf-8") if source is None else source as lines:
            with open(args.output, "wb") as target:
                at = [0]
                try:
                    codec.write_file(target, _json_lines(lines, types, args.input, at))
                except EncodeError as err:
                    raise CliError(f"{args.input}:{at[0]}: {err}") from None
    except OSError as err:
        raise CliError(f"{err.filename}: {err.strerror}") from None
    except CliError:
        os.unlink(args.output)  # a partial container is no container
        raise


def _open(path: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as err:
        raise CliError(err.strerror or str(err)) from None


# -- the parser -------------------------------------------------------------------------------

DESCRIPTION = """\
Look into and write Avro object container files (.avro), whatever wrote them: no class is
needed, the types come from the file's writer schema."""

EPILOG = """\
exit status: 0 on success, 1 when a file cannot be read or written (the message names the
file, and the path to the value: $.field), 2 for a bad command line.

examples:
  python -m polycodec getschema users.avro
  python -m polycodec count users.avro
  python -m polycodec tojson users.avro | head
  python -m polycodec fromjson --schema user.avsc --codec deflate users.json users.avro"""


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
        return sub

    def container(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("file", metavar="FILE", help="an Avro object container file")

    sub = command("getschema", "Print the file's writer schema, as indented JSON.")
    container(sub)
    sub.set_defaults(run=cmd_getschema)

    sub = command(
        "getmeta",
        "Print the file's codec and user metadata.",
        "One 'key<TAB>value' a line, avro.codec first;\nvalues as UTF-8 text, other bytes as "
        "\\x escapes.",
    )
    container(sub)
    sub.set_defaults(run=cmd_getmeta)

    sub = command(
        "count",
        "Print the number of records.",
        "Summed from the block headers: records are not decoded.",
    )
    container(sub)
    sub.set_defaults(run=cmd_count)

    sub = command(
        "tojson",
        "Print each record as a line of JSON.",
        "The Avro JSON encoding, as avro-tools tojson and fastavro.json_writer\n"
        'write it: a union\'s non-null value as {"branch": value}, bytes and fixed\n'
        "as strings of code points 0-255, logical types as their underlying type\n"
        "(a timestamp-millis as its long).",
    )
    container(sub)
    sub.add_argument("--pretty", action="store_true", help="indent each record over many lines")
    sub.set_defaults(run=cmd_tojson)

    sub = command(
        "fromjson",
        "Write a container file from lines of JSON.",
        "The lines are in the Avro JSON encoding, as tojson prints them. Each\n"
        "record has every field of the schema (defaults are not filled in) and\n"
        "no other. OUT is replaced, and removed when a line is refused.",
    )
    sub.add_argument(
        "--schema", required=True, metavar="SCHEMA.avsc", help="the writer schema, JSON text"
    )
    sub.add_argument(
        "--codec", choices=sorted(CODECS), default="null", help="the block codec (default: null)"
    )
    sub.add_argument("input", metavar="IN", help="JSON lines, or - for standard input")
    sub.add_argument("output", metavar="OUT", help="the container file to write")
    sub.set_defaults(run=cmd_fromjson)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    # fromjson names its files in its own messages; the other commands read one FILE.
    prefix = f"{args.file}: " if getattr(args, "file", None) else ""
    try:
        args.run(args, sys.stdout)
        sys.stdout.flush()
    except (CliError, DecodeError) as err:
        print(f"polycodec: {prefix}{err}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `tojson FILE | head`: the reader left, which is no error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
