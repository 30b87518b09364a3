"""``python -m polycodec``, run as users run it (a subprocess of this interpreter), on container
files that fastavro wrote; fastavro's reading of the same files is the oracle (its
``json_writer`` for the Avro JSON encoding tojson prints), apache avro reads what fromjson
writes."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import io
import json
import os
import pickle
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

import avro.datafile
import avro.io
import fastavro
import msgpack
import pytest

import polycodec

UTC = datetime.timezone.utc

SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Event",
    "namespace": "com.example",
    "fields": [
        {"name": "class", "type": "int"},  # a Python keyword
        {"name": "__init__", "type": "string"},  # a dataclass's own name
        {"name": "flag", "type": "boolean"},
        {"name": "big", "type": "long"},
        {"name": "ratio", "type": "float"},
        {"name": "score", "type": "double"},
        {"name": "blob", "type": "bytes"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "clock_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {
            "name": "cost",
            "type": {
                "type": "fixed",
                "name": "Money",
                "size": 5,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 3,
            },
        },
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "counts", "type": {"type": "map", "values": "long"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "payload",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Click",
                    "fields": [{"name": "x", "type": "int"}, {"name": "y", "type": "int"}],
                },
                {
                    "type": "record",
                    "name": "Key",
                    "namespace": "com.other",
                    "fields": [{"name": "code", "type": "string"}],
                },
                "long",
                {"type": "array", "items": "Kind"},
            ],
        },
        {"name": "parent", "type": ["null", "Event"], "default": None},  # recursive
    ],
}


def _event(i: int, parent: Any = None) -> dict[str, Any]:
    payloads: list[Any] = [None, {"x": i, "y": -i}, {"code": f"k{i}"}, 2**40 + i, ["C", "A"]]
    return {
        "class": i - 3,
        "__init__": f"é{i}\u2603",
        "flag": i % 2 == 0,
        "big": -(2**62) + i,
        "ratio": 0.25 * i,
        "score": 1e300 / (i + 1),
        "blob": bytes(range(i % 7, 256, 37)),
        "at": datetime.datetime(2024, 2, 29, 12, 0, i % 60, 123000, tzinfo=UTC),
        "at_us": datetime.datetime(1969, 7, 20, 20, 17, 40, i, tzinfo=UTC),
        "local": datetime.datetime(2001, 1, 1, 0, 0, 0, 999999 - i),
        "day": datetime.date(1900 + i % 200, 3, 1),
        "clock": datetime.time(23, 59, 59, 999000),
        "clock_us": datetime.time(0, 0, 0, i),
        "price": decimal.Decimal(f"{(-1) ** i * i * 1234567 % 10**9}").scaleb(-2),
        "cost": decimal.Decimal(-i * 1000 - 1).scaleb(-3),
        "id": uuid.UUID(int=i * 2**100 + i),
        "kind": "ABC"[i % 3],
        "hash": i.to_bytes(4, "big"),
        "tags": [f"t{j}" for j in range(i % 4)],
        "counts": {f"c{j}": j * i for j in range(i % 3)},
        "note": None if i % 2 else f"n{i}",
        "payload": payloads[i % len(payloads)],
        "parent": parent,
    }


RECORDS = [_event(i, _event(100 + i) if i % 4 == 1 else None) for i in range(40)]
CODECS = ["null", "deflate", "snappy", "zstandard"]


def run(
    *args: str, stdin: str | None = None, stdin_path: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m polycodec ARGS``; standard input is ``stdin`` or the file ``stdin_path``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(stdin_path.open("rb")) if stdin_path else None
        return subprocess.run(
            [sys.executable, "-m", "polycodec", *args],
            capture_output=True,
            text=True,
            input=stdin,
            stdin=source,
            env=env,
            timeout=120,
        )


def _write(path: Path, records: list[Any], schema: Any = SCHEMA, **options: Any) -> Path:
    with path.open("wb") as fp:
        fastavro.writer(fp, schema, records, **options)
    return path


def _fastavro_json(path: Path) -> list[Any]:
    """The Avro JSON encoding of the file's records, as fastavro writes it."""
    with path.open("rb") as fp:
        reader = fastavro.reader(fp)
        out = io.StringIO()
        fastavro.json_writer(out, reader.writer_schema, list(reader))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _fails(result: subprocess.CompletedProcess[str], *phrases: str) -> None:
    """Exit status 1, one line on stderr with each phrase, no traceback, nothing on stdout
    after what was printed before the failure."""
    assert result.returncode == 1, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("polycodec: "), result.stderr
    assert "Traceback" not in result.stderr
    for phrase in phrases:
        assert phrase in lines[0], (phrase, lines[0])


@pytest.mark.parametrize("codec", CODECS)
def test_tojson_matches_fastavro_json_writer(tmp_path: Path, codec: str) -> None:
    path = _write(tmp_path / "events.avro", RECORDS, codec=codec, sync_interval=700)
    result = run("tojson", str(path))
    assert result.returncode == 0, result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert printed == _fastavro_json(path)
    # One compact line a record, fields in schema order.
    first = result.stdout.splitlines()[0]
    assert first.startswith('{"class":-3,"__init__":')


