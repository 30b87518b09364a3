"""The CPython object layouts polycodec reads directly (``src/py/cpython/``): on every tested
interpreter each one passes its check at import and is used, and the portable path each falls
back to (forced with its environment switch) gives the same results."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import msgpack
import pytest

import polycodec
from polycodec import _polycodec

TESTED = {(3, 11), (3, 13), (3, 14), (3, 15)}


class Shout(str):
    pass


@dataclasses.dataclass
class Labels:
    ascii: str
    wide: str
    subclass: str
    keys: dict[str, int]


LABELS = Labels("plain", "caf\u00e9 \U0001f600", Shout("loud"), {"k": 1, "\u00e9": 2, "": 3})


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info[:2] not in TESTED,
    reason="the layouts are declared for the tested CPythons only",
)
def test_every_layout_is_read_directly_on_a_tested_interpreter() -> None:
    layouts = _polycodec._layouts()
    assert layouts and all(layouts.values()), layouts


def test_str_state_bits_agree_with_the_interpreter() -> None:
    # What the direct read gives is what json and msgpack (which read strs through the public
    # API) write.
    as_dict = dataclasses.asdict(LABELS)
    text = json.dumps(as_dict, ensure_ascii=False, separators=(",", ":")).encode()
    assert polycodec.encode_one(LABELS, format="json") == text
    assert polycodec.encode_one(LABELS, format="msgpack") == msgpack.packb(as_dict)
    assert polycodec.decode_one(polycodec.encode_one(LABELS), Labels) == LABELS


def test_portable_str_path_gives_the_same_bytes() -> None:
    script = textwrap.dedent("""
        import json, sys
        sys.path[:0] = json.loads(sys.argv[1])
        import test_cpython_layouts as t
        import polycodec
        from polycodec import _polycodec
        out = {fmt: polycodec.encode_one(t.LABELS, format=fmt).hex() for fmt in ("json", "msgpack")}
        out["layouts"] = _polycodec._layouts()
        out["round_trip"] = polycodec.decode_one(polycodec.encode_one(t.LABELS), t.Labels) == t.LABELS
        print(json.dumps(out))
        """)
    env = {**os.environ, "POLYCODEC_PORTABLE_STR": "1"}
    paths = json.dumps([os.path.dirname(__file__), *sys.path])
    done = subprocess.run(
        [sys.executable, "-c", script, paths], env=env, capture_output=True, text=True, check=True
    )
    out = json.loads(done.stdout)
    assert out["layouts"]["str_state"] is False
    assert out["round_trip"] is True
    for fmt in ("json", "msgpack"):
        assert bytes.fromhex(out[fmt]) == polycodec.encode_one(LABELS, format=fmt)
