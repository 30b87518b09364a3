"""Unions: normalisation, tagging records by a Literal field or their class tag, and the checks
that a decoder can tell every alternative apart."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, cast

from .base import CompilerBase
from .spec import RECORD_KINDS, TaggedUnionSpec
from .typeinfo import dedupe_literals, literal_category

# Alternatives that may share a union category in a branched format (see unions_need_tag).
_BRANCH_KINDS = RECORD_KINDS | {"tagged_union"}

# JSON token category of each node kind, for union validation (kinds needing data are below).
_CATEGORY = {
    "none": "null",
    "bool": "boolean",
    "int": "integer",
    "float": "float",
    **dict.fromkeys(
        ("str", "bytes", "datetime", "date", "time", "timedelta", "uuid", "decimal"), "string"
    ),
    **dict.fromkeys(("list", "set", "frozenset", "var_tuple", "tuple", "namedtuple"), "array"),
    "dict": "object",
    # No JSON token: UNSET is never on the wire (a branched format's own branch says it).
    "unset": "unset",
}


class UnionCompiler(CompilerBase):
    def _nullable_extension(self, variants: List[int], tp: Any) -> int:
        """``Optional[cls]`` of an extension class: one extension node whose wire type is
        ``Optional[wire]`` and that lets None through, so unions never hold extensions."""
        extensions = [v for v in variants if self.nodes[v][0] == "extension"]
        others = [v for v in variants if v not in extensions]
        if len(extensions) != 1 or not others or any(self.nodes[v][0] != "none" for v in others):
            raise self.fail(
                tp,
                "an extension type can only be combined with None in a union (Optional[...]); "
                "its wire form could not be told apart from the other alternatives",
            )
        wire = self.nodes[extensions[0]][1]["wire"]
        wire_kind, wire_data = self.nodes[wire]
        if wire_kind != "any":
            alternatives = wire_data["variants"] if wire_kind == "union" else [wire]
            wire = self._union([others[0], *alternatives], tp)
        return self.add_changed(extensions[0], {"wire": wire, "nullable": True})

    def _nullable_raw(self, variants: List[int], tp: Any) -> int:
        """``Optional[Raw]``: one Raw node that lets null and None through. A Raw takes any
        value, so no other type can share a union with it."""
        kinds = {self.nodes[v][0] for v in variants}
        if kinds != {"raw", "none"}:
            raise self.fail(
                tp,
                "Raw takes any value, so a union can hold it only with None (Optional[Raw])",
            )
        return self.add("raw", {"nullable": True})

    # -- unions --------------------------------------------------------------------------------

    def _union(self, variants: List[int], tp: Any) -> int:
        """Normalise alternatives now; validation waits until every record is complete."""
        variants = [a for v in variants for a in self._alternatives(v)]
        if any(self.nodes[v][0] == "extension" for v in variants):
            if any(self.nodes[v][0] == "any" for v in variants):
                return self.add("any", {})
            return self._nullable_extension(variants, tp)
        if any(self.nodes[v][0] == "raw" for v in variants):
            return self._nullable_raw(variants, tp)
        kept = self._normalise(variants)
        if len(kept) == 1:
            return kept[0]
        index = self.add("union", {"variants": kept})
        aliases = [busy.alias for busy in self._aliases_busy]
        self._pending_unions.append((index, tp, self._site, aliases))
        return index

    def _normalise(self, variants: List[int]) -> List[int]:
        """A union's alternatives with one ``none`` at most and one merged ``literal``;
        ``Any`` among them makes the whole union ``any``."""
        if any(self.nodes[v][0] == "any" for v in variants):
            return [self.add("any", {})]
        kept: List[int] = []
        literals: List[int] = []
        for v in variants:
            kind = self.nodes[v][0]
            if kind == "literal":
                if not literals:
                    kept.append(v)
                literals.append(v)
            elif kind == "none" and any(self.nodes[k][0] == "none" for k in kept):
                continue
            elif v not in kept:
                kept.append(v)
        if len(literals) > 1:
            values = [x for v in literals for x in self.nodes[v][1]["values"]]
            merged = self.add("literal", {"values": dedupe_literals(values)})
            kept[kept.index(literals[0])] = merged
        return kept

    def _finish_unions(self) -> None:
        """Tag dataclass alternatives and check that every union can be decoded unambiguously."""
        for index, tp, site, aliases in self._pending_unions:
            if self.nodes[index][0] != "union":  # one that a recursive alias's Any absorbed
                continue
            self._site = site
            self._union_aliases = aliases
            variants: List[int] = self.nodes[index][1]["variants"]
            records = [v for v in variants if self.nodes[v][0] == "dataclass"]
            if len(records) > 1:
                tagged = self._tagged_union(records, tp)
                if tagged is None:  # a branched format: the records stay separate alternatives
                    self._check_categories(variants, tp)
                    continue
                if len(records) == len(variants):
                    self.nodes[index] = ("tagged_union", cast(Dict[str, Any], tagged))
                    continue
                first = variants.index(records[0])
                variants = [v for v in variants if v not in records]
                variants.insert(first, self.add("tagged_union", tagged))
                self.nodes[index] = ("union", {"variants": variants})
            self._check_categories(variants, tp)
        self._union_aliases = None

    def _tagged_union(self, records: List[int], tp: Any) -> Optional[TaggedUnionSpec]:
        """The union's tag: the classes' own tags (``polycodec.options(tag=...)``), or a field
        with the same wire name in every class, a Literal with disjoint values.

        Without one, a branched format keeps the records apart by the union's branch index
        (None is returned); any other format refuses the union.
        """
        if any(self.nodes[r][1]["class_tag"] is not None for r in records):
            tagged = self._class_tagged_union(records, tp)
            self._check_array_like(records, tp)
            return tagged
        for candidate in self.nodes[records[0]][1]["fields"]:
            wire_name = candidate["wire_name"]
            tags: List[Tuple[Any, int]] = []
            positions: List[int] = []
            for record in records:
                position = self._tag_position(record, wire_name)
                if position is None:
                    break
                positions.append(position)
                field_type = self.nodes[record][1]["fields"][position]["type"]
                tags += [(value, record) for value in self.nodes[field_type][1]["values"]]
            else:
                if len({(type(t), t) for t, _ in tags}) != len(tags):
                    continue
                clash = self._tag_clash(records, positions)
                if clash is None:
                    self._set_tags(records, positions)
                    self._check_array_like(records, tp)
                    return {"tag_field": wire_name, "tags": tags}
                if not self._branched:
                    raise self.fail(
                        tp, f"{clash} is already tagged by another field in a different union"
                    )
        if self._branched:
            return None
        names = ", ".join(self.nodes[r][1]["name"] for r in records)
        raise self.fail(
            tp,
            f"the dataclasses {names} cannot be told apart: they need a shared field annotated "
            "with Literal[...] (same wire name in each class) with distinct values, e.g. "
            "kind: Literal['a'] = 'a', or tags of their own: @polycodec.options(tag=True)",
        )

    def _class_tagged_union(self, records: List[int], tp: Any) -> TaggedUnionSpec:
        """A union of classes tagged by ``polycodec.options``: each class's tag names it; a
        class without one may take part through a ``Literal`` field of the tag's wire name."""
        tag_fields: Dict[str, str] = {}
        for record in records:
            class_tag = self.nodes[record][1]["class_tag"]
            if class_tag is not None:
                tag_fields.setdefault(class_tag[0], self._describe(record))
        if len(tag_fields) > 1:
            shown = ", ".join(f"{name} by {field!r}" for field, name in tag_fields.items())
            raise self.fail(
                tp,
                f"the classes of a tagged union share one tag field, and these are tagged by "
                f"different ones ({shown}); give them the same tag_field",
            )
        (wire_name,) = tag_fields
        tags: List[Tuple[Any, int]] = []
        literal_records: List[int] = []
        positions: List[int] = []
        for record in records:
            data = self.nodes[record][1]
            if data["class_tag"] is not None:
                tags.append((data["class_tag"][1], record))
                continue
            position = self._tag_position(record, wire_name)
            if position is None:
                raise self.fail(
                    tp,
                    f"{data['name']} has no tag, and the other classes of the union are tagged "
                    f"by {wire_name!r}: tag it with @polycodec.options(tag=...) too, or give it "
                    f"a field {wire_name!r} annotated Literal[...]",
                )
            literal_records.append(record)
            positions.append(position)
            field_type = data["fields"][position]["type"]
            tags += [(value, record) for value in self.nodes[field_type][1]["values"]]
        owners: Dict[Tuple[type, Any], int] = {}
        for value, record in tags:
            other = owners.setdefault((type(value), value), record)
            if other != record:
                raise self.fail(
                    tp,
                    f"{self._describe(other)} and {self._describe(record)} have the same tag "
                    f"{value!r}, so a decoder could not tell them apart",
                )
        clash = self._tag_clash(literal_records, positions)
        if clash is not None:
            raise self.fail(tp, f"{clash} is already tagged by another field in a different union")
        self._set_tags(literal_records, positions)
        return {"tag_field": wire_name, "tags": tags}

    def _check_array_like(self, records: List[int], tp: Any) -> None:
        """A tagged union is read as one shape: its classes are all array_like, or none is (a
        branched format writes no record as an array)."""
        if self._branched:
            return
        shapes = {bool(self.nodes[r][1]["array_like"]) for r in records}
        if len(shapes) > 1:
            names = ", ".join(
                f"{self._describe(r)} ({'array_like' if self.nodes[r][1]['array_like'] else 'object'})"
                for r in records
            )
            raise self.fail(
                tp,
                f"the classes of a tagged union must all be array_like or all not: {names}",
            )

    def _tag_position(self, record: int, wire_name: str) -> Optional[int]:
        for position, field in enumerate(self.nodes[record][1]["fields"]):
            if field["wire"] and field["wire_name"] == wire_name:
                return position if self.nodes[field["type"]][0] == "literal" else None
        return None

    def _tag_clash(self, records: List[int], positions: List[int]) -> Optional[str]:
        """The name of a record already tagged by another field (in another union), if any."""
        for record, position in zip(records, positions):
            data = self.nodes[record][1]
            if data["tag"] is not None and data["tag"][0] != position:
                return str(data["name"])
        return None

    def _set_tags(self, records: List[int], positions: List[int]) -> None:
        for record, position in zip(records, positions):
            data = self.nodes[record][1]
            tag_type = data["fields"][position]["type"]
            data["tag"] = (position, self.nodes[tag_type][1]["values"][0])

    def _categories(self, index: int) -> List[str]:
        kind, data = self.nodes[index]
        if kind in ("dataclass", "typeddict"):
            return ["array" if data["array_like"] else "object"]
        if kind == "tagged_union":
            return self._categories(data["tags"][0][1])
        if kind == "enum":
            return {"str": ["string"], "int": ["integer"]}.get(
                data["value_kind"], ["string", "integer"]
            )
        if kind == "literal":
            return sorted({literal_category(v) for v in data["values"]})
        return [_CATEGORY[kind]]

    def _describe(self, index: int) -> str:
        kind, data = self.nodes[index]
        if kind in RECORD_KINDS:
            return str(data["name"])
        if kind == "enum":
            return str(data["cls"].__qualname__)
        if kind == "literal":
            return f"Literal[{', '.join(repr(v) for v in data['values'])}]"
        if kind == "tagged_union":
            return " | ".join(self._describe(r) for _, r in data["tags"])
        return kind

    def _check_categories(self, variants: List[int], tp: Any) -> None:
        owner: Dict[str, int] = {}
        shared: Dict[str, List[int]] = {}  # records that share a category (branched formats)
        for v in variants:
            for category in self._categories(v):
                first = owner.setdefault(category, v)
                if first == v:
                    continue
                if self._branched and {self.nodes[first][0], self.nodes[v][0]} <= _BRANCH_KINDS:
                    shared.setdefault(category, [first]).append(v)
                    continue
                raise self.fail(
                    tp,
                    f"ambiguous union: {self._describe(first)} and {self._describe(v)} are both "
                    f"{category} values in JSON, so a decoder could not tell them apart",
                )
        for records in shared.values():
            self._check_branches(records, tp)

    def _check_branches(self, found: List[int], tp: Any) -> None:
        """Records sharing a union of a branched format: the encoder picks the branch by the
        value's class, so no two may be values of the same class."""
        classes: Dict[Any, int] = {}
        for v in found:
            kind, data = self.nodes[v]
            if kind == "tagged_union":
                members = [r for _, r in data["tags"]]
                keys = [self.nodes[r][1]["cls"] for r in members]
            else:
                members = [v]
                keys = [dict if kind == "typeddict" else data["cls"]]
            for key, member in zip(keys, members):
                other = classes.setdefault(key, member)
                if other == member:
                    continue
                if key is dict:
                    first, second = self._describe(other), self._describe(member)
                    clash = f"the TypedDicts {first} and {second} both have plain dict values"
                else:
                    clash = f"{key.__qualname__} appears twice (with different type arguments)"
                raise self.fail(
                    tp,
                    f"ambiguous union: {clash}, so an encoder could not tell which branch a "
                    "value takes",
                )