def test_tojson_pretty_is_the_same_json(tmp_path: Path) -> None:
    path = _write(tmp_path / "events.avro", RECORDS[:3])
    result = run("tojson", "--pretty", str(path))
    assert result.returncode == 0, result.stderr
    decoder = json.JSONDecoder()
    text, values, at = result.stdout, [], 0
    while at < len(text.rstrip()):
        value, at = decoder.raw_decode(text, at)
        values.append(value)
        at += 1
    assert values == _fastavro_json(path)
    assert text.count("\n") > 3 * len(SCHEMA["fields"])


def test_tojson_root_that_is_not_a_record(tmp_path: Path) -> None:
    schema = ["null", "long", {"type": "map", "values": "bytes"}]
    path = _write(tmp_path / "union.avro", [None, 5, {"a": b"\x00\x80"}], schema=schema)
    result = run("tojson", str(path))
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == _fastavro_json(path)


@pytest.mark.parametrize("codec", CODECS)
def test_count_and_header(tmp_path: Path, codec: str) -> None:
    meta = {"owner": "data-team", "binary": "\x00\xff"}
    path = _write(tmp_path / "e.avro", RECORDS, codec=codec, sync_interval=500, metadata=meta)
    with path.open("rb") as fp:
        reader = fastavro.reader(fp)
        blocks = sum(1 for _ in fastavro.block_reader(open(path, "rb")))
        header_schema = json.loads(reader.metadata["avro.schema"])
    assert blocks > 3  # counted over many blocks
    result = run("count", str(path))
    assert (result.returncode, result.stdout) == (0, f"{len(RECORDS)}\n")
    result = run("getschema", str(path))
    assert result.returncode == 0 and json.loads(result.stdout) == header_schema
    result = run("getmeta", str(path))
    assert result.returncode == 0
    # fastavro stores metadata values as UTF-8 text: "\xff" is two bytes.
    assert result.stdout.splitlines() == [
        f"avro.codec\t{codec}",
        "owner\tdata-team",
        "binary\t\x00\u00ff",
    ]


def test_count_does_not_decode_records(tmp_path: Path) -> None:
    """A block whose data is garbage (the count is right, the bytes are not records) still
    counts: count reads block headers only; tojson, which decodes, refuses it."""
    path = _write(tmp_path / "e.avro", RECORDS[:5])
    data = bytearray(path.read_bytes())
    sync = bytes(data[-16:])  # the marker ends every block, the last one too
    start = data.index(sync) + len(sync)  # the first block, after the header's marker
    # count and size varints, then the records: overwrite the records' first bytes.
    data[start + 3 : start + 8] = b"\xff" * 5
    path.write_bytes(bytes(data))
    assert run("count", str(path)).stdout == "5\n"
    _fails(run("tojson", str(path)), str(path))


def test_fromjson_round_trips_through_fastavro_and_apache_avro(tmp_path: Path) -> None:
    schema_path = tmp_path / "event.avsc"
    schema_path.write_text(json.dumps(SCHEMA))
    lines = io.StringIO()
    fastavro.json_writer(lines, fastavro.parse_schema(SCHEMA), RECORDS)
    source = tmp_path / "events.json"
    source.write_text(lines.getvalue())
    for codec in CODECS:
        out = tmp_path / f"events-{codec}.avro"
        result = run(
            "fromjson", "--schema", str(schema_path), "--codec", codec, str(source), str(out)
        )
        assert (result.returncode, result.stderr) == (0, "")
        with out.open("rb") as fp:
            reader = fastavro.reader(fp)
            assert reader.codec == codec
            assert json.loads(reader.metadata["avro.schema"]) == SCHEMA
            assert list(reader) == list(fastavro.reader(io.BytesIO(_fastavro_bytes())))
    # apache avro reads it too (the null codec: its zstandard and snappy need other packages).
    with avro.datafile.DataFileReader(
        (tmp_path / "events-null.avro").open("rb"), avro.io.DatumReader()
    ) as reader:
        read = list(reader)
    assert [r["class"] for r in read] == [r["class"] for r in RECORDS]
    assert [r["payload"] for r in read] == [r["payload"] for r in RECORDS]
    assert [r["blob"] for r in read] == [r["blob"] for r in RECORDS]


def _fastavro_bytes() -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, SCHEMA, RECORDS)
    return out.getvalue()


