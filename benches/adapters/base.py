"""The adapter contract: how a library is plugged into the harness.

An adapter turns (format, model) into four plain callables, prepared ahead of time the way the
library's users prepare them (encoders/decoders/schemas built once, outside the timed loop). The
harness only ever calls those four callables, so every library is timed through the same, thin
call path. Anything an adapter cannot do is reported as :class:`Unsupported` with a reason, which
ends up in the report instead of an error.
"""

from __future__ import annotations

import importlib.metadata
import platform
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..models import ModelSpec

#: The formats the harness knows, in report order, with their display names.
FORMATS: dict[str, str] = {
    "json": "JSON",
    "msgpack": "MessagePack",
    "avro": "Avro",
    "pickle": "pickle",
    "builtins": "builtins",
}

#: The adapter each format's "vs baseline" column is relative to (the reference implementation).
BASELINES: dict[str, str] = {
    "json": "json",
    "msgpack": "msgpack",
    "avro": "avro",
    "pickle": "pickle",
    "builtins": "hand-written",
}

#: Formats whose payloads are Python objects (the JSON form as dicts and lists), not bytes.
OBJECT_FORMATS: frozenset[str] = frozenset({"builtins"})

#: The adapter under test. Adapters named ``polycodec-<idiom>`` (e.g. ``polycodec-slots``) are
#: polycodec too, on other classes; every other adapter is a "peer".
SUBJECT = "polycodec"


def is_subject(name: str) -> bool:
    """True for polycodec's rows (``polycodec`` and ``polycodec-<idiom>``), False for peers."""
    return name == SUBJECT or name.startswith(SUBJECT + "-")


Encoded = Any  # bytes, or str for libraries whose users get str (stdlib json, mashumaro JSON)


class Unsupported(Exception):
    """The library cannot handle this format or model; ``str(exc)`` is the reason shown."""


@dataclass
class Ops:
    """The prepared callables for one (adapter, format, model).

    ``encode_one(obj)``/``decode_one(payload)`` work on a single object; ``encode_many(objs)``/
    ``decode_many(payload)`` on a list, as one call (a JSON/MessagePack array, an Avro container
    file, a pickled list...).
    """

    encode_one: Callable[[Any], Encoded]
    decode_one: Callable[[Encoded], Any]
    encode_many: Callable[[list[Any]], Encoded]
    decode_many: Callable[[Encoded], list[Any]]
    #: Optional extra correctness check run on a small batch after the round trip (raise to fail).
    extra_check: Optional[Callable[[list[Any]], None]] = None
    #: For adapters on their own classes (msgspec Structs, pydantic BaseModels, slots
    #: dataclasses): turns one generated plain-dataclass object into the adapter's class (run once,
    #: before timing) ...
    to_idiom: Optional[Callable[[Any], Any]] = None
    #: ... and one of its objects back into the plain dataclasses, so the round-trip check can
    #: prove the idiom's objects carry exactly the generated data.
    from_idiom: Optional[Callable[[Any], Any]] = None


def on_idiom(ops: Ops, mapping: dict[type, type]) -> Ops:
    """``ops`` working on the classes ``mapping`` gives for each plain model dataclass."""
    from ..idioms import converter

    ops.to_idiom = converter(mapping)
    ops.from_idiom = converter({dst: src for src, dst in mapping.items()})
    return ops


@dataclass(frozen=True)
class Adapter:
    """A library as the harness sees it.

    ``build(fmt, model)`` returns :class:`Ops` or raises :class:`Unsupported`. ``how`` says, per
    format, what the adapter does (shown in the report so readers can judge fairness).
    """

    name: str
    label: str
    distribution: Optional[str]
    formats: tuple[str, ...]
    build: Callable[[str, ModelSpec], Ops]
    how: dict[str, str] = field(default_factory=dict)
    #: The kinds of model it takes (``ModelSpec.kind``): ``"typed"`` (model classes) and/or
    #: ``"untyped"`` (plain JSON values); the harness never offers it the others.
    kinds: tuple[str, ...] = ("typed",)
    #: Whether it can write a model whose wire form needs per-class options
    #: (``ModelSpec.class_options``: tags, renames, omit_defaults, array_like on the classes).
    class_options: bool = False

    def takes(self, fmt: str, model: ModelSpec) -> bool:
        """Whether this adapter is run on ``model`` in ``fmt`` at all."""
        return (
            fmt in self.formats
            and model.kind in self.kinds
            and (model.formats is None or fmt in model.formats)
        )

    @property
    def version(self) -> str:
        """The installed version (the Python version for stdlib modules)."""
        if self.distribution is None:
            return platform.python_version()
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return "unknown"


#: Why an adapter without ``class_options`` has no cells on a model that needs them.
NO_CLASS_OPTIONS = (
    "the model's wire form needs per-class options (class tags, camel names, omit_defaults, "
    "array_like), which its classes do not carry; no twin classes or conversion written for it"
)


def version_is_prerelease(version: str) -> bool:
    """True for PEP 440 pre/dev releases (``1.0a1``, ``2.0rc1``, ``0.1.dev3``...)."""
    try:
        from packaging.version import InvalidVersion, Version

        try:
            return Version(version).is_prerelease
        except InvalidVersion:
            return False
    except ImportError:  # packaging is not a hard dependency
        import re

        return re.search(r"(a|b|rc|dev)\d*", version) is not None
