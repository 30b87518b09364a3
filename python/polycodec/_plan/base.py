"""The compiler's state (node list, memo, error site) and what every part of it uses: making a
node, and the error that says where an annotation sits."""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Dict, List, Literal, Mapping, Optional, Tuple, cast, overload

from .._custom_types import Extension
from .._naming import Rename
from .spec import (
    AliasMark,
    AliasPlaceholderSpec,
    BareKind,
    BareSpec,
    BytesSpec,
    DecimalSpec,
    DictSpec,
    EnumSpec,
    ExtensionSpec,
    FloatSpec,
    IntSpec,
    LiteralSpec,
    Node,
    RawSpec,
    RecordKind,
    RecordSpec,
    SequenceKind,
    SequenceSpec,
    StrSpec,
    TaggedUnionSpec,
    TupleSpec,
    TzSpec,
    UnionSpec,
)
from .typeinfo import fmt

# Where an annotation sits: a label such as "field 'Point.x'" (None at the top level) plus the
# whole annotation of that field or top-level type, so nested errors can show both.
Site = Tuple[Optional[str], Any]


# A generic alias or class nested in itself deeper than this, with other type arguments each
# time (``type Nest[T] = list[Nest[list[T]]]``), would expand forever: it is refused.
NESTING_LIMIT = 32


def _alias_definition(alias: Any) -> str:
    """``Ids = list[int]``, for error messages (the value only when it can be evaluated)."""
    try:
        return f"{fmt(alias)} = {fmt(alias.__value__)}"
    except Exception:  # a value that does not evaluate is reported by the caller
        return fmt(alias)


@dataclasses.dataclass
class BusyAlias:
    """A type alias whose value is being compiled."""

    alias: Any  # the alias as written (``Tree``, ``Pair[int]``), for messages
    key: Tuple[Any, Tuple[Any, ...]]  # the alias object and its type arguments
    placeholder: int  # the node a reference back to it gets until its value is compiled
    used: bool = False  # whether such a reference was made (the alias is recursive)


