"""The CPython layouts polycodec reads directly (src/py/cpython/): each is checked against the
running interpreter when the module loads, and ``POLYCODEC_PORTABLE`` (``all`` or a comma list of
layout names, read once at load) turns them off. On every tested CPython each layout passes its
check; turned off, the portable paths give the same results (the test files of the fast paths
also rerun themselves with their layouts off: test_inline_values.py, test_slots.py,
test_record_building.py, test_encode_fast_paths.py, test_builtins_dicts.py)."""

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

LAYOUTS = [
    "str_state",
    "slot_offsets",
    "slotted_creation",
    "inline_values",
    "dict_entries",
    "dict_template",
    "wide_int",
    "int_digits",
]
OFF = "turned off by POLYCODEC_PORTABLE"

#: The interpreters the test command runs (tests/test_*.py pass on each); every layout is
#: known for each of them.
TESTED = sys.implementation.name == "cpython" and sys.version_info[:2] in {
    (3, 11),
    (3, 13),
    (3, 14),
    (3, 15),
}

SCRIPT = textwrap.dedent("""
    import dataclasses, json, sys, uuid
    import polycodec
    from polycodec import _polycodec

    @dataclasses.dataclass
    class Plain:
        a: int
        b: str
        c: uuid.UUID

    @dataclasses.dataclass(slots=True)
    class Slotted:
        a: int
        b: list[Plain]

    codec = polycodec.Codec(list[Slotted], format=sys.argv[1])
    value = [
        Slotted(index, [Plain(index, "é" * index, uuid.UUID(int=2**127 + index))])
        for index in range(3)
    ]
    decoded = codec.decode_one(codec.encode_one(value))
    json_form = polycodec.Codec(list[Slotted]).to_builtins(value)
    print(json.dumps({
        "layouts": _polycodec._layouts(),
        "access": codec._field_access(),
        "same": decoded == value,
        "dicts": [list(vars(item.b[0]).items())[:2] for item in decoded],
        "json_form": json_form,
        "from_builtins": polycodec.from_builtins(json_form, list[Slotted]) == value,
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
    result["stderr"] = done.stderr
    return result


@pytest.mark.skipif(not TESTED, reason="the layouts are known for the tested CPythons only")
def test_every_layout_passes_its_check_on_every_tested_cpython() -> None:
    if os.environ.get("POLYCODEC_PORTABLE"):
        pytest.skip("POLYCODEC_PORTABLE turns layouts off in this run")
    assert _polycodec._layouts() == {name: "in use" for name in LAYOUTS}


def test_a_layout_not_in_use_says_why() -> None:
    layouts = _polycodec._layouts()
    assert list(layouts) == LAYOUTS
    for name, why in layouts.items():
        assert isinstance(why, str) and why
        if why != "in use":
            assert why == OFF or why.startswith(("not known for", "failed its check: "))


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
@pytest.mark.parametrize(
    "portable, off",
    [
        (None, set()),
        ("all", set(LAYOUTS)),
        ("inline_values", {"inline_values"}),
        ("slotted_creation, str_state", {"slotted_creation", "str_state"}),
        (
            "slot_offsets,dict_entries,dict_template,wide_int,int_digits",
            {"slot_offsets", "dict_entries", "dict_template", "wide_int", "int_digits"},
        ),
    ],
)
def test_portable_switch_turns_layouts_off_with_the_same_results(
    portable: str | None, off: set[str], fmt: str
) -> None:
    result = _run(portable, fmt)
    layouts = result["layouts"]
    assert isinstance(layouts, dict) and list(layouts) == LAYOUTS
    if TESTED:
        assert layouts == {name: OFF if name in off else "in use" for name in LAYOUTS}
    else:
        assert "in use" not in layouts.values()
    inline = "inline values" if layouts["inline_values"] == "in use" else "dict"
    slots = "slot offsets" if layouts["slot_offsets"] == "in use" else "slot descriptors"
    assert result["access"] == {"Slotted": slots, "Plain": inline}
    assert result["same"] is True and result["from_builtins"] is True
    assert result["dicts"] == [[["a", index], ["b", "é" * index]] for index in range(3)]
    assert result["json_form"] == [
        {
            "a": index,
            "b": [
                {"a": index, "b": "é" * index, "c": f"80000000-0000-0000-0000-00000000000{index}"}
            ],
        }
        for index in range(3)
    ]


def test_unknown_layout_names_are_warned_about() -> None:
    result = _run("inline_values, no_such_layout", "json")
    assert "RuntimeWarning" in str(result["stderr"]) and "no_such_layout" in str(result["stderr"])
    layouts = result["layouts"]
    assert isinstance(layouts, dict) and layouts["inline_values"] == OFF


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
    assert out["layouts"]["str_state"] == OFF
    assert out["round_trip"] is True
    for fmt in ("json", "msgpack"):
        assert bytes.fromhex(out[fmt]) == polycodec.encode_one(LABELS, format=fmt)
