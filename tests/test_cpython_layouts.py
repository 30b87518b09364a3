"""The CPython layouts polycodec reads directly (src/py/cpython/): each is checked against the
running interpreter when the module loads, and ``POLYCODEC_PORTABLE`` (``all`` or a comma list of
layout names, read once at load) turns them off. On every tested CPython each layout passes its
check; turned off, the portable paths give the same results (the other test files run both ways
for each layout: test_inline_values.py, test_slots.py)."""

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

LAYOUTS = ["str_state", "slotted_creation", "inline_values"]

#: The interpreters the test command runs (tests/test_*.py pass on each); every layout is
#: compiled for each of them.
TESTED = sys.implementation.name == "cpython" and sys.version_info[:2] in {
    (3, 11),
    (3, 13),
    (3, 14),
    (3, 15),
}

SCRIPT = textwrap.dedent("""
    import dataclasses, json, sys
    import polycodec
    from polycodec import _polycodec

    @dataclasses.dataclass
    class Plain:
        a: int
        b: str

    @dataclasses.dataclass(slots=True)
    class Slotted:
        a: int
        b: list[Plain]

    codec = polycodec.Codec(list[Slotted], format=sys.argv[1])
    value = [Slotted(index, [Plain(index, "é" * index)]) for index in range(3)]
    decoded = codec.decode_one(codec.encode_one(value))
    print(json.dumps({
        "layouts": _polycodec._layouts(),
        "access": codec._field_access(),
        "same": decoded == value,
        "dicts": [list(vars(item.b[0]).items()) for item in decoded],
    }))
    """)


def _run(portable: str | None, fmt: str) -> dict[str, object]:
    env = dict(os.environ)
    env.pop("POLYCODEC_PORTABLE", None)
    if portable is not None:
        env["POLYCODEC_PORTABLE"] = portable
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, fmt], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.skipif(not TESTED, reason="the layouts are compiled for the tested CPythons only")
def test_every_layout_passes_its_check_on_every_tested_cpython() -> None:
    if os.environ.get("POLYCODEC_PORTABLE"):
        pytest.skip("POLYCODEC_PORTABLE turns layouts off in this run")
    assert _polycodec._layouts() == {name: True for name in LAYOUTS}


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
@pytest.mark.parametrize(
    "portable, off",
    [
        (None, set()),
        ("all", set(LAYOUTS)),
        ("inline_values", {"inline_values"}),
        ("slotted_creation, str_state", {"slotted_creation", "str_state"}),
    ],
)
def test_portable_switch_turns_layouts_off_with_the_same_results(
    portable: str | None, off: set[str], fmt: str
) -> None:
    result = _run(portable, fmt)
    layouts = result["layouts"]
    assert isinstance(layouts, dict) and sorted(layouts) == sorted(LAYOUTS)
    if TESTED:
        assert layouts == {name: name not in off for name in LAYOUTS}
    else:
        assert not any(layouts.values())
    inline = "inline values" if layouts["inline_values"] else "dict"
    assert result["access"] == {"Slotted": "slot offsets", "Plain": inline}
    assert result["same"] is True
    assert result["dicts"] == [[["a", index], ["b", "é" * index]] for index in range(3)]


class Shout(str):
    pass


@dataclasses.dataclass
class Labels:
    ascii: str
    wide: str
    subclass: str
    keys: dict[str, int]


LABELS = Labels("plain", "caf\u00e9 \U0001f600", Shout("loud"), {"k": 1, "\u00e9": 2, "": 3})


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
    env = {**os.environ, "POLYCODEC_PORTABLE": "str_state"}
    paths = json.dumps([os.path.dirname(__file__), *sys.path])
    done = subprocess.run(
        [sys.executable, "-c", script, paths], env=env, capture_output=True, text=True, check=True
    )
    out = json.loads(done.stdout)
    assert out["layouts"]["str_state"] is False
    assert out["round_trip"] is True
    for fmt in ("json", "msgpack"):
        assert bytes.fromhex(out[fmt]) == polycodec.encode_one(LABELS, format=fmt)
