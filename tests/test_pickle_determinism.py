"""The same value always pickles to the same bytes, whatever other threads or the caller hold.

The encoder once memoized an object only when its reference count said it might be met again,
so a reference held elsewhere (by the caller, or by another thread encoding the same value)
added MEMOIZE opcodes: the output still loaded, but its bytes (and so any hash, cache key or
deduplication built on them) changed from run to run. Objects are now memoized by identity,
as the stdlib does, and only what the value itself contains decides what is written.
"""

from __future__ import annotations

import dataclasses
import pickle
import threading
from typing import Any, Optional

import pytest

import polycodec

PROTOCOLS = [2, 3, 4, 5]


@dataclasses.dataclass
class Node:
    name: str
    size: int
    tags: list[str]
    attrs: dict[str, str]
    children: list[Node]
    parent_name: Optional[str] = None


def build_tree(count: int = 1000, fanout: int = 4) -> Node:
    """A tree of `count` nodes with fresh strs, lists and dicts everywhere."""
    nodes = [
        Node(f"node-{i}", i, [f"tag-{i % 7}", f"t{i}"], {"k": f"v{i}"}, []) for i in range(count)
    ]
    for i in range(1, count):
        parent = nodes[(i - 1) // fanout]
        parent.children.append(nodes[i])
        nodes[i].parent_name = parent.name  # shared with the parent: met twice in the pickle
    return nodes[0]


def walk(node: Node) -> list[Node]:
    out = [node]
    for child in node.children:
        out += walk(child)
    return out


def extra_references(root: Node) -> list[Any]:
    """References to every kind of object inside the tree, as a caller might keep them."""
    held: list[Any] = []
    for node in walk(root):
        held += [node, node.name, node.tags, node.tags[1], node.attrs, node.attrs["k"]]
        held.append(node.children)
    return held


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_same_bytes_with_and_without_an_extra_reference_held(protocol: int) -> None:
    root = build_tree(200)
    codec = polycodec.Codec(Node, "pickle", protocol=protocol)
    alone = codec.encode_one(root)
    many_alone = codec.encode_many([root, root.children[0]])
    held = extra_references(root)
    assert codec.encode_one(root) == alone
    assert codec.encode_many([root, root.children[0]]) == many_alone
    del held
    assert codec.encode_one(root) == alone
    assert pickle.loads(alone) == root
    assert codec.decode_one(alone) == root


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_same_bytes_under_any_with_an_extra_reference_held(protocol: int) -> None:
    text = "a str of its own " + "x" * 20
    value = {"a": [text, ["inner"]], "b": (1.5, b"bytes"), "c": bytearray(b"ba")}
    codec = polycodec.Codec(Any, "pickle", protocol=protocol)
    alone = codec.encode_one(value)
    held = [text, value["a"], value["a"][1], value["b"], value["b"][1], value["c"]]
    assert codec.encode_one(value) == alone
    assert held and pickle.loads(alone) == value


def test_equal_values_built_apart_give_equal_bytes() -> None:
    codec = polycodec.Codec(Node, "pickle")
    assert codec.encode_one(build_tree(300)) == codec.encode_one(build_tree(300))


def test_a_codec_shared_by_threads_writes_the_same_bytes() -> None:
    # The reported case: 8 threads encoding the same 1,000-node tree with one codec.
    root = build_tree(1000)
    codec = polycodec.Codec(Node, format="pickle")
    expected = codec.encode_one(root)
    threads_count, rounds = 8, 20
    barrier = threading.Barrier(threads_count)
    results: list[set[bytes]] = [set() for _ in range(threads_count)]
    errors: list[BaseException] = []

    def work(slot: int) -> None:
        try:
            barrier.wait()
            for _ in range(rounds):
                results[slot].add(codec.encode_one(root))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert set().union(*results) == {expected}
    assert pickle.loads(expected) == root


def test_threads_holding_references_do_not_change_the_bytes() -> None:
    # Other threads take and drop references to the tree's objects while it is encoded.
    root = build_tree(1000)
    codec = polycodec.Codec(Node, format="pickle", protocol=4)
    expected = codec.encode_one(root)
    stop = threading.Event()

    def hold() -> None:
        while not stop.is_set():
            held = extra_references(root)
            del held

    holders = [threading.Thread(target=hold) for _ in range(3)]
    for thread in holders:
        thread.start()
    try:
        outputs = {codec.encode_one(root) for _ in range(30)}
    finally:
        stop.set()
        for thread in holders:
            thread.join()
    assert outputs == {expected}


def test_an_object_met_twice_is_written_once() -> None:
    # Identity, not reference counts, decides: a str each child shares with its parent is a GET.
    root = build_tree(50)
    out = polycodec.Codec(Node, "pickle").encode_one(root)
    assert out.count(b"node-1\x94") == 1
    loaded = pickle.loads(out)
    assert loaded.children[0].parent_name is loaded.name


# ---- issue 27, item 8: equal values, equal bytes ----


@dataclasses.dataclass
class Labels:
    kind: str
    names: list[str]
    by_key: dict[str, str]
    anything: Any


def _labels(fresh: bool) -> Labels:
    """The same value built with every str one object (`fresh=False`) or each its own."""

    def text(s: str) -> str:
        return "".join(list(s)) if fresh else s

    return Labels(
        text("kind"),
        [text("kind"), text("names"), text("é✓"), text("kind")],
        {text("kind"): text("names"), text("x"): text("é✓")},
        [text("by_key"), {text("anything"): text("kind")}],
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_issue27_item8_equal_values_give_equal_bytes_whatever_str_identity(protocol: int) -> None:
    # The memo followed str identity: a value and its decoded copy encoded differently, and the
    # bytes grew by 5 each round of encode(decode(...)) (107, 112, 117, 122).
    codec = polycodec.Codec(Labels, "pickle", protocol=protocol)
    shared, fresh = _labels(False), _labels(True)
    assert shared == fresh
    expected = codec.encode_one(shared)
    assert codec.encode_one(fresh) == expected
    # An equal str is a memo get, wherever it is met (a field name too): "kind" once.
    assert expected.count(b"kind") == 1
    assert pickle.loads(expected) == shared
    data = expected
    for fast_path in (True, False):
        reader = polycodec.Codec(Labels, "pickle", protocol=protocol, fast_path=fast_path)
        for _ in range(4):
            decoded = reader.decode_one(data)
            assert decoded == shared
            data = codec.encode_one(decoded)
            assert data == expected
        assert codec.encode_one(pickle.loads(data)) == expected


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_issue27_item8_any_and_tree_round_trips_are_a_fixed_point(protocol: int) -> None:
    tree = build_tree(60)
    for tp, value in ((Node, tree), (Any, {"a": ["a", "b", ("a",)], "b": "a"})):
        codec = polycodec.Codec(tp, "pickle", protocol=protocol)
        first = codec.encode_one(value)
        assert pickle.loads(first) == value
        again = codec.encode_one(codec.decode_one(first))
        assert again == first
        assert codec.encode_one(codec.decode_one(again)) == first
