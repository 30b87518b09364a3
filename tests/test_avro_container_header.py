"""Avro container files beyond their records (issue 39 item 4): the header as `iter_file` and
the stream decoder expose it (`writer_schema`, `codec`, `metadata`), custom metadata written
with `write_file(..., metadata=)`, and appending to an existing container with
`write_file(..., append=True)`. fastavro (and apache avro, where it has the feature) reads and
writes the same files as the oracle."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path
from typing import Any, List, Optional

import fastavro
import pytest

import polycodec
from test_avro_support import avro_records


@dataclasses.dataclass
class Event:
    id: int
    name: str
    score: Optional[float] = None


EVENTS = [Event(1, "a", 0.5), Event(2, "b"), Event(3, "c", -1.0)]
CODEC = polycodec.Codec(Event, "avro")
SCHEMA = CODEC.schema


def _dicts(events: List[Event]) -> List[Any]:
    return [dataclasses.asdict(e) for e in events]


def _fastavro_file(path: Path, records: List[Any], codec: str, metadata: Any) -> None:
    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(SCHEMA), records, codec=codec, metadata=metadata)


# -- reading the header --------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["null", "deflate"])
def test_the_header_of_a_fastavro_file(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "events.avro"
    _fastavro_file(path, _dicts(EVENTS), compression, {"team": "data", "run": "7"})
    with open(path, "rb") as f:
        theirs = fastavro.reader(f)
        header_schema = json.loads(theirs.metadata["avro.schema"])
    with open(path, "rb") as f:
        it = CODEC.iter_file(f)
        # Read before any value is taken: the header is read then, and no value is lost.
        assert it.writer_schema == header_schema
        assert it.codec == compression == theirs.codec
        assert it.metadata == {"team": b"data", "run": b"7"}
        assert list(it) == EVENTS
        assert it.metadata == {"team": b"data", "run": b"7"}


def test_the_stream_decoder_has_the_header_once_fed() -> None:
    data = CODEC.encode_many(EVENTS)
    decoder = CODEC.stream_decoder()
    assert decoder.writer_schema is None
    assert decoder.container_codec is None and decoder.metadata is None
    values = decoder.feed(data[:3])
    assert values == [] and decoder.writer_schema is None
    values += decoder.feed(data[3:]) + decoder.finish()
    assert values == EVENTS
    assert decoder.writer_schema == SCHEMA
    assert decoder.container_codec == "null" and decoder.metadata == {}


def test_a_header_property_of_a_file_that_is_not_a_container() -> None:
    it = CODEC.iter_file(io.BytesIO(b"not an avro file at all"))
    with pytest.raises(polycodec.DecodeError, match="not an Avro object container file"):
        it.writer_schema
    with pytest.raises(polycodec.DecodeError, match="empty input"):
        CODEC.iter_file(io.BytesIO(b"")).codec
    with pytest.raises(polycodec.DecodeError):
        CODEC.iter_file(io.BytesIO(b"Obj\x01\x02")).metadata


def test_other_formats_have_no_header() -> None:
    codec = polycodec.Codec(Event, "json")
    with pytest.raises(AttributeError, match="only an Avro container file has a header"):
        codec.iter_file(io.BytesIO(b"")).writer_schema
    with pytest.raises(AttributeError, match="only an Avro container file has a header"):
        codec.stream_decoder().metadata


# -- writing metadata ----------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["null", "deflate"])
def test_metadata_written_is_read_by_fastavro_and_apache_avro(compression: str) -> None:
    codec = polycodec.Codec(Event, "avro", compression=compression)
    out = io.BytesIO()
    metadata = {"origin": b"pipeline-3", "empty": b"", "utf8": "\u00e9t\u00e9".encode()}
    assert codec.write_file(out, EVENTS, metadata=metadata) == 3
    data = out.getvalue()
    theirs = fastavro.reader(io.BytesIO(data))
    assert theirs.codec == compression
    # fastavro decodes the values as UTF-8 text.
    for key, value in metadata.items():
        assert theirs.metadata[key] == value.decode()
    assert list(theirs) == _dicts(EVENTS)
    assert avro_records(data) == _dicts(EVENTS)
    import avro.datafile
    import avro.io

    apache = avro.datafile.DataFileReader(io.BytesIO(data), avro.io.DatumReader())
    assert apache.get_meta("origin") == b"pipeline-3"
    # And polycodec reads back what it wrote.
    it = codec.iter_file(io.BytesIO(data))
    assert it.metadata == metadata and list(it) == EVENTS


@pytest.mark.parametrize(
    "metadata, error, words",
    [
        ({"avro.codec": b"null"}, ValueError, "is reserved"),
        ({"avro.custom": b"x"}, ValueError, "is reserved"),
        ({"k": "text"}, TypeError, 'metadata\\["k"\\] must be bytes, not str'),
        ({1: b"x"}, TypeError, "metadata keys must be str, not int"),
        ([("k", b"v")], TypeError, "metadata must be a dict"),
    ],
)
def test_bad_metadata_is_refused(metadata: Any, error: type, words: str) -> None:
    out = io.BytesIO()
    with pytest.raises(error, match=words):
        CODEC.write_file(out, EVENTS, metadata=metadata)
    assert out.getvalue() == b""


def test_metadata_and_append_are_avro_only() -> None:
    codec = polycodec.Codec(Event, "msgpack")
    with pytest.raises(TypeError, match='metadata= applies to format "avro" only'):
        codec.write_file(io.BytesIO(), EVENTS, metadata={})
    with pytest.raises(TypeError, match='append=True applies to format "avro" only'):
        codec.write_file(io.BytesIO(), EVENTS, append=True)
    with pytest.raises(TypeError, match="cannot be given with append=True"):
        CODEC.write_file(io.BytesIO(), EVENTS, append=True, metadata={})


# -- appending -----------------------------------------------------------------------------


def test_appending_to_own_file_read_by_fastavro(tmp_path: Path) -> None:
    path = tmp_path / "events.avro"
    with open(path, "wb") as f:
        CODEC.write_file(f, EVENTS[:2], metadata={"k": b"v"})
    with open(path, "a+b") as f:
        assert CODEC.write_file(f, EVENTS[2:], append=True) == 1
    with open(path, "a+b") as f:
        CODEC.write_file(f, EVENTS, append=True, sync_interval=1)
    with open(path, "rb") as f:
        theirs = fastavro.reader(f)
        assert theirs.metadata["k"] == "v"
        assert list(theirs) == _dicts(EVENTS + EVENTS)
    with open(path, "rb") as f:
        assert list(CODEC.iter_file(f)) == EVENTS + EVENTS


@pytest.mark.parametrize("compression", ["null", "deflate"])
def test_appending_to_a_fastavro_file_keeps_its_codec(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "events.avro"
    _fastavro_file(path, _dicts(EVENTS[:1]), compression, {"team": "data"})
    size = os.path.getsize(path)
    # The codec compresses with zstandard when it writes a file of its own: appended blocks
    # take the file's codec, which the header names.
    codec = polycodec.Codec(Event, "avro", compression="zstandard")
    with open(path, "r+b") as f:
        codec.write_file(f, EVENTS[1:], append=True)
    assert os.path.getsize(path) > size
    with open(path, "rb") as f:
        theirs = fastavro.reader(f)
        assert theirs.codec == compression and theirs.metadata["team"] == "data"
        assert list(theirs) == _dicts(EVENTS)
    with open(path, "rb") as f:
        assert list(codec.iter_file(f)) == EVENTS


def test_fastavro_appends_to_a_polycodec_file(tmp_path: Path) -> None:
    path = tmp_path / "events.avro"
    codec = polycodec.Codec(Event, "avro", compression="deflate")
    with open(path, "wb") as f:
        codec.write_file(f, EVENTS[:2])
    with open(path, "a+b") as f:
        fastavro.writer(f, fastavro.parse_schema(SCHEMA), _dicts(EVENTS[2:]))
    with open(path, "rb") as f:
        assert list(codec.iter_file(f)) == EVENTS


def test_appending_to_an_empty_file_writes_a_header(tmp_path: Path) -> None:
    path = tmp_path / "events.avro"
    path.touch()
    with open(path, "a+b") as f:
        CODEC.write_file(f, EVENTS, append=True)
    with open(path, "rb") as f:
        assert list(fastavro.reader(f)) == _dicts(EVENTS)


def test_appending_under_another_schema_is_refused(tmp_path: Path) -> None:
    @dataclasses.dataclass
    class Other:
        id: int

    path = tmp_path / "other.avro"
    with open(path, "wb") as f:
        polycodec.Codec(Other, "avro").write_file(f, [Other(1)])
    before = path.read_bytes()
    with open(path, "a+b") as f:
        with pytest.raises(ValueError, match="the file's writer schema is not the codec's"):
            CODEC.write_file(f, EVENTS, append=True)
    assert path.read_bytes() == before


def test_appending_to_a_file_that_is_not_a_container_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"some notes\n")
    with open(path, "a+b") as f:
        with pytest.raises(polycodec.DecodeError, match="not an Avro object container file"):
            CODEC.write_file(f, EVENTS, append=True)
    path.write_bytes(b"Obj\x01\x04")  # a header cut short
    with open(path, "a+b") as f:
        with pytest.raises(polycodec.DecodeError):
            CODEC.write_file(f, EVENTS, append=True)
    assert path.read_bytes() == b"Obj\x01\x04"