class CompilerBase(abc.ABC):
    """Walks one root type; holds the node list, the record memo and the error site. Each part
    of the compiler (records.py, unions.py, ...) is a subclass; ``compiler._Compiler`` joins them.
    """

    def __init__(
        self,
        rename: Rename,
        omit_defaults: bool,
        forbid_unknown_fields: bool,
        array_like: bool,
        branched: bool = False,
        extensions: Optional[Dict[type, Extension]] = None,
        format: str = "json",
    ) -> None:
        self.nodes: List[Node] = []
        # The wire format, for the refusal of a type it cannot carry (Raw).
        self._format = format
        # Classes carried as another type's value (the ``extensions`` option).
        self._extensions: Dict[type, Extension] = extensions or {}
        # Extension classes whose wire type is being compiled (to refuse a cycle).
        self._extensions_busy: List[type] = []
        # True for formats whose unions need no tag: untagged records may share a union.
        self._branched = branched
        # The codec's options: every record's, except where a dataclass sets its own
        # (``polycodec.options``).
        self._options: Dict[str, Any] = {
            "rename": rename,
            "forbid_unknown_fields": forbid_unknown_fields,
            "omit_defaults": omit_defaults,
            "array_like": array_like,
        }
        # While a record field's own annotation is compiled: whether ``UnsetType`` may be one of
        # its alternatives (not inside a container), and whether it was.
        self._unset_allowed = False
        self._unset_seen = False
        # (class, type args) keys can hold unhashable Annotated metadata, so a list, not a dict.
        self._records: List[Tuple[Tuple[type, Tuple[Any, ...]], int]] = []
        # Classes whose fields are being compiled, innermost last.
        self._records_busy: List[type] = []
        # (union node, its annotation, its site, the aliases it sits in) to check at the end.
        self._pending_unions: List[Tuple[int, Any, Site, List[Any]]] = []
        # Each set or frozenset node, with its item annotation and where it was met.
        self._sets: List[Tuple[int, Any, Site]] = []
        self._site: Site = (None, None)
        self._typevars: Mapping[Any, Any] = {}
        # Type aliases whose value is being compiled, innermost last (recursion finds its own).
        self._aliases_busy: List[BusyAlias] = []
        # Node a recursive alias stands for -> its name, marked on the node once compiled.
        self._recursive_aliases: Dict[int, AliasMark] = {}
        # While unions are checked at the end: the aliases the one being checked sat in.
        self._union_aliases: Optional[List[Any]] = None

    # -- errors --------------------------------------------------------------------------------

    def fail(self, tp: Any, reason: str) -> TypeError:
        label, outer = self._site
        what = fmt(tp)
        nested = outer is not None and fmt(outer) != what
        if label is None:
            if nested:
                where = f"the annotation {what!r} within the type {fmt(outer)!r}"
            else:
                where = f"the type {what!r}"
        elif nested:
            where = f"the annotation {what!r} (within {fmt(outer)!r}) of {label}"
        else:
            where = f"the annotation {what!r} of {label}"
        trail = self._union_aliases
        if trail is None:
            trail = [busy.alias for busy in self._aliases_busy]
        if trail and fmt(trail[-1]) != what:
            where += f", in the type alias {_alias_definition(trail[-1])!r}"
        return TypeError(f"polycodec cannot handle {where}: {reason}")

    # -- node construction ---------------------------------------------------------------------

    @overload
    def add(self, kind: BareKind, data: BareSpec) -> int: ...

    @overload
    def add(self, kind: Literal["raw"], data: RawSpec) -> int: ...

    @overload
    def add(self, kind: Literal["int"], data: IntSpec) -> int: ...

    @overload
    def add(self, kind: Literal["float"], data: FloatSpec) -> int: ...

    @overload
    def add(self, kind: Literal["str"], data: StrSpec) -> int: ...

    @overload
    def add(self, kind: Literal["bytes"], data: BytesSpec) -> int: ...

    @overload
    def add(self, kind: Literal["decimal"], data: DecimalSpec) -> int: ...

    @overload
    def add(self, kind: Literal["datetime", "time"], data: TzSpec) -> int: ...

    @overload
    def add(self, kind: Literal["enum"], data: EnumSpec) -> int: ...

    @overload
    def add(self, kind: Literal["literal"], data: LiteralSpec) -> int: ...

    @overload
    def add(self, kind: Literal["union"], data: UnionSpec) -> int: ...

    @overload
    def add(self, kind: Literal["tagged_union"], data: TaggedUnionSpec) -> int: ...

    @overload
    def add(self, kind: SequenceKind, data: SequenceSpec) -> int: ...

    @overload
    def add(self, kind: Literal["tuple"], data: TupleSpec) -> int: ...

    @overload
    def add(self, kind: Literal["dict"], data: DictSpec) -> int: ...

    @overload
    def add(self, kind: Literal["extension"], data: ExtensionSpec) -> int: ...

    @overload
    def add(self, kind: RecordKind, data: RecordSpec) -> int: ...

    @overload
    def add(self, kind: Literal["alias"], data: AliasPlaceholderSpec) -> int: ...

    def add(self, kind: str, data: Mapping[str, Any]) -> int:
        """Append a node; each kind's data is typed by its TypedDict (spec.py). The node list
        holds plain dicts, which the graph passes (renumbering, compaction) treat alike."""
        self.nodes.append((kind, cast(Dict[str, Any], data)))
        return len(self.nodes) - 1

    def add_changed(self, index: int, changes: Mapping[str, Any]) -> int:
        """Append a copy of node ``index`` with ``changes`` (constraints merged, an extension
        made nullable): the copy keeps its kind, so its keys stay those of that kind."""
        kind, data = self.nodes[index]
        self.nodes.append((kind, {**data, **changes}))
        return len(self.nodes) - 1

    @abc.abstractmethod
    def _variants(self, tp: Any) -> List[int]:
        """Compile ``tp`` into its union alternatives (``compiler._Compiler``)."""

    @abc.abstractmethod
    def _union(self, variants: List[int], tp: Any) -> int:
        """One node for several alternatives (``unions.UnionCompiler``)."""

    def node(self, tp: Any) -> int:
        """Compile ``tp`` into one node (a union node if it has several alternatives)."""
        variants = self._variants(tp)
        return variants[0] if len(variants) == 1 else self._union(variants, tp)

    def _alternatives(self, index: int) -> List[int]:
        """A node as union alternatives: a union's own (a recursive alias's value), or itself."""
        kind, data = self.nodes[index]
        return list(data["variants"]) if kind == "union" else [index]