def test_tojson_then_fromjson_gives_the_same_records(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.avro", RECORDS, codec="deflate")
    schema = run("getschema", str(path)).stdout
    (tmp_path / "s.avsc").write_text(schema)
    lines = run("tojson", str(path)).stdout
    result = run(
        "fromjson", "--schema", str(tmp_path / "s.avsc"), "-", str(tmp_path / "b.avro"), stdin=lines
    )
    assert result.returncode == 0, result.stderr
    with path.open("rb") as a, (tmp_path / "b.avro").open("rb") as b:
        assert list(fastavro.reader(a)) == list(fastavro.reader(b))


# -- bad input ---------------------------------------------------------------------------------


def test_not_a_container(tmp_path: Path) -> None:
    path = tmp_path / "x.avro"
    path.write_bytes(b'{"a": 1}\n')
    for command in ("getschema", "getmeta", "count", "tojson"):
        _fails(
            run(command, "--from", "avro", str(path)),
            str(path),
            "not an Avro object container file",
        )
    # Detected as what it is, JSON Lines: no schema.
    for command in ("schema", "getschema", "getmeta"):
        _fails(run(command, str(path)), str(path), "this is JSON Lines")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.avro"
    _fails(run("count", str(path)), str(path), "No such file")


@pytest.mark.parametrize("keep", [3, 40, -30, -17])
def test_truncated(tmp_path: Path, keep: int) -> None:
    """Cut inside the header (3, 40 bytes) or inside the last block or its sync marker."""
    path = _write(tmp_path / "e.avro", RECORDS, codec="deflate", sync_interval=2000)
    path.write_bytes(path.read_bytes()[:keep])
    for command in ("count", "tojson"):
        result = run(command, str(path))
        _fails(result, str(path))
        if keep > 0:
            assert "truncated" in result.stderr or "not an Avro" in result.stderr


def test_tojson_stops_at_a_bad_block_after_printing_the_good_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "e.avro", RECORDS, sync_interval=2000)
    path.write_bytes(path.read_bytes()[:-5])
    result = run("tojson", str(path))
    _fails(result, str(path))
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert 0 < len(printed) < len(RECORDS)
    full = _write(tmp_path / "full.avro", RECORDS, sync_interval=2000)
    assert printed == _fastavro_json(full)[: len(printed)]


def test_fromjson_bad_schema(tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    source.write_text("1\n")
    bad_json = tmp_path / "bad.avsc"
    bad_json.write_text('{"type": "record", "name": ')
    _fails(
        run("fromjson", "--schema", str(bad_json), str(source), str(tmp_path / "o.avro")),
        str(bad_json),
        "not valid JSON",
    )
    unknown = tmp_path / "unknown.avsc"
    unknown.write_text('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Nope"}]}')
    _fails(
        run("fromjson", "--schema", str(unknown), str(source), str(tmp_path / "o.avro")),
        str(unknown),
        "invalid Avro schema",
    )
    assert not (tmp_path / "o.avro").exists()


@pytest.mark.parametrize(
    "line, phrases",
    [
        ('{"class": 1}', ["record 1", "$.__init__", "missing field"]),
        ('{"class": "x", "__init__": "y"}', ["record 1", "$.class", "expected an integer"]),
        (
            '{"class": 2147483648, "__init__": "y", "h": "abcd", "u": null}',
            ["record 1", "$[1].class", "out of range for an Avro int"],
        ),
        ('{"class": 1, "__init__": "y", "extra": 3}', ["record 1", "$.extra", "no field"]),
        ('{"class": 1, "__init__": "y", "h": "abc"}', ["record 1", "$.h"]),
        ('{"class": 1, "__init__": "y", "h": "\\u0100bcd"}', ["record 1", "$.h", "0-255"]),
        (
            '{"class": 1, "__init__": "y", "h": "abcd", "u": "A"}',
            ["record 1", "$.u", "object with one key"],
        ),
        (
            '{"class": 1, "__init__": "y", "h": "abcd", "u": {"float": 1}}',
            ["record 1", "$.u", "not a branch"],
        ),
        ("[1, 2", ["malformed JSON", "stream value 1 at byte 54"]),
    ],
)
def test_fromjson_bad_line(tmp_path: Path, line: str, phrases: list[str]) -> None:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "class", "type": "int"},
            {"name": "__init__", "type": "string"},
            {"name": "h", "type": {"type": "fixed", "name": "H", "size": 4}},
            {"name": "u", "type": ["null", "long"]},
        ],
    }
    (tmp_path / "s.avsc").write_text(json.dumps(schema))
    good = '{"class": 1, "__init__": "y", "h": "abcd", "u": null}'
    (tmp_path / "in.json").write_text(f"{good}\n{line}\n")
    out = tmp_path / "o.avro"
    result = run(
        "fromjson", "--schema", str(tmp_path / "s.avsc"), str(tmp_path / "in.json"), str(out)
    )
    _fails(result, str(tmp_path / "in.json"), *phrases)
    assert not out.exists()


def test_usage_errors_exit_2() -> None:
    for args in (
        [],
        ["frobnicate"],
        ["count"],
        ["fromjson", "a", "b"],
        ["fromjson", "--codec", "lzma"],
    ):
        result = run(*args)
        assert result.returncode == 2, (args, result)
        assert "usage:" in result.stderr


