"""Hand-written marshmallow schemas and serpy serializers for the three models.

This is how those libraries are used (the seed comparisons do the same): one schema class per
model class, declared field by field; marshmallow builds the dataclass back in ``@post_load``,
serpy only dumps. The hierarchy's ten levels share one field pattern, so their schemas are made
by one small function each rather than written out ten times; the result is the same classes.
"""

from __future__ import annotations

from typing import Any, Optional

import marshmallow as ma
import serpy
from marshmallow import fields, post_load

from ..models import (
    HIERARCHY_CLASSES,
    Branch,
    Leaf,
    Priority,
    Record,
    Status,
    Tag,
)

# ---- marshmallow ----------------------------------------------------------------------------


class TagSchema(ma.Schema):
    name = fields.Str(required=True)
    weight = fields.Float(required=True)
    pinned = fields.Bool(required=True)

    @post_load
    def make(self, data: dict[str, Any], **_: Any) -> Tag:
        return Tag(**data)


class RecordSchema(ma.Schema):
    id = fields.Int(required=True)
    username = fields.Str(required=True)
    email = fields.Str(required=True)
    score = fields.Float(required=True)
    active = fields.Bool(required=True)
    status = fields.Enum(Status, by_value=True, required=True)
    created_at = fields.AwareDateTime(format="iso", required=True)
    last_login = fields.AwareDateTime(format="iso", allow_none=True, required=True)
    nickname = fields.Str(allow_none=True, required=True)
    age = fields.Int(allow_none=True, required=True)
    tags = fields.List(fields.Nested(TagSchema), required=True)
    roles = fields.List(fields.Str(), required=True)

    @post_load
    def make(self, data: dict[str, Any], **_: Any) -> Record:
        return Record(**data)


def _level_schema(cls: type, child: Optional[type[ma.Schema]]) -> type[ma.Schema]:
    """A hierarchy level: its fields in declaration order, the last one nesting the next level."""
    declared: dict[str, Any] = {}
    for name, tp in cls.__annotations__.items():
        tp = str(tp)
        if tp == "str":
            declared[name] = fields.Str(required=True)
        elif tp == "Optional[str]":
            declared[name] = fields.Str(allow_none=True, required=True)
        elif tp == "int":
            declared[name] = fields.Int(required=True)
        elif tp == "float":
            declared[name] = fields.Float(required=True)
        elif tp == "bool":
            declared[name] = fields.Bool(required=True)
        elif tp == "Decimal":
            declared[name] = fields.Decimal(as_string=True, required=True)
        elif tp == "date":
            declared[name] = fields.Date(required=True)
        elif tp == "Optional[date]":
            declared[name] = fields.Date(allow_none=True, required=True)
        elif tp == "datetime":
            declared[name] = fields.AwareDateTime(format="iso", required=True)
        elif tp == "Status":
            declared[name] = fields.Enum(Status, by_value=True, required=True)
        elif tp == "Priority":
            declared[name] = fields.Enum(Priority, by_value=True, required=True)
        elif child is not None:
            declared[name] = fields.Nested(child, required=True)
        else:
            raise TypeError(f"no marshmallow field for {cls.__name__}.{name}: {tp}")

    def make(self: Any, data: dict[str, Any], **_: Any) -> Any:
        return cls(**data)

    declared["make"] = post_load(make)
    return type(f"{cls.__name__}Schema", (ma.Schema,), declared)


def _hierarchy_schema() -> type[ma.Schema]:
    child: Optional[type[ma.Schema]] = None
    for cls in reversed(HIERARCHY_CLASSES):
        child = _level_schema(cls, child)
    assert child is not None
    return child


CompanySchema = _hierarchy_schema()


class NodeField(fields.Field):
    """The tree's tagged union: the ``kind`` tag picks the schema."""

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> Any:
        return _NODE_SCHEMAS[value.kind].dump(value)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Any:
        try:
            schema = _NODE_SCHEMAS[value["kind"]]
        except (KeyError, TypeError):
            raise ma.ValidationError("expected a leaf or branch with its kind")
        return schema.load(value)


