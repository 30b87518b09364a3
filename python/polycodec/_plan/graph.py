"""The node list as a graph: the children of a node, renumbering, compaction, and which nodes
decode to unhashable values."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

from .spec import RECORD_KINDS, Node
from .typeinfo import is_attrs


def unhashable(nodes: List[Node], index: int, seen: Set[int]) -> Optional[str]:
    """What in node ``index`` decodes to an unhashable value (None when every value it can
    decode to is hashable; ``Any`` and extensions are given the benefit of the doubt)."""
    if index in seen:
        return None
    seen.add(index)
    kind, data = nodes[index]
    if kind in ("list", "set", "dict"):
        return kind
    if kind == "typeddict":
        return f"{data['name']} (a TypedDict: its values are dicts)"
    if kind == "bytes" and data["cls"] is bytearray:
        return "bytearray"
    if kind == "raw":
        return "Raw"
    if kind == "extension" or (kind == "dataclass" and data["cls"].__hash__ is object.__hash__):
        return None
    if kind == "dataclass":
        cls = data["cls"]
        if cls.__hash__ is None:
            what = "an attrs class" if is_attrs(cls) else "a dataclass"
            return f"{cls.__qualname__} ({what} with eq and without frozen or unsafe_hash)"
        # A generated __hash__ hashes the fields that take part in it.
        if is_attrs(cls):
            attributes = sys.modules["attr"].fields(cls)
            hashed = {a.name for a in attributes if (a.eq if a.hash is None else a.hash)}
        else:
            fields = dataclasses.fields(cls)
            hashed = {f.name for f in fields if (f.compare if f.hash is None else f.hash)}
        below = [f["type"] for f in data["fields"] if f["name"] in hashed]
    else:
        below = children(kind, data)
    for child in below:
        found = unhashable(nodes, child, seen)
        if found is not None:
            return found
    return None


def children(kind: str, data: Dict[str, Any]) -> List[int]:
    if kind in ("list", "set", "frozenset", "var_tuple"):
        return [data["item"]]
    if kind == "tuple":
        return list(data["items"])
    if kind == "dict":
        return [data["key"], data["value"]]
    if kind == "union":
        return list(data["variants"])
    if kind == "tagged_union":
        return [record for _, record in data["tags"]]
    if kind in RECORD_KINDS:
        tag = [data["class_tag"][2]] if data["class_tag"] is not None else []
        return [field["type"] for field in data["fields"]] + tag
    if kind == "extension":
        return [data["wire"]]
    return []


class Swap(Dict[int, int]):
    """A node renumbering that moves one index and keeps every other."""

    def __init__(self, old: int, new: int) -> None:
        super().__init__({old: new})

    def __missing__(self, index: int) -> int:
        return index


def renumber(kind: str, data: Dict[str, Any], new: Dict[int, int]) -> Dict[str, Any]:
    out = dict(data)
    if kind in ("list", "set", "frozenset", "var_tuple"):
        out["item"] = new[data["item"]]
    elif kind == "tuple":
        out["items"] = [new[i] for i in data["items"]]
    elif kind == "dict":
        out["key"], out["value"] = new[data["key"]], new[data["value"]]
    elif kind == "union":
        out["variants"] = [new[i] for i in data["variants"]]
    elif kind == "tagged_union":
        out["tags"] = [(tag, new[record]) for tag, record in data["tags"]]
    elif kind in RECORD_KINDS:
        out["fields"] = [{**field, "type": new[field["type"]]} for field in data["fields"]]
        if data["class_tag"] is not None:
            tag_field, tag, node = data["class_tag"]
            out["class_tag"] = (tag_field, tag, new[node])
    elif kind == "extension":
        out["wire"] = new[data["wire"]]
    return out


def compact(nodes: List[Node], root: int) -> Tuple[List[Node], int]:
    """Drop unreachable nodes, keeping the relative order (and so readable indices)."""
    reachable = set()
    todo = [root]
    while todo:
        index = todo.pop()
        if index not in reachable:
            reachable.add(index)
            todo += children(*nodes[index])
    keep = sorted(reachable)
    new = {old: position for position, old in enumerate(keep)}
    return [(nodes[i][0], renumber(*nodes[i], new)) for i in keep], new[root]


# ---------------------------------------------------------------------------------------------
# Entry point
