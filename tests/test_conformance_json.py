"""Strict RFC 8259 parsing: JSONTestSuite, nesting limits, whitespace and trailing garbage."""

import json
from pathlib import Path
from typing import Any, Optional

import pytest

import polycodec
from json_models import Linked, Tree, assert_same

# Vendored in the repository (tests/data/JSONTestSuite/SOURCE.md says where it comes from).
SUITE = Path(__file__).resolve().parent / "data" / "JSONTestSuite" / "test_parsing"
FILES = sorted(SUITE.glob("*.json"))
MAX_DEPTH = 1024


def _files(prefix: str) -> list[Path]:
    return [path for path in FILES if path.name.startswith(prefix)]


def _ids(paths: list[Path]) -> list[str]:
    return [path.stem for path in paths]


def test_suite_is_present() -> None:
    assert len(_files("y_")) > 90 and len(_files("n_")) > 180 and len(_files("i_")) > 30


@pytest.mark.parametrize("path", _files("y_"), ids=_ids(_files("y_")))
def test_accepts_valid_documents(path: Path) -> None:
    data = path.read_bytes()
    expected = json.loads(data)
    assert_same(polycodec.decode_one(data, Any), expected)
    assert_same(polycodec.decode_one(memoryview(data), Any), expected)
    assert_same(polycodec.decode_one(data.decode("utf-8"), Any), expected)


@pytest.mark.parametrize("path", _files("n_"), ids=_ids(_files("n_")))
def test_rejects_invalid_documents(path: Path) -> None:
    data = path.read_bytes()
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(data, Any)
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(bytearray(data), Any)


@pytest.mark.parametrize("path", _files("i_"), ids=_ids(_files("i_")))
def test_implementation_defined_documents_do_not_crash(path: Path) -> None:
    data = path.read_bytes()
    try:
        polycodec.decode_one(data, Any)
    except polycodec.DecodeError:
        pass


# The implementation-defined files polycodec accepts (the README states these choices). Floats
# overflowing a double are refused as out of range; invalid Unicode of every kind is refused.
ACCEPTED_I_FILES = {
    "i_number_double_huge_neg_exp.json",
    "i_number_real_underflow.json",
    "i_number_too_big_neg_int.json",
    "i_number_too_big_pos_int.json",
    "i_number_very_big_negative_int.json",
    "i_structure_500_nested_arrays.json",
}


def test_implementation_defined_choices_are_pinned() -> None:
    accepted = set()
    for path in _files("i_"):
        try:
            value = polycodec.decode_one(path.read_bytes(), Any)
        except polycodec.DecodeError:
            continue
        accepted.add(path.name)
        if path.name != "i_structure_500_nested_arrays.json":
            assert value == json.loads(path.read_bytes())
    assert accepted == ACCEPTED_I_FILES


def _nested(depth: int, leaf: str = "") -> bytes:
    return ("[" * depth + leaf + "]" * depth).encode()


def _depth(value: Any) -> int:
    """Nesting depth of a list of single-item lists, walked iteratively (``==`` would recurse)."""
    depth = 0
    while isinstance(value, list):
        depth += 1
        assert len(value) <= 1
        value = value[0] if value else None
    return depth


@pytest.mark.parametrize("tp", [Any, list[Any], Optional[Any]])
def test_unclosed_deep_nesting(tp: Any) -> None:
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(b"[" * 100_000, tp)
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(b'{"a":' * 100_000, tp)


def test_deep_valid_nesting_is_refused() -> None:
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(_nested(2000), Any)
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(_nested(100_000), Any)
    objects = ('{"a":' * 2000 + "1" + "}" * 2000).encode()
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(objects, Any)


def test_nesting_limit_is_1024() -> None:
    assert _depth(polycodec.decode_one(_nested(MAX_DEPTH), Any)) == MAX_DEPTH
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(_nested(MAX_DEPTH + 1), Any)


def test_deep_recursive_dataclass_is_refused() -> None:
    linked = ('{"value":"x","next":' * 2000 + "null" + "}" * 2000).encode()
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(linked, Linked)
    tree = ('{"value":1,"children":[' * 2000 + "]}" * 2000).encode()
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(tree, Tree)
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(b'{"value":1,"children":[' * 100_000, Tree)
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(b"[1,[" * 100_000, Tree, array_like=True)


def test_moderately_deep_recursive_dataclass_decodes() -> None:
    depth = 300
    payload = ('{"value":"x","next":' * depth + "null" + "}" * depth).encode()
    value = polycodec.decode_one(payload, Linked)
    count = 0
    while value is not None:
        count += 1
        value = value.next
    assert count == depth


@pytest.mark.parametrize("space", [" ", "\t", "\n", "\r", " \r\n\t "])
def test_whitespace_is_allowed_around_tokens(space: str) -> None:
    doc = '{"label":"a","contents":[{"name":"n","nbytes":1}],"index":{},"owner":null}'
    spaced = space + "".join(ch + space if ch in "{}[]:," else ch for ch in doc)
    expected = polycodec.decode_one(doc, Any)
    assert polycodec.decode_one(spaced, Any) == expected
    assert polycodec.decode_one(spaced.encode(), Any) == expected


@pytest.mark.parametrize(
    "payload",
    [
        b"1 2",
        b"[] []",
        b"{}x",
        b"null,",
        b'"a""b"',
        b"[1]]",
        b"1\x00",
        b"true false",
        b"0x",
        b"{} \x0c",
    ],
)
def test_trailing_garbage(payload: bytes) -> None:
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(payload, Any)
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_many(b"[" + payload + b"]", Any)


def test_trailing_garbage_after_typed_values() -> None:
    for tp, payload in [(int, b"1 x"), (list[int], b"[1] ]"), (Linked, b'{"value":"a"} {}')]:
        with pytest.raises(polycodec.DecodeError):
            polycodec.decode_one(payload, tp)
        with pytest.raises(polycodec.DecodeError):
            polycodec.decode_one(payload.decode(), tp)


def test_non_whitespace_unicode_spaces_are_refused() -> None:
    for space in ["\u00a0", "\u2003", "\ufeff"]:
        with pytest.raises(polycodec.DecodeError):
            polycodec.decode_one(f"[1,{space}2]", Any)


def test_numbers_match_json_loads() -> None:
    cases = ["0", "-0", "-0.0", "1e2", "1E-2", "-1.5e+3", "123456789012345678901234567890", "0.1"]
    for text in cases:
        assert_same(polycodec.decode_one(text, Any), json.loads(text))


def test_escapes_match_json_loads() -> None:
    text = r'"\u00e9\ud834\udd1e\"\\\/\b\f\n\r\t\u0000"'
    assert_same(polycodec.decode_one(text, Any), json.loads(text))
    assert_same(polycodec.decode_one(text, str), json.loads(text))


def test_duplicate_keys_last_wins_like_json_loads() -> None:
    assert polycodec.decode_one(b'{"a": 1, "a": 2}', Any) == json.loads(b'{"a": 1, "a": 2}')
    assert polycodec.decode_one(b'{"a": 1, "a": 2}', dict[str, int]) == {"a": 2}