def test_help() -> None:
    result = run("--help")
    assert result.returncode == 0
    for word in ("cat", "schema", "count", "convert", "getmeta", "tojson", "exit status"):
        assert word in result.stdout
    assert "no magic number" in result.stdout  # how MessagePack is told apart
    for command in ("cat", "schema", "count", "convert", "getschema", "tojson", "fromjson"):
        result = run(command, "--help")
        assert result.returncode == 0 and "--from" in result.stdout, command
    result = run("convert", "--help")
    assert "--schema" in result.stdout and "zstandard" in result.stdout
    assert "no schema is guessed" in result.stdout


def test_mutually_recursive_records(tmp_path: Path) -> None:
    schema = {
        "type": "record",
        "name": "A",
        "fields": [
            {
                "name": "b",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "B",
                        "fields": [{"name": "a", "type": ["null", "A"]}],
                    },
                ],
            }
        ],
    }
    records = [{"b": {"a": {"b": {"a": None}}}}, {"b": None}]
    path = _write(tmp_path / "r.avro", records, schema=schema)
    with path.open("rb") as fp:
        assert list(fastavro.reader(fp)) == records
    result = run("tojson", str(path))
    assert result.returncode == 0, result.stderr
    # fastavro's json_writer recurses forever on this schema: the expected lines are the
    # specification's union form, {"full name": value}, written out.
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"b": {"B": {"a": {"A": {"b": {"B": {"a": None}}}}}}},
        {"b": None},
    ]


@pytest.mark.parametrize(
    "schema, record, phrase",
    [
        (["int", "long"], 1, "the union branches int and long are both read as int"),
        (
            ["null", {"type": "fixed", "name": "F", "size": 2}, "bytes"],
            b"ab",
            "the union branches F and bytes are both read as bytes",
        ),
        ({"type": "enum", "name": "E", "symbols": ["_x_"]}, "_x_", "the enum E has a symbol"),
    ],
)
def test_schemas_the_command_line_cannot_read(
    tmp_path: Path, schema: Any, record: Any, phrase: str
) -> None:
    """Refused with a message, not read wrongly: a union whose branches polycodec decodes to
    one Python type would not say which branch tojson should name."""
    path = _write(tmp_path / "x.avro", [record], schema=schema)
    _fails(run("tojson", str(path)), str(path), "polycodec cannot read this schema", phrase)
    assert run("count", str(path)).stdout == "1\n"  # the header and blocks are still readable


def test_tojson_into_a_reader_that_leaves(tmp_path: Path) -> None:
    """`tojson FILE | head -1`: the closed pipe ends the command quietly, exit status 0."""
    schema = {"type": "record", "name": "R", "fields": [{"name": "s", "type": "string"}]}
    path = _write(tmp_path / "big.avro", [{"s": "x" * 100}] * 20000, schema=schema)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with subprocess.Popen(
        [sys.executable, "-m", "polycodec", "tojson", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert json.loads(process.stdout.readline()) == {"s": "x" * 100}
        process.stdout.close()
        assert process.wait(timeout=120) == 0
        assert process.stderr.read() == b""


def test_bare_primitive_schema(tmp_path: Path) -> None:
    """A schema file holding `long` without quotes, which Avro's parsers take as "long"."""
    (tmp_path / "s.avsc").write_text("long\n")
    (tmp_path / "in.json").write_text("1\n-5\n")
    out = tmp_path / "o.avro"
    result = run(
        "fromjson", "--schema", str(tmp_path / "s.avsc"), str(tmp_path / "in.json"), str(out)
    )
    assert result.returncode == 0, result.stderr
    with out.open("rb") as fp:
        assert list(fastavro.reader(fp)) == [1, -5]
    assert run("tojson", str(out)).stdout == "1\n-5\n"


def test_a_named_type_referred_to_in_an_object(tmp_path: Path) -> None:
    """`{"type": "Kind"}` names a type defined before, as `"Kind"` does."""
    kind = {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "first", "type": kind}, {"name": "second", "type": {"type": "Kind"}}],
    }
    # Neither fastavro nor apache avro (Python) takes this form; polycodec's parser does, as
    # the Java one does: written by fromjson, read back by tojson.
    (tmp_path / "s.avsc").write_text(json.dumps(schema))
    (tmp_path / "in.json").write_text('{"first": "A", "second": "B"}\n')
    path = tmp_path / "r.avro"
    result = run(
        "fromjson", "--schema", str(tmp_path / "s.avsc"), str(tmp_path / "in.json"), str(path)
    )
    assert result.returncode == 0, result.stderr
    result = run("tojson", str(path))
    assert (result.returncode, result.stdout) == (0, '{"first":"A","second":"B"}\n'), result.stderr


def test_empty_container_and_binary_metadata(tmp_path: Path) -> None:
    """No blocks: count 0, tojson prints nothing. A metadata value that is not UTF-8 is shown
    with \\x escapes (written by polycodec, whose metadata values are bytes)."""

    @dataclasses.dataclass
    class Row:
        n: int

    path = tmp_path / "empty.avro"
    with path.open("wb") as fp:
        polycodec.Codec(Row, "avro").write_file(fp, [], metadata={"raw": b"\xff\x00a"})
    # (fastavro cannot open this file: it decodes every metadata value as UTF-8.)
    assert run("count", str(path)).stdout == "0\n"
    assert (run("tojson", str(path)).stdout, run("tojson", str(path)).returncode) == ("", 0)
    assert run("getmeta", str(path)).stdout == "avro.codec\tnull\nraw\t\\xff\x00a\n"


