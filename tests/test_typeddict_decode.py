"""TypedDicts decoded from JSON, MessagePack and builtins. A dict with every key is a copy of a
template of the keys filled by position (the ``dict_template`` layout, where it is in use); one
with keys left out is filled key by key. Either way it is what ``json.loads`` gives for the
same text: the same keys in field order, an ordinary dict, tracked by the garbage collector
when it holds a container. A rerun of this file with ``POLYCODEC_PORTABLE=dict_template`` checks
the key-by-key path."""

from __future__ import annotations

import gc
import json
from typing import Any, TypedDict

import msgspec
import pytest

import polycodec
from layouts import rerun_portable


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "dict_template")


class Item(TypedDict):
    name: str
    qty: int
    tags: list[str]


class Partial(TypedDict, total=False):
    a: int
    b: str


INPUTS: list[tuple[Any, Any]] = [
    (Item, {"name": "x", "qty": 1, "tags": ["a"]}),
    (Item, {"tags": [], "qty": 2, "name": "y"}),
    (Partial, {"a": 1, "b": "z"}),
    (Partial, {"b": "z"}),
    (Partial, {}),
    (list[Item], [{"name": str(i), "qty": i, "tags": []} for i in range(5)]),
]


def ordered(cls: Any, value: Any) -> Any:
    """``value`` with its keys in the TypedDict's field order, as the decoder makes it."""
    if isinstance(value, list):
        return [ordered(cls.__args__[0], item) for item in value]
    return {key: value[key] for key in cls.__annotations__ if key in value}


@pytest.mark.parametrize(("cls", "value"), INPUTS)
def test_typeddicts_decode_to_ordinary_dicts_in_field_order(cls: Any, value: Any) -> None:
    text = json.dumps(value).encode()
    assert msgspec.json.decode(text, type=cls) == value
    expected = ordered(cls, value)
    for decoded in (
        polycodec.decode_one(text, cls),
        polycodec.decode_one(msgspec.msgpack.encode(value), cls, "msgpack"),
        polycodec.from_builtins(value, cls),
    ):
        assert decoded == expected
        assert json.dumps(decoded) == json.dumps(expected)  # the same key order
        for made in decoded if isinstance(decoded, list) else [decoded]:
            assert type(made) is dict
            made["extra"] = 1  # an ordinary, resizable dict
            del made["extra"]
            assert gc.is_tracked(made) == gc.is_tracked(json.loads(json.dumps(made)))


def test_missing_required_keys_and_wrong_values_fail_with_paths() -> None:
    with pytest.raises(polycodec.ValidationError, match="missing required field `qty`"):
        polycodec.decode_one(b'{"name": "x", "tags": []}', Item)
    with pytest.raises(polycodec.ValidationError) as error:
        polycodec.decode_one(b'[{"name": "x", "qty": 1, "tags": [1]}]', list[Item])
    assert error.value.path == "$[0].tags[0]"
