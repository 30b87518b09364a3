"""Containers: tuples, sequences, sets, frozensets and dicts."""

from __future__ import annotations

import typing
from typing import Any, Tuple

from .base import CompilerBase
from .graph import unhashable
from .spec import SequenceKind

_DICT_KEY_KINDS = frozenset({"str", "int", "enum", "uuid", "literal", "any"})


class ContainerCompiler(CompilerBase):
    def _tuple(self, tp: Any, args: Tuple[Any, ...]) -> int:
        if tp is tuple or tp is typing.Tuple:
            return self._collection("var_tuple", ())
        if len(args) == 2 and args[1] is Ellipsis:
            return self._collection("var_tuple", args[:1])
        if any(a is Ellipsis for a in args):
            raise self.fail(tp, "'...' is only allowed as the second of two tuple arguments")
        return self.add("tuple", {"items": [self.node(a) for a in args]})

    def _collection(self, kind: SequenceKind, args: Tuple[Any, ...]) -> int:
        item_tp = args[0] if args else Any
        item = self.node(item_tp)
        index = self.add(kind, {"item": item, "min_length": None, "max_length": None})
        if kind in ("set", "frozenset"):
            self._sets.append((index, item_tp, self._site))
        return index

    def _check_set_items(self) -> None:
        """Refuse a set whose items would decode to unhashable values: every decode of a
        non-empty one would fail (once the records are complete, so after every field)."""
        for index, item_tp, site in self._sets:
            found = unhashable(self.nodes, self.nodes[index][1]["item"], set())
            if found is not None:
                self._site = site
                raise self.fail(
                    item_tp,
                    f"set items must be hashable, and {found} is not (no item would decode)",
                )

    def _dict(self, tp: Any, args: Tuple[Any, ...]) -> int:
        key_tp, value_tp = args if len(args) == 2 else (Any, Any)
        key = self.node(key_tp)
        kind, data = self.nodes[key]
        if kind not in _DICT_KEY_KINDS or (
            kind == "literal" and any(isinstance(v, bool) for v in data["values"])
        ):
            what = "a reference back to the recursive type alias" if kind == "alias" else kind
            raise self.fail(tp, f"dict keys must be str, int, Enum, UUID or Literal, not {what}")
        value = self.node(value_tp)
        return self.add(
            "dict", {"key": key, "value": value, "min_length": None, "max_length": None}
        )