class LeafSchema(ma.Schema):
    name = fields.Str(required=True)
    size = fields.Int(required=True)
    modified = fields.AwareDateTime(format="iso", required=True)
    checksum = fields.Str(allow_none=True, required=True)
    kind = fields.Constant("leaf")

    @post_load
    def make(self, data: dict[str, Any], **_: Any) -> Leaf:
        data.pop("kind", None)
        return Leaf(**data)


class BranchSchema(ma.Schema):
    name = fields.Str(required=True)
    owner = fields.Str(required=True)
    modified = fields.AwareDateTime(format="iso", required=True)
    children = fields.List(NodeField(), required=True)
    kind = fields.Constant("branch")

    @post_load
    def make(self, data: dict[str, Any], **_: Any) -> Branch:
        data.pop("kind", None)
        return Branch(**data)


_NODE_SCHEMAS: dict[str, ma.Schema] = {"leaf": LeafSchema(), "branch": BranchSchema()}

MARSHMALLOW_SCHEMAS: dict[str, type[ma.Schema]] = {
    "record": RecordSchema,
    "hierarchy": CompanySchema,
    "tree": BranchSchema,
}

# ---- serpy (dump only) ----------------------------------------------------------------------


def _iso(value: Any) -> Any:
    return None if value is None else value.isoformat()


class TagSerializer(serpy.Serializer):
    name = serpy.StrField()
    weight = serpy.FloatField()
    pinned = serpy.BoolField()


class RecordSerializer(serpy.Serializer):
    id = serpy.IntField()
    username = serpy.StrField()
    email = serpy.StrField()
    score = serpy.FloatField()
    active = serpy.BoolField()
    status = serpy.MethodField()
    created_at = serpy.MethodField()
    last_login = serpy.MethodField()
    nickname = serpy.Field()
    age = serpy.Field()
    tags = TagSerializer(many=True)
    roles = serpy.Field()

    def get_status(self, obj: Record) -> str:
        return obj.status.value

    def get_created_at(self, obj: Record) -> str:
        return obj.created_at.isoformat()

    def get_last_login(self, obj: Record) -> Any:
        return _iso(obj.last_login)


def _level_serializer(cls: type, child: Optional[type[serpy.Serializer]]) -> type:
    declared: dict[str, Any] = {}
    for name, tp in cls.__annotations__.items():
        tp = str(tp)
        if tp in ("str", "Optional[str]", "int", "float", "bool"):
            declared[name] = serpy.Field()
        elif tp in ("Decimal",):
            declared[name] = serpy.StrField()
        elif tp in ("date", "datetime", "Optional[date]"):
            declared[name] = serpy.MethodField(f"iso_{name}")
            declared[f"iso_{name}"] = lambda self, obj, _n=name: _iso(getattr(obj, _n))
        elif tp in ("Status", "Priority"):
            declared[name] = serpy.MethodField(f"value_{name}")
            declared[f"value_{name}"] = lambda self, obj, _n=name: getattr(obj, _n).value
        elif child is not None:
            declared[name] = child()
        else:
            raise TypeError(f"no serpy field for {cls.__name__}.{name}: {tp}")
    return type(f"{cls.__name__}Serializer", (serpy.Serializer,), declared)


def _hierarchy_serializer() -> type:
    child: Optional[type] = None
    for cls in reversed(HIERARCHY_CLASSES):
        child = _level_serializer(cls, child)
    assert child is not None
    return child


class NodeSerializerField(serpy.Field):
    def to_value(self, value: Any) -> Any:
        return [
            (LeafSerializer(child).data if child.kind == "leaf" else BranchSerializer(child).data)
            for child in value
        ]


class LeafSerializer(serpy.Serializer):
    name = serpy.StrField()
    size = serpy.IntField()
    modified = serpy.MethodField()
    checksum = serpy.Field()
    kind = serpy.StrField()

    def get_modified(self, obj: Leaf) -> str:
        return obj.modified.isoformat()


class BranchSerializer(serpy.Serializer):
    name = serpy.StrField()
    owner = serpy.StrField()
    modified = serpy.MethodField()
    children = NodeSerializerField()
    kind = serpy.StrField()

    def get_modified(self, obj: Branch) -> str:
        return obj.modified.isoformat()


SERPY_SERIALIZERS: dict[str, type] = {
    "record": RecordSerializer,
    "hierarchy": _hierarchy_serializer(),
    "tree": BranchSerializer,
}
