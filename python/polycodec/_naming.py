"""Names several modules give to the same things, with no import of the package's own: the wire
names of fields under the ``rename`` option (the plan compiler uses them, ``polycodec.options``
checks the option with them), and the names of records and enums in derived schemas (the
class's ``__qualname__`` in its module's namespace, or what its ``__avro__`` declares), shared by
the Avro deriver, the Avro binding and the JSON Schema generator."""

from __future__ import annotations

import collections.abc
import re
import types
import typing
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

__all__ = [
    "NAME_RE",
    "Rename",
    "arg_label",
    "avro_name",
    "declared_settings",
    "fullname",
    "renamer",
]

#: The ``rename`` option: a style name, a mapping of attribute names to wire names, a callable
#: (None keeps the name), or None.
Rename = Union[None, str, Mapping[str, str], Callable[[str], Optional[str]]]

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def fullname(name: str, namespace: Optional[str]) -> str:
    if "." in name:
        return name
    return f"{namespace}.{name}" if namespace else name


_AVRO_KEYS = ("name", "namespace", "doc", "aliases", "default")


def _clean(part: str) -> str:
    part = re.sub(r"[^A-Za-z0-9_]", "_", part)
    if not part or part[0].isdigit():
        part = "_" + part
    return part


def declared_settings(cls: Any) -> Dict[str, Any]:
    """The checked ``__avro__`` settings a class declares itself (not inherited: a subclass is
    another Avro type and needs its own name)."""
    label = getattr(cls, "__qualname__", repr(cls))
    try:
        raw = vars(cls).get("__avro__")
    except TypeError:
        raw = None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise TypeError(f"{label}.__avro__ must be a dict with keys {_AVRO_KEYS}, not {raw!r}")
    unknown = [key for key in raw if key not in _AVRO_KEYS]
    if unknown:
        raise TypeError(f"{label}.__avro__ has unknown keys {unknown}; expected {_AVRO_KEYS}")
    name = raw.get("name")
    if "name" in raw and not (isinstance(name, str) and NAME_RE.match(name)):
        raise TypeError(
            f"{label}.__avro__: name {name!r} is not a valid Avro name ([A-Za-z_][A-Za-z0-9_]*)"
        )
    namespace = raw.get("namespace")
    if namespace is not None and not (
        isinstance(namespace, str)
        and (namespace == "" or all(NAME_RE.match(p) for p in namespace.split(".")))
    ):
        raise TypeError(
            f"{label}.__avro__: namespace {namespace!r} is not a valid Avro namespace (names "
            "separated by dots, or '' / None for none)"
        )
    if "default" in raw and not isinstance(raw["default"], str):
        raise TypeError(
            f"{label}.__avro__: default must be a member name (a str), not {raw['default']!r}"
        )
    if "doc" in raw and not isinstance(raw["doc"], str):
        raise TypeError(f"{label}.__avro__: doc must be a str, not {raw['doc']!r}")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, (list, tuple)) or not all(
        isinstance(a, str) and a and all(NAME_RE.match(p) for p in a.split(".")) for a in aliases
    ):
        raise TypeError(
            f"{label}.__avro__: aliases must be a list of valid Avro names, not {aliases!r}"
        )
    return dict(raw)


def arg_label(tp: Any) -> str:
    """A name part for a type argument: ``int``, ``list_int``, ``str_or_null``."""
    if tp is None or tp is type(None):
        return "null"
    if tp is typing.Any:
        return "Any"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return arg_label(args[0])
    if origin is typing.Literal:
        return "Literal_" + "_".join(str(v) for v in args)
    if origin is typing.Union or (
        origin is not None and origin is getattr(types, "UnionType", None)
    ):
        return "_or_".join(arg_label(a) for a in args)
    if origin is not None:
        return "_".join([arg_label(origin), *(arg_label(a) for a in args)])
    if isinstance(tp, typing.TypeVar):
        return tp.__name__
    declared = declared_settings(tp) if isinstance(tp, type) else {}
    return str(declared.get("name") or getattr(tp, "__name__", None) or tp)


def avro_name(
    cls: Any, module: str, qualname: str, args: Tuple[Any, ...] = ()
) -> Tuple[str, Optional[str], Dict[str, Any]]:
    """A valid Avro (name, namespace) for a class, and its declared ``__avro__`` settings.

    Unless ``__avro__`` says otherwise, the module is the namespace (none for ``__main__``, so a
    script's classes keep their names when moved into a module and read with short names), the
    class's ``__qualname__`` gives the name, and a generic class's type arguments are appended
    to it (``Box[int]`` is ``Box_int``)."""
    declared = declared_settings(cls)
    parts = [_clean(p) for p in qualname.split(".") if p]
    name = declared.get("name") or (parts[-1] if parts else "_")
    if args:
        name = _clean("_".join([name, *(arg_label(a) for a in args)]))
    if "namespace" in declared:
        namespace = declared["namespace"] or None
    else:
        ns_parts = [] if module == "__main__" else [_clean(p) for p in module.split(".") if p]
        namespace = ".".join(ns_parts + parts[:-1]) or None
    return name, namespace, declared


# The named styles write msgspec's names for the same attribute, so that a port from msgspec keeps
# its wire format: camel and pascal title-case the parts between underscores (``str.title``, so
# ``a_1b`` is ``a1B`` and ``already_camelCase`` is ``alreadyCamelcase``), keep one underscore per
# leading empty part and drop the trailing ones; kebab strips the edge underscores and turns each
# remaining one into a dash, case untouched.
def _camelize(name: str, cap_first: bool) -> str:
    parts = name.split("_")
    if len(parts) == 1 and not cap_first:
        return name
    out = []
    first = True
    for part in parts:
        if first and not part:
            out.append("_")
            continue
        out.append(part.title() if cap_first or not first else part)
        first = False
    return "".join(out)


_STYLES: Dict[str, Callable[[str], str]] = {
    "camel": lambda name: _camelize(name, cap_first=False),
    "pascal": lambda name: _camelize(name, cap_first=True),
    "kebab": lambda name: name.strip("_").replace("_", "-"),
    "lower": str.lower,
    "upper": str.upper,
    "screaming_snake": str.upper,
}


def renamer(rename: Rename) -> Callable[[str], str]:
    """Turn the ``rename`` option into a function attr name -> wire name, checking it early."""
    if rename is None:
        return lambda name: name
    if isinstance(rename, str):
        try:
            return _STYLES[rename]
        except KeyError:
            styles = ", ".join(repr(s) for s in _STYLES)
            raise ValueError(f"unknown rename style {rename!r}; expected one of {styles}") from None
    if isinstance(rename, collections.abc.Mapping):
        table = rename
        return lambda name: table.get(name, name)
    if callable(rename):
        func = rename

        def call(name: str) -> str:
            wire = func(name)
            return name if wire is None else wire

        return call
    raise TypeError(f"rename must be None, a style name, a dict or a callable, not {rename!r}")
