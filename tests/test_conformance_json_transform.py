"""JSONTestSuite's test_transform files: inputs parsers disagree on (number edges, duplicate
and normalisation-distinct keys, invalid code points). Each decodes as `Any` and re-encodes to
what the stdlib's json gives, except where polycodec decides otherwise on purpose."""

import json
from pathlib import Path
from typing import Any

import pytest

import polycodec

# Vendored in the repository (tests/data/JSONTestSuite/SOURCE.md says where it comes from).
SUITE = Path(__file__).resolve().parent / "data" / "JSONTestSuite" / "test_transform"
FILES = sorted(SUITE.glob("*.json"))

# Invalid UTF-8 and lone surrogate escapes: the stdlib yields strs with lone surrogates, which
# no UTF-8 output can hold; polycodec refuses them when reading.
REFUSED = {
    "string_1_escaped_invalid_codepoint.json",
    "string_1_invalid_codepoint.json",
    "string_2_escaped_invalid_codepoints.json",
    "string_2_invalid_codepoints.json",
    "string_3_escaped_invalid_codepoints.json",
    "string_3_invalid_codepoints.json",
}


def test_suite_is_present() -> None:
    assert len(FILES) == 22


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_transform(path: Path) -> None:
    data = path.read_bytes()
    if path.name in REFUSED:
        with pytest.raises(polycodec.DecodeError):
            polycodec.decode_one(data, Any)
        return
    value = polycodec.decode_one(data, Any)
    expected = json.loads(data)
    assert value == expected
    assert (
        polycodec.encode_one(value, type=Any)
        == json.dumps(expected, separators=(",", ":"), ensure_ascii=False).encode()
    )
