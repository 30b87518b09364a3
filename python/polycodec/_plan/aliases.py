"""Annotations that stand for another type: ``type`` aliases (``TypeAliasType``, recursive
ones included) and ``Annotated`` constraints. (``NewType`` and TypeVars resolve in
``compiler._variants``.)"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, Dict, List, Tuple

from .._meta import AVRO_TYPES
from .base import NESTING_LIMIT, BusyAlias
from .constraints import APPLIES_TO, EXCLUSIVE, check_ranges, constraints_of, convert
from .graph import children, renumber, Swap
from .spec import RECORD_KINDS
from .typeinfo import fmt, has_forward_refs, subst, unbound
from .unions import UnionCompiler


class AliasCompiler(UnionCompiler):
    def _alias(self, tp: Any, alias: Any, args: Tuple[Any, ...]) -> List[int]:
        """Compile a ``type`` alias: transparent (its value's nodes, fresh for each place it is
        used) unless its value refers back to it, when the value's node is shared by every
        reference back, as a record's is (and marked with the alias's name)."""
        params = tuple(getattr(alias, "__type_params__", None) or ())
        if any(not isinstance(p, typing.TypeVar) for p in params):
            raise self.fail(tp, "type aliases with a TypeVarTuple or ParamSpec are not supported")
        if len(args) > len(params):
            raise self.fail(tp, f"the type alias takes {len(params)} type arguments")
        bindings: Dict[Any, Any] = {}
        for position, param in enumerate(params):
            if position < len(args):
                bindings[param] = subst(args[position], self._typevars)
            else:
                bindings[param] = unbound(param, bindings)
        key = (alias, tuple(bindings.values()))
        for busy in self._aliases_busy:
            if busy.key == key:
                busy.used = True
                return [busy.placeholder]
        if sum(busy.key[0] is alias for busy in self._aliases_busy) >= NESTING_LIMIT:
            raise self.fail(
                tp,
                f"the type alias is nested in itself more than {NESTING_LIMIT} times, "
                "with other type arguments each time, so its plan would never end",
            )
        value = self._alias_value(tp, alias)
        placeholder = self.add("alias", {})
        busy = BusyAlias(tp, key, placeholder)
        saved = self._typevars
        self._aliases_busy.append(busy)
        self._typevars = bindings
        try:
            variants = self._variants(value)
        finally:
            self._aliases_busy.pop()
            self._typevars = saved
        if not busy.used:
            return variants
        if placeholder in variants:
            self._aliases_busy.append(busy)
            error = self.fail(
                tp,
                "the type alias is one of its own alternatives; a recursive alias must refer "
                "to itself inside a container (list, dict, tuple, ...) or a class",
            )
            self._aliases_busy.pop()
            raise error
        target = variants[0] if len(variants) == 1 else self._union(variants, value)
        self._redirect(placeholder, target)
        if self.nodes[target][0] not in RECORD_KINDS:
            name = getattr(alias, "__name__", fmt(alias))
            module = getattr(alias, "__module__", None)
            self._recursive_aliases[target] = {
                "type": alias,
                "name": name,
                "module": module,
                "args": tuple(bindings.values()) if args else (),
            }
        return [target]

    def _alias_value(self, tp: Any, alias: Any) -> Any:
        """The alias's value, with the forward references in it (strings, as a
        ``typing_extensions.TypeAliasType`` before 3.12 needs) resolved in its module."""
        try:
            value = alias.__value__
            if not has_forward_refs(value):
                return value
            module = sys.modules.get(getattr(alias, "__module__", None) or "")
            holder = types.SimpleNamespace(__annotations__={"value": value})
            hints = typing.get_type_hints(
                holder,
                globalns=vars(module) if module is not None else {},
                localns={getattr(alias, "__name__", ""): alias},
                include_extras=True,
            )
            return hints["value"]
        except Exception as exc:  # NameError, SyntaxError, TypeError from a bad value
            raise self.fail(
                tp,
                f"the value of the type alias cannot be evaluated: {exc} (the names it uses "
                "must be importable from the alias's module)",
            ) from exc

    def _redirect(self, placeholder: int, target: int) -> None:
        """Point every reference to ``placeholder`` at ``target``: only nodes made after the
        placeholder (while its alias's value was compiled) can hold one. A union holding it
        takes ``target``'s alternatives in its place, so unions stay flat."""
        for index in range(placeholder + 1, len(self.nodes)):
            kind, data = self.nodes[index]
            if placeholder not in children(kind, data):
                continue
            if kind == "union":
                variants: List[int] = []
                for v in data["variants"]:
                    variants += self._alternatives(target) if v == placeholder else [v]
                kept = self._normalise(variants)
                if len(kept) == 1:
                    self.nodes[index] = (self.nodes[kept[0]][0], dict(self.nodes[kept[0]][1]))
                else:
                    self.nodes[index] = ("union", {**data, "variants": kept})
            else:
                self.nodes[index] = (kind, renumber(kind, data, Swap(placeholder, target)))

    def _constrain(self, variants: List[int], tp: Any) -> List[int]:
        """Merge the constraints of ``Annotated`` ``tp`` into copies of the variants they fit.

        A constraint on a union applies to every alternative that accepts it (so
        ``Annotated[Optional[int], Meta(ge=0)]`` bounds the int) and must fit at least one.
        """
        try:
            constraints = constraints_of(tp.__metadata__)
        except ValueError as exc:
            raise self.fail(tp, str(exc)) from None
        if constraints and any(self.nodes[v][0] == "alias" for v in variants):
            raise self.fail(
                tp,
                "constraints cannot be put on a reference back to a recursive type alias inside "
                "its own value (put them on the alias's value instead)",
            )
        if constraints:
            # A recursive alias is one shared node: constraints go on copies of its alternatives.
            variants = [a for v in variants for a in self._alternatives(v)]
        copies: Dict[int, Dict[str, Any]] = {}
        for key, value in constraints:
            if key == "avro":
                # An Avro representation: kept on the node for the Avro schema's deriver.
                kinds = frozenset(AVRO_TYPES[value["type"]])
                hits = [i for i, v in enumerate(variants) if self.nodes[v][0] in kinds]
                if not hits:
                    raise self.fail(
                        tp,
                        f"Avro({value['type']!r}) applies only to "
                        + ", ".join(sorted(kinds)).replace("literal", "Literal of ints"),
                    )
                for i in hits:
                    copies.setdefault(i, dict(self.nodes[variants[i]][1]))["avro"] = value
                continue
            kinds, allowed = APPLIES_TO[key]
            hits = [i for i, v in enumerate(variants) if self.nodes[v][0] in kinds]
            if not hits:
                raise self.fail(tp, f"the constraint {key!r} applies only to {allowed}")
            for i in hits:
                kind, data = self.nodes[variants[i]]
                copy = copies.setdefault(i, dict(data))
                if key in EXCLUSIVE:
                    copy[EXCLUSIVE[key]] = None
                try:
                    copy[key] = convert(kind, key, value)
                except ValueError as exc:
                    raise self.fail(tp, str(exc)) from None
        result = list(variants)
        for i, data in copies.items():
            try:
                check_ranges(data)
            except ValueError as exc:
                raise self.fail(tp, str(exc)) from None
            result[i] = self.add_changed(variants[i], data)
        return result
