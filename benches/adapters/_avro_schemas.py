"""Hand-written Avro schemas for the benchmark models (shared by fastavro and apache avro).

Avro libraries need a schema; their users write it by hand, once, as a JSON-compatible dict.
Both Avro adapters use these same dicts, so their payloads are byte-compatible. Mapping:

* ``datetime`` -> ``long`` with ``timestamp-micros``; ``date`` -> ``int`` with ``date``;
* ``Decimal`` -> ``bytes`` with ``decimal`` (precision 20, scale 2; the generator uses scale 2);
* ``Enum`` -> Avro ``enum`` of the member *names* (Avro symbols must be identifiers);
* ``Optional[T]`` -> ``["null", T]`` with a ``null`` default;
* the tree's ``Leaf | Branch`` -> a union of two named records; ``kind`` is a string field with
  a default, as the dataclass has (the file system's ``File | Directory`` and ``type`` alike);
* ``UUID`` -> ``string`` with ``uuid``.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

NAMESPACE = "polycodec.benches"

_STR = "string"
_TS = {"type": "long", "logicalType": "timestamp-micros"}
_DATE = {"type": "int", "logicalType": "date"}
_DEC = {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}

_STATUS = {
    "type": "enum",
    "name": "Status",
    "symbols": ["ACTIVE", "SUSPENDED", "DELETED", "PENDING"],
}
_PRIORITY = {"type": "enum", "name": "Priority", "symbols": ["LOW", "NORMAL", "HIGH", "CRITICAL"]}


def _f(name: str, type_: Any) -> Schema:
    return {"name": name, "type": type_}


def _opt(name: str, type_: Any) -> Schema:
    return {"name": name, "type": ["null", type_], "default": None}


RECORD_SCHEMA: Schema = {
    "type": "record",
    "name": "Record",
    "namespace": NAMESPACE,
    "fields": [
        _f("id", "long"),
        _f("username", _STR),
        _f("email", _STR),
        _f("score", "double"),
        _f("active", "boolean"),
        _f("status", _STATUS),
        _f("created_at", _TS),
        _opt("last_login", _TS),
        _opt("nickname", _STR),
        _opt("age", "long"),
        _f(
            "tags",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Tag",
                    "fields": [_f("name", _STR), _f("weight", "double"), _f("pinned", "boolean")],
                },
            },
        ),
        _f("roles", {"type": "array", "items": _STR}),
    ],
}


def _level(name: str, fields: list[Schema]) -> Schema:
    return {"type": "record", "name": name, "fields": fields}


# Innermost first; each level embeds the next one down. The enums are *defined* at their first
# use in depth-first field order (Company.status, Division.priority) and referenced by name below.
_CHECK = _level(
    "Check",
    [
        _f("name", _STR),
        _f("passed", "boolean"),
        _f("measured", _DEC),
        _f("checked_on", _DATE),
        _f("checked_at", _TS),
        _f("priority", "Priority"),
        _opt("comment", _STR),
    ],
)
_STEP = _level(
    "Step",
    [
        _f("name", _STR),
        _f("order", "long"),
        _f("cost", _DEC),
        _f("due", _DATE),
        _f("started_at", _TS),
        _f("status", "Status"),
        _opt("note", _STR),
        _f("check", _CHECK),
    ],
)
_SUBTASK = _level(
    "Subtask",
    [
        _f("name", _STR),
        _f("estimate_hours", "double"),
        _f("budget", _DEC),
        _f("due", _DATE),
        _f("updated_at", _TS),
        _f("priority", "Priority"),
        _opt("assignee", _STR),
        _f("step", _STEP),
    ],
)
_TASK = _level(
    "Task",
    [
        _f("title", _STR),
        _f("points", "long"),
        _f("budget", _DEC),
        _f("due", _DATE),
        _f("created_at", _TS),
        _f("status", "Status"),
        _opt("reviewer", _STR),
        _f("subtask", _SUBTASK),
    ],
)
_MILESTONE = _level(
    "Milestone",
    [
        _f("title", _STR),
        _f("sequence", "long"),
        _f("budget", _DEC),
        _f("target", _DATE),
        _f("updated_at", _TS),
        _f("priority", "Priority"),
        _opt("completed_on", _DATE),
        _f("task", _TASK),
    ],
)
_PROJECT = _level(
    "Project",
    [
        _f("code", _STR),
        _f("name", _STR),
        _f("budget", _DEC),
        _f("start", _DATE),
        _f("created_at", _TS),
        _f("status", "Status"),
        _opt("sponsor", _STR),
        _f("milestone", _MILESTONE),
    ],
)
_TEAM = _level(
    "Team",
    [
        _f("name", _STR),
        _f("size", "long"),
        _f("payroll", _DEC),
        _f("formed", _DATE),
        _f("updated_at", _TS),
        _f("priority", "Priority"),
        _opt("lead", _STR),
        _f("project", _PROJECT),
    ],
)
_DEPARTMENT = _level(
    "Department",
    [
        _f("name", _STR),
        _f("cost_center", "long"),
        _f("budget", _DEC),
        _f("founded", _DATE),
        _f("audited_at", _TS),
        _f("status", "Status"),
        _opt("head", _STR),
        _f("team", _TEAM),
    ],
)
_DIVISION = _level(
    "Division",
    [
        _f("name", _STR),
        _f("region", _STR),
        _f("revenue", _DEC),
        _f("opened", _DATE),
        _f("reported_at", _TS),
        _f("priority", _PRIORITY),
        _opt("vice_president", _STR),
        _f("department", _DEPARTMENT),
    ],
)
HIERARCHY_SCHEMA: Schema = {
    "type": "record",
    "name": "Company",
    "namespace": NAMESPACE,
    "fields": [
        _f("name", _STR),
        _f("registration", "long"),
        _f("capital", _DEC),
        _f("incorporated", _DATE),
        _f("updated_at", _TS),
        _f("status", _STATUS),
        _opt("ticker", _STR),
        _f("division", _DIVISION),
    ],
}

_LEAF = {
    "type": "record",
    "name": "Leaf",
    "fields": [
        _f("name", _STR),
        _f("size", "long"),
        _f("modified", _TS),
        _opt("checksum", _STR),
        {"name": "kind", "type": _STR, "default": "leaf"},
    ],
}
TREE_SCHEMA: Schema = {
    "type": "record",
    "name": "Branch",
    "namespace": NAMESPACE,
    "fields": [
        _f("name", _STR),
        _f("owner", _STR),
        _f("modified", _TS),
        {"name": "children", "type": {"type": "array", "items": [_LEAF, "Branch"]}, "default": []},
        {"name": "kind", "type": _STR, "default": "branch"},
    ],
}

_UUID = {"type": "string", "logicalType": "uuid"}
_FILE = {
    "type": "record",
    "name": "File",
    "fields": [
        _f("name", _STR),
        _f("created_by", _UUID),
        _f("created_at", _TS),
        _f("updated_at", _TS),
        _f("nbytes", "long"),
        {"name": "type", "type": _STR, "default": "file"},
    ],
}
FILESYSTEM_SCHEMA: Schema = {
    "type": "record",
    "name": "Directory",
    "namespace": NAMESPACE,
    "fields": [
        _f("name", _STR),
        _f("created_by", _UUID),
        _f("created_at", _TS),
        _f("updated_at", _TS),
        {"name": "contents", "type": {"type": "array", "items": [_FILE, "Directory"]}},
        {"name": "type", "type": _STR, "default": "directory"},
    ],
}

SCHEMAS: dict[str, Schema] = {
    "record": RECORD_SCHEMA,
    "hierarchy": HIERARCHY_SCHEMA,
    "tree": TREE_SCHEMA,
    "filesystem": FILESYSTEM_SCHEMA,
}