# -- every format: cat, count, schema, convert -------------------------------------------------
#
# The oracles: fastavro for Avro, msgpack's Unpacker over the same stream, json, pickle.

ROWS: list[dict[str, Any]] = [
    {
        "id": i,
        "name": f"row {i} \u2603",
        "score": i / 4,
        "ok": i % 3 == 0,
        "note": None if i % 2 else f"n{i}",
        "tags": [f"t{j}" for j in range(i % 3)],
        "sizes": {f"s{j}": j for j in range(i % 2)},
        "point": {"x": i, "y": -i},
    }
    for i in range(2500)  # pickles of lists of up to 1000: three pickles
]
ROW_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Row",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": "double"},
        {"name": "ok", "type": "boolean"},
        {"name": "note", "type": ["null", "string"]},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "sizes", "type": {"type": "map", "values": "long"}},
        {
            "name": "point",
            "type": {
                "type": "record",
                "name": "Point",
                "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "long"}],
            },
        },
    ],
}


def _msgpack_file(path: Path, values: list[Any]) -> Path:
    packer = msgpack.Packer()
    path.write_bytes(b"".join(packer.pack(v) for v in values))
    return path


def _jsonl_file(path: Path, values: list[Any]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    return path


def _pickle_file(path: Path, values: list[Any], batch: int = 1000) -> Path:
    """A pickle of a list per batch, one after another."""
    with path.open("wb") as fp:
        for start in range(0, len(values), batch):
            pickle.dump(values[start : start + batch], fp, protocol=5)
    return path


def _read_msgpack(path: Path) -> list[Any]:
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, timestamp=3)
    unpacker.feed(path.read_bytes())
    return list(unpacker)


def _read_pickles(path: Path) -> list[Any]:
    """Every pickle's value; a list's items."""
    values: list[Any] = []
    with path.open("rb") as fp:
        while fp.peek(1):
            value = pickle.load(fp)
            values.extend(value if type(value) is list else [value])
    return values


def _lines(result: subprocess.CompletedProcess[str]) -> list[Any]:
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _files(tmp_path: Path) -> dict[str, Path]:
    return {
        "avro": _write(tmp_path / "rows.avro", ROWS, schema=ROW_SCHEMA, codec="deflate"),
        "msgpack": _msgpack_file(tmp_path / "rows.msgpack", ROWS),
        "jsonl": _jsonl_file(tmp_path / "rows.jsonl", ROWS),
        "pickle": _pickle_file(tmp_path / "rows.pickle", ROWS),
    }


def test_cat_and_count_each_format_against_its_reader(tmp_path: Path) -> None:
    files = _files(tmp_path)
    for fmt, path in files.items():
        # The file extension plays no part: each is detected from its bytes.
        hidden = path.rename(tmp_path / f"rows-{fmt}.data")
        printed = _lines(run("cat", str(hidden)))
        if fmt == "avro":
            assert printed == _fastavro_json(hidden)
        else:
            expected = {
                "msgpack": _read_msgpack,
                "jsonl": lambda p: [json.loads(line) for line in p.read_text().splitlines()],
                "pickle": _read_pickles,
            }[fmt](hidden)
            assert printed == expected == ROWS, fmt
        assert run("count", str(hidden)).stdout == f"{len(ROWS)}\n", fmt
        assert _lines(run("cat", "--from", fmt, "-", stdin_path=hidden)) == printed, fmt


def test_cat_untyped_values_in_json(tmp_path: Path) -> None:
    """MessagePack and pickle values JSON has no type for: bytes as base64, datetimes and
    decimals as strings, tuples as arrays; a pickle that is not a list is one record."""
    values = [
        b"\x00\xff",
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        [1, "two", None],
        {"k": 1.5},
    ]
    path = tmp_path / "v.msgpack"
    path.write_bytes(b"".join(msgpack.packb(v, datetime=True) for v in values))
    result = run("cat", str(path))
    assert _lines(result) == ["AP8=", "2024-01-02T03:04:05Z", [1, "two", None], {"k": 1.5}]
    path = tmp_path / "v.pickle"
    path.write_bytes(
        pickle.dumps((1, 2)) + pickle.dumps(decimal.Decimal("1.50")) + pickle.dumps([{"a": 1}])
    )
    assert _lines(run("cat", str(path))) == [[1, 2], "1.50", {"a": 1}]
    assert run("count", str(path)).stdout == "3\n"


