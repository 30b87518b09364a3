"""Binding a plan to a parsed schema (the codec's own, derived or given with ``schema=``): the
write op of each plan node, and which plan node each branch of a schema union is read as."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .._defaults import NODEFAULT
from .derive import RECORD_KINDS
from .._naming import avro_name, fullname
from .schema import Schema

__all__ = ["Binding", "Op"]

Op = Tuple[Any, ...]


class Binding:
    def __init__(self, nodes: List[Tuple[str, Dict[str, Any]]], schema: Schema) -> None:
        self.nodes = nodes
        self.schema = schema
        self.write: List[Optional[Op]] = [None] * len(nodes)
        self.bound: Dict[int, int] = {}  # plan node -> schema node
        self.branch_plan: Dict[int, List[Optional[int]]] = {}  # union node -> plan per branch
        self.pairs: set[Tuple[int, int]] = set()  # (plan node, schema node) pairs bound
        # Write ops of a shared node met again inside itself, to compare once its own is known.
        self.again: Dict[int, List[Tuple[Op, str]]] = {}

    def fail(self, where: str, message: str) -> TypeError:
        return TypeError(f"the Avro schema does not match the type at {where}: {message}")

    def bind(self, pid: int, sid: int, where: str) -> None:
        if (pid, sid) in self.pairs:
            return
        self.pairs.add((pid, sid))
        if pid in self.bound:
            if self.bound[pid] != sid and not self._same(self.bound[pid], sid):
                raise self.fail(where, "one class is bound to two different schema types")
            if self.nodes[pid][0] in RECORD_KINDS:
                return
            # A node a recursive alias shares, met again at a schema node written out anew
            # (unions and arrays have no names to refer to): the schema nodes inside this one
            # need their own binding too, and the node has one write op for both.
            op = self._op(pid, sid, where)
            if self.write[pid] is None:  # met inside itself: its own op is not known yet
                self.again.setdefault(pid, []).append((op, where))
            elif op != self.write[pid]:
                raise self.fail(where, "one type is written as two differently ordered unions")
            return
        self.bound[pid] = sid
        self.write[pid] = self._op(pid, sid, where)
        for op, at in self.again.pop(pid, []):
            if op != self.write[pid]:
                raise self.fail(at, "one type is written as two differently ordered unions")

    def _same(self, a: int, b: int) -> bool:
        na, nb = self.schema.nodes[a], self.schema.nodes[b]
        return na["type"] == nb["type"] and na.get("name") == nb.get("name")

    def _op(self, pid: int, sid: int, where: str) -> Op:
        kind, data = self.nodes[pid]
        node = self.schema.nodes[sid]
        st, logical = node["type"], node.get("logical")
        desc = st if not logical else f"{st} ({logical})"

        def wrong() -> TypeError:
            return self.fail(where, f"{kind} cannot be written as Avro {desc}")

        if kind == "extension":  # the encode function's result is written by the wire node
            self.bind(data["wire"], sid, where)
            return ("extension",)
        if kind in ("union", "tagged_union"):
            if st != "union":
                raise wrong()
            return self._union(pid, sid, where)
        if st == "union":
            raise self.fail(where, f"the schema has a union where the type has {kind}")
        chosen = data.get("avro")
        if chosen is not None:
            # The representation the annotation asks for must be the schema's.
            wanted = chosen["type"]
            matched = {
                "int": st == "int",
                "long": st == "long",
                "float": st == "float",
                "double": st == "double",
                "string": st == "string",
                "bytes": st == "bytes",
                "fixed": st == "fixed" and chosen["size"] in (None, node.get("size")),
            }.get(wanted, logical == wanted)
            if not matched:
                raise self.fail(
                    where, f"the type is annotated Avro({wanted!r}), the schema has {desc}"
                )
        if kind in ("none", "unset"):
            if st != "null":
                raise wrong()
            return ("null",)
        if kind == "bool":
            if st != "boolean":
                raise wrong()
            return ("boolean",)
        if kind == "int":
            if st in ("long", "int") and logical not in _INT_LOGICAL:
                return (st,)
            raise wrong()
        if kind == "float":
            if st in ("double", "float") and logical is None:
                return (st,)
            raise wrong()
        if kind == "str":
            if st == "string" and logical != "uuid":
                return ("string",)
            raise wrong()
        if kind == "bytes":
            if st == "bytes" and logical != "decimal":
                return ("bytes",)
            if st == "fixed" and logical not in ("decimal", "uuid", "duration"):
                return ("fixed", node["size"])
            raise wrong()
        if kind == "decimal":
            if logical == "decimal" and st in ("bytes", "fixed"):
                scale = node.get("scale") or 0
                precision = node.get("precision")
                if not isinstance(scale, int) or not isinstance(precision, int) or precision < 1:
                    raise self.fail(where, "the decimal logical type needs precision and scale")
                return ("decimal", scale, node["size"] if st == "fixed" else -1, precision)
            if st == "string" and logical is None:
                return ("decimal_string",)
            raise wrong()
        if kind == "datetime":
            units = {
                "timestamp-micros": (1, False),
                "timestamp-millis": (1000, False),
                "local-timestamp-micros": (1, True),
                "local-timestamp-millis": (1000, True),
            }
            if st == "long" and logical in units:
                unit, local = units[logical]
                if local and data["tz"] is not False:
                    raise self.fail(where, f"{logical} holds naive datetimes: use Meta(tz=False)")
                if not local and data["tz"] is False:
                    raise self.fail(where, f"{logical} holds UTC datetimes, the type is naive")
                return ("timestamp", unit, local)
            raise wrong()
        if kind == "date":
            if st == "int" and logical == "date":
                return ("date",)
            raise wrong()
        if kind == "time":
            if data["tz"] is True:
                raise self.fail(where, "an aware time has no Avro form")
            if st == "long" and logical == "time-micros":
                return ("time", 1)
            if st == "int" and logical == "time-millis":
                return ("time", 1000)
            raise wrong()
        if kind == "uuid":
            if st == "string" and logical == "uuid":
                return ("uuid_string",)
            if st == "fixed" and logical == "uuid" and node["size"] == 16:
                return ("uuid_fixed",)
            raise wrong()
        if kind == "literal":
            kinds = {type(v) for v in data["values"]}
            base = {
                frozenset([str]): "string",
                frozenset([int]): "long",
                frozenset([bool]): "boolean",
            }.get(frozenset(kinds))
            if base == "string" and st == "string" and logical is None:
                return ("string",)
            if base == "long" and st in ("long", "int") and logical is None:
                return (st,)
            if base == "boolean" and st == "boolean":
                return ("boolean",)
            raise wrong()
        if kind == "enum" and data["flag"]:
            if st in ("long", "int") and logical not in _INT_LOGICAL:
                return (st,)
            raise wrong()
        if kind == "enum":
            if st != "enum":
                raise wrong()
            symbols = node["symbols"]
            indices = []
            for name in data["names"]:
                if name not in symbols:
                    raise self.fail(where, f"enum member {name!r} is not a symbol of the schema")
                indices.append(symbols.index(name))
            return ("enum", indices)
        if kind in ("list", "set", "frozenset", "var_tuple"):
            if st != "array":
                raise wrong()
            self.bind(data["item"], node["items"], where + "[]")
            return ("array",)
        if kind == "dict":
            if st != "map" or self.nodes[data["key"]][0] != "str":
                raise wrong()
            self.bind(data["value"], node["values"], where + "[]")
            return ("map",)
        if kind in ("dataclass", "typeddict", "namedtuple"):
            if st != "record":
                raise wrong()
            by_wire = {f["wire_name"]: i for i, f in enumerate(data["fields"]) if f["wire"]}
            # Per schema field: the class field written there, or -1 for a schema field the
            # class lacks, whose default is written (as confluent's and fastavro's writers do).
            order: List[int] = []
            for sfield in node["fields"]:
                index = by_wire.get(sfield["name"])
                if index is None:
                    for alias in sfield["aliases"]:
                        index = by_wire.get(alias)
                        if index is not None:
                            break
                if index is None:
                    if not sfield["has_default"]:
                        raise self.fail(
                            where,
                            f"schema field `{sfield['name']}` has no field in {data['name']} "
                            "and no default to write",
                        )
                    order.append(-1)
                    continue
                field = data["fields"][index]
                self.bind(field["type"], sfield["type"], f"{where}.{field['wire_name']}")
                order.append(index)
            for name, index in by_wire.items():
                field = data["fields"][index]
                if index not in order and field["required"]:
                    raise self.fail(where, f"field `{name}` is not in the schema record")
                if (
                    index not in order
                    and field["default"] is NODEFAULT
                    and (field["default_factory"] is None)
                ):
                    raise self.fail(where, f"field `{name}` is not in the schema record")
            return ("record", order, sid)
        raise wrong()

    def _union(self, pid: int, sid: int, where: str) -> Op:
        kind, data = self.nodes[pid]
        branches = self.schema.nodes[sid]["branches"]
        branch_plan: List[Optional[int]] = [None] * len(branches)
        self.branch_plan[sid] = branch_plan
        variants = [pid] if kind == "tagged_union" else data["variants"]
        members = [m for v in variants for m in self._members(v)]
        placed: Dict[int, int] = {}

        def take(member: int, i: int) -> None:
            branch_plan[i] = member
            placed[member] = i
            self.bind(member, branches[i], where)

        # Records go to the branch that names them: by full name (or alias) first, then by
        # short name, so that branches in any order, and several records, find their class.
        for strict in (True, False):
            for member in members:
                if member in placed or self.nodes[member][0] not in RECORD_KINDS:
                    continue
                for i, branch in enumerate(branches):
                    if branch_plan[i] is None and self._names_record(member, branch, strict):
                        take(member, i)
                        break
        for member in members:
            if member in placed:
                continue
            for i, branch in enumerate(branches):
                if branch_plan[i] is None and self._fits(member, branch):
                    take(member, i)
                    break
        for member in members:
            if member in placed:
                continue
            mkind = self.nodes[member][0]
            # A record or enum whose name matches no branch: the union's only free branch of
            # that kind (class names rarely equal a foreign schema's names).
            wanted = "record" if mkind in RECORD_KINDS else mkind
            free = [
                i
                for i, branch in enumerate(branches)
                if branch_plan[i] is None and self.schema.nodes[branch]["type"] == wanted
            ]
            if wanted in ("record", "enum") and len(free) == 1:
                take(member, free[0])
                continue
            raise self.fail(where, f"no branch of the schema union takes {mkind}")

        if kind == "tagged_union":
            return ("tagged", [placed[record] for _, record in data["tags"]])
        indices = []
        for variant in variants:
            if self.nodes[variant][0] == "tagged_union":
                self.write[variant] = (
                    "tagged",
                    [placed[r] for _, r in self.nodes[variant][1]["tags"]],
                )
                self.bound[variant] = sid
                indices.append(-1)
            else:
                indices.append(placed[variant])
        return ("union", indices)

    def _members(self, pid: int) -> List[int]:
        """The plan nodes that take a branch each: a tagged union's records, or the node."""
        kind, data = self.nodes[pid]
        if kind == "tagged_union":
            out: List[int] = []
            for _, record in data["tags"]:
                if record not in out:
                    out.append(record)
            return out
        return [pid]

    def _names_record(self, pid: int, sid: int, strict: bool) -> bool:
        """Whether schema node ``sid`` is a record named (or aliased) after plan record ``pid``:
        by full name when ``strict``, else by the last part of the name."""
        node = self.schema.nodes[sid]
        if node["type"] != "record":
            return False
        data = self.nodes[pid][1]
        name, namespace, declared = avro_name(
            data["cls"], data["module"], data["name"], data.get("args", ())
        )
        names = [node["name"], *node["aliases"]]
        ours = [fullname(name, namespace)]
        ours += [fullname(a, namespace) for a in declared.get("aliases", ())]
        if strict:
            return any(n in names for n in ours)
        return any(n.rpartition(".")[2] in [m.rpartition(".")[2] for m in names] for n in ours)

    def _fits(self, pid: int, sid: int) -> bool:
        """A shallow check that plan node ``pid`` may take schema branch ``sid`` (records are
        placed by name, see ``_union``)."""
        kind, data = self.nodes[pid]
        node = self.schema.nodes[sid]
        st = node["type"]
        if kind in RECORD_KINDS:
            return False
        if kind == "enum" and not data["flag"]:
            return st == "enum" and all(n in node["symbols"] for n in data["names"])
        saved = (dict(self.bound), list(self.write), dict(self.branch_plan), set(self.pairs))
        again = {shared: list(ops) for shared, ops in self.again.items()}
        try:
            self._op(pid, sid, "")
            return True
        except TypeError:
            return False
        finally:
            self.bound, self.write, self.branch_plan, self.pairs = saved
            self.again = again


_INT_LOGICAL = (
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "local-timestamp-millis",
    "local-timestamp-micros",
)