def test_detection_and_from(tmp_path: Path) -> None:
    """MessagePack has no magic number: bytes whose first line is JSON are JSON Lines, which
    --from msgpack overrides; \\x80 and a protocol is a pickle, unless --from says not."""
    ints = tmp_path / "ints"
    ints.write_bytes(b"1\n")  # the MessagePack ints 49 and 10, and the JSON line 1
    assert _lines(run("cat", str(ints))) == [1]
    assert _lines(run("cat", "--from", "msgpack", str(ints))) == [49, 10]
    map_then_int = tmp_path / "m"
    map_then_int.write_bytes(b"\x80\x02")  # {} then 2 in MessagePack; a pickle's start
    _fails(run("cat", str(map_then_int)), str(map_then_int), "stream value 0 at byte 0")
    assert _lines(run("cat", "--from", "msgpack", str(map_then_int))) == [{}, 2]
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert run("count", str(empty)).stdout == "0\n"


@pytest.mark.parametrize("fmt", ["msgpack", "jsonl", "pickle"])
def test_schema_of_a_format_without_one(tmp_path: Path, fmt: str) -> None:
    path = _files(tmp_path)[fmt]
    _fails(run("schema", str(path)), str(path), "which has no schema")
    out = tmp_path / "out.avro"
    _fails(run("convert", str(path), str(out), "--to", "avro"), "needs --schema")
    assert not out.exists()


def test_schema_of_a_container(tmp_path: Path) -> None:
    path = _files(tmp_path)["avro"]
    assert json.loads(run("schema", str(path)).stdout) == ROW_SCHEMA


@pytest.mark.parametrize("source", ["avro", "msgpack", "jsonl", "pickle"])
@pytest.mark.parametrize("target", ["msgpack", "jsonl", "pickle"])
def test_convert_between_stream_formats(tmp_path: Path, source: str, target: str) -> None:
    path = _files(tmp_path)[source]
    out = tmp_path / f"out.{target}"
    result = run("convert", str(path), str(out), "--to", target)
    assert (result.returncode, result.stderr) == (0, "")
    if target == "msgpack":
        assert _read_msgpack(out) == ROWS
    elif target == "pickle":
        # lists of up to 1000 records, each a pickle
        with out.open("rb") as fp:
            assert len(pickle.load(fp)) == 1000
        assert _read_pickles(out) == ROWS
    elif source == "avro":  # the Avro JSON encoding: a union's value as {"branch": value}
        assert [json.loads(line) for line in out.read_text().splitlines()] == _fastavro_json(path)
    else:
        assert [json.loads(line) for line in out.read_text().splitlines()] == ROWS


@pytest.mark.parametrize("source", ["avro", "msgpack", "jsonl", "pickle"])
@pytest.mark.parametrize("codec", CODECS)
def test_convert_to_avro(tmp_path: Path, source: str, codec: str) -> None:
    """Under --schema, or the input container's own schema; fastavro reads the result."""
    path = _files(tmp_path)[source]
    if source == "jsonl":  # the Avro JSON encoding, as fastavro.json_writer writes it
        lines = io.StringIO()
        fastavro.json_writer(lines, fastavro.parse_schema(ROW_SCHEMA), ROWS)
        path.write_text(lines.getvalue())
    (tmp_path / "row.avsc").write_text(json.dumps(ROW_SCHEMA))
    schema = [] if source == "avro" else ["--schema", str(tmp_path / "row.avsc")]
    out = tmp_path / "out.avro"
    result = run("convert", str(path), str(out), "--to", "avro", "--codec", codec, *schema)
    assert (result.returncode, result.stderr) == (0, "")
    with out.open("rb") as fp:
        reader = fastavro.reader(fp)
        assert reader.codec == codec
        assert json.loads(reader.metadata["avro.schema"]) == ROW_SCHEMA
        assert list(reader) == ROWS


def test_convert_rich_avro_to_pickle_and_back(tmp_path: Path) -> None:
    """Logical types pickle as themselves (datetime, Decimal, UUID, date, time), enums as their
    symbol; back to Avro under the same schema gives the records fastavro wrote."""
    path = _write(tmp_path / "e.avro", RECORDS, codec="snappy")
    out = tmp_path / "e.pickle"
    assert run("convert", str(path), str(out), "--to", "pickle").returncode == 0
    with path.open("rb") as fp:
        expected = list(fastavro.reader(fp))
    assert _read_pickles(out) == expected
    (tmp_path / "e.avsc").write_text(json.dumps(SCHEMA))
    again = tmp_path / "again.avro"
    result = run(
        "convert", str(out), str(again), "--to", "avro", "--schema", str(tmp_path / "e.avsc")
    )
    assert (result.returncode, result.stderr) == (0, "")
    with again.open("rb") as fp:
        assert list(fastavro.reader(fp)) == expected


def test_convert_refusals(tmp_path: Path) -> None:
    files = _files(tmp_path)
    out = tmp_path / "o"
    _fails(
        run("convert", str(files["msgpack"]), str(out), "--to", "jsonl", "--codec", "deflate"),
        "--codec is for --to avro",
    )
    _fails(
        run("convert", str(files["avro"]), str(files["avro"]), "--to", "jsonl"),
        "would overwrite the input",
    )
    assert run("count", str(files["avro"])).stdout == f"{len(ROWS)}\n"
    # A record that does not fit the schema: named by index and path; OUT removed.
    bad = _msgpack_file(tmp_path / "bad.msgpack", ROWS[:3] + [{**ROWS[3], "id": "x"}])
    (tmp_path / "row.avsc").write_text(json.dumps(ROW_SCHEMA))
    result = run(
        "convert", str(bad), str(out), "--to", "avro", "--schema", str(tmp_path / "row.avsc")
    )
    _fails(result, str(bad), "record 3", "$.id")
    assert not out.exists()
    assert run("convert", "--help").stdout.count("--schema") >= 1


@pytest.mark.parametrize("fmt", ["msgpack", "jsonl", "pickle"])
def test_truncated_stream(tmp_path: Path, fmt: str) -> None:
    """Cut inside a record: the records before it are printed, then the error names the file,
    the value's index in the stream and its byte offset."""
    path = _files(tmp_path)[fmt]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 7])
    result = run("cat", str(path))
    _fails(result, str(path), "truncated", "stream value", "at byte")
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert 0 < len(printed) < len(ROWS) and printed == ROWS[: len(printed)]
    _fails(run("count", str(path)), str(path), "truncated")


@pytest.mark.parametrize("fmt", ["msgpack", "pickle"])
def test_corrupt_stream(tmp_path: Path, fmt: str) -> None:
    path = _files(tmp_path)[fmt]
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    if fmt == "msgpack":  # the start of record 1250 (all rows before it are as long)
        middle = len(b"".join(msgpack.packb(r) for r in ROWS[:1250]))
        data[middle] = 0xC1  # a byte MessagePack never uses
    else:
        data[middle : middle + 4] = b"\xff\xff\xff\xff"  # no pickle opcode
    path.write_bytes(bytes(data))
    result = run("cat", str(path))
    _fails(result, str(path), "malformed", "at byte")
    if fmt == "msgpack":
        assert f"stream value 1250 at byte {middle}" in result.stderr
        assert len(result.stdout.splitlines()) == 1250


def test_cat_into_a_reader_that_leaves_msgpack(tmp_path: Path) -> None:
    path = _msgpack_file(tmp_path / "big.msgpack", [{"s": "x" * 100}] * 20000)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with subprocess.Popen(
        [sys.executable, "-m", "polycodec", "cat", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert json.loads(process.stdout.readline()) == {"s": "x" * 100}
        process.stdout.close()
        assert process.wait(timeout=120) == 0
        assert process.stderr.read() == b""


# -- streaming: memory stays bounded on a large file -------------------------------------------

BIG_RECORDS = 64_000  # of about 1 KiB: 64 MiB a file
STREAMING_BOUND_MIB = 16


def _streaming_files(folder: Path, count: int) -> dict[str, Path]:
    """The same records, about 1 KiB each, in every format (Avro uncompressed, so that its
    file is as large as the others)."""

    def rows() -> Iterator[dict[str, Any]]:
        for i in range(count):
            yield {"id": i, "text": f"{i:08d}" * 125}

    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "id", "type": "long"}, {"name": "text", "type": "string"}],
    }
    folder.mkdir()
    with (folder / "f.avro").open("wb") as fp:
        fastavro.writer(fp, schema, rows())
    with (folder / "f.msgpack").open("wb") as fp:
        for row in rows():
            fp.write(msgpack.packb(row))
    with (folder / "f.jsonl").open("w") as text:
        for row in rows():
            text.write(json.dumps(row) + "\n")
    with (folder / "f.pickle").open("wb") as fp:
        batch: list[Any] = []
        for row in rows():
            batch.append(row)
            if len(batch) == 1000:
                pickle.dump(batch, fp)
                batch = []
        if batch:
            pickle.dump(batch, fp)
    return {fmt: folder / f"f.{fmt}" for fmt in ("avro", "msgpack", "jsonl", "pickle")}


# Run by a small interpreter of its own: Linux keeps a process's peak RSS across exec, so a
# child forked straight from this (large) test process would start at this process's peak.
PEAK_RSS = """\
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
error = child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
child.returncode = os.waitstatus_to_exitcode(status)
if child.returncode:
    sys.exit(error.decode())
print(usage.ru_maxrss)
"""


def _peak_rss_mib(*args: str) -> int:
    """The peak resident memory of ``python -m polycodec ARGS`` (its output discarded)."""
    return _peak_rss_mib_of("-m", "polycodec", *args)


def _peak_rss_mib_of(*args: str) -> int:
    """The peak resident memory of ``python ARGS``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return int(result.stdout) // 1024  # KiB on Linux


def test_streaming_memory_stays_bounded(tmp_path: Path) -> None:
    """Each command on a 64 MiB file of each format peaks within 16 MiB of the same command on a
    file of 1,000 records (1 MiB): files are read a chunk, a block or a pickle at a time. A
    reader that held the file would peak 64 MiB higher."""
    small = _streaming_files(tmp_path / "small", 1_000)
    big = _streaming_files(tmp_path / "big", BIG_RECORDS)
    assert all(path.stat().st_size > 64_000_000 for path in big.values())
    growth = {}
    for fmt in big:
        target = "pickle" if fmt != "pickle" else "avro"
        commands: list[list[str]] = [
            ["cat", "{}"],
            ["count", "{}"],
            ["convert", "{}", str(tmp_path / "out"), "--to", target],
        ]
        if target == "avro":
            (tmp_path / "r.avsc").write_text(run("schema", str(big["avro"])).stdout)
            commands[2] += ["--schema", str(tmp_path / "r.avsc")]
        for command in commands:
            peaks = [
                _peak_rss_mib(*(str(f) if a == "{}" else a for a in command))
                for f in (small[fmt], big[fmt])
            ]
            growth[fmt, command[0]] = peaks[1] - peaks[0]
    assert run("count", str(tmp_path / "out")).stdout == f"{BIG_RECORDS}\n"
    assert max(growth.values()) < STREAMING_BOUND_MIB, growth
    # The measure sees a reader that holds the file.
    holding = [
        _peak_rss_mib_of("-c", HOLD, str(big["msgpack"])),
        _peak_rss_mib_of("-c", HOLD, str(small["msgpack"])),
    ]
    assert holding[0] - holding[1] > 48, holding


HOLD = "import sys; data = open(sys.argv[1], 'rb').read()"


def test_pickle_without_a_protocol_header(tmp_path: Path) -> None:
    """Protocols 0 and 1 have no \\x80 start and text opcodes (I01 for True), which polycodec's
    pickle reader refuses: an error with the offset, read as a pickle with --from pickle."""
    for protocol in (0, 1):
        path = tmp_path / f"p{protocol}"
        path.write_bytes(pickle.dumps(ROWS[:3], protocol=protocol))
        _fails(run("cat", "--from", "pickle", str(path)), str(path), "malformed pickle", "at byte")


def test_a_value_json_cannot_hold(tmp_path: Path) -> None:
    path = _msgpack_file(tmp_path / "nan.msgpack", [{"x": 1.0}, {"x": float("nan")}])
    result = run("cat", str(path))
    _fails(result, str(path), "record 1", "NaN", '$["x"]')
    assert result.stdout == '{"x":1.0}\n'


def test_standard_input_is_detected_too(tmp_path: Path) -> None:
    for fmt, path in _files(tmp_path).items():
        assert run("count", "-", stdin_path=path).stdout == f"{len(ROWS)}\n", fmt
    path = _files(tmp_path)["avro"]
    assert json.loads(run("schema", "-", stdin_path=path).stdout) == ROW_SCHEMA


def test_count_names_the_block_whose_sync_marker_is_wrong(tmp_path: Path) -> None:
    path = _write(tmp_path / "e.avro", ROWS, schema=ROW_SCHEMA, sync_interval=2000)
    data = bytearray(path.read_bytes())
    sync = bytes(data[-16:])
    header_end = data.index(sync) + 16
    second = data.index(sync, header_end) + 16  # where the second block starts
    third = data.index(sync, second)
    data[third] ^= 0xFF  # the second block's marker
    path.write_bytes(bytes(data))
    _fails(run("count", str(path)), str(path), f"the block at byte {second}", "sync marker")


def test_a_first_line_longer_than_detection_looks(tmp_path: Path) -> None:
    """No whole line in the first MiB, and text: not guessed (--from says); MessagePack bytes
    of that length that are not text are MessagePack."""
    long_line = {"text": "x" * 1_500_000}
    path = _jsonl_file(tmp_path / "long", [long_line, {"a": 1}])
    _fails(run("count", str(path)), str(path), "--from jsonl or --from msgpack")
    assert _lines(run("cat", "--from", "jsonl", str(path))) == [long_line, {"a": 1}]
    binary = _msgpack_file(tmp_path / "bin", [bytes(range(11, 256)) * 6000, 5])  # no newline
    assert run("count", str(binary)).stdout == "2\n"


def test_convert_to_standard_output(tmp_path: Path) -> None:
    path = _files(tmp_path)["pickle"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    for target in ("msgpack", "avro"):
        schema = ["--schema", str(tmp_path / "row.avsc")] if target == "avro" else []
        (tmp_path / "row.avsc").write_text(json.dumps(ROW_SCHEMA))
        result = subprocess.run(
            [sys.executable, "-m", "polycodec", "convert", str(path), "-", "--to", target, *schema],
            capture_output=True,
            env=env,
            timeout=120,
        )
        assert (result.returncode, result.stderr) == (0, b"")
        if target == "msgpack":
            assert list(msgpack.Unpacker(io.BytesIO(result.stdout))) == ROWS
        else:
            assert list(fastavro.reader(io.BytesIO(result.stdout))) == ROWS


def test_a_pickle_that_would_run_code_is_refused(tmp_path: Path) -> None:
    """cat reads pickles with polycodec's reader, which names no function it would call."""
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {marker}",))

    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps([Payload()], protocol=4))
    _fails(run("cat", str(path)), str(path), "system", "stream value 0 at byte 0")
    assert not marker.exists()
