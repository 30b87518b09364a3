"""The ``builtins`` format: dataclasses to and from the JSON form as Python objects (dicts,
lists, str, int, float, bool, None), without bytes, as users feeding web frameworks, ORMs or
YAML/TOML writers need. "encode" is the dump (object -> dicts), "decode" the validating load
(dicts -> object); a batch is a list.

The peers are the libraries of the seed comparisons, each in its documented idiom:

* hand-written (the baseline): the shared converters of ``_convert.py`` (json flavour);
* msgspec: ``msgspec.to_builtins`` / ``msgspec.convert(data, T)`` on the plain dataclasses (its
  Struct row, the same calls on Structs, lives in ``msgspec_adapter.py``);
* pydantic v2: ``TypeAdapter(T).dump_python(mode="json")`` / ``validate_python``;
* mashumaro: ``mashumaro.codecs.basic.BasicEncoder/BasicDecoder(T)``, the codec form of
  ``to_dict`` / ``from_dict`` (no mixin base class needed on the shared models);
* marshmallow: hand-written schemas with ``@post_load`` (``_builtins_schemas.py``);
* marshmallow-recipe: ``mr.dump`` / ``mr.load`` (``dump_many`` / ``load_many``), and its Rust
  backend where the installed version has it: ``mr.nuked.dump(T, obj)`` / ``mr.nuked.load(T,
  data)``, with ``list[T]`` for batches;
* serpy: hand-written serializers; serpy only dumps, so its load is the hand-written
  converter (the baseline's), marked as such.

polycodec's two rows (plain and ``slots=True`` dataclasses) come from ``polycodec_adapter.py``.
Each library is optional: one that does not import is listed as unavailable.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any


from ..models import ModelSpec
from ._convert import converters
from .base import Adapter, Ops, Unsupported

FORMAT = "builtins"
ADAPTERS: list[Adapter] = []
UNAVAILABLE: dict[str, str] = {}


def _hand_written(fmt: str, model: ModelSpec) -> Ops:
    to_dict, from_dict = converters("json", model.name)

    def encode_many(objs: list[Any]) -> list[Any]:
        return [to_dict(o) for o in objs]

    def decode_many(data: list[Any]) -> list[Any]:
        return [from_dict(d) for d in data]

    return Ops(to_dict, from_dict, encode_many, decode_many)


ADAPTERS.append(
    Adapter(
        name="hand-written",
        label="hand-written",
        distribution=None,
        formats=(FORMAT,),
        build=_hand_written,
        how={FORMAT: "the shared hand-written converters (_convert.py, json flavour)"},
        class_options=True,
    )
)

try:
    import msgspec

    def _msgspec(fmt: str, model: ModelSpec) -> Ops:
        root, items = model.root, model.list_type
        convert, to_builtins = msgspec.convert, msgspec.to_builtins
        if model.name in ("tree", "filesystem"):
            raise Unsupported("msgspec cannot convert into a union of several dataclasses")

        def decode_one(data: Any) -> Any:
            return convert(data, root)

        def decode_many(data: Any) -> Any:
            return convert(data, items)

        return Ops(to_builtins, decode_one, to_builtins, decode_many)

    ADAPTERS.append(
        Adapter(
            name="msgspec",
            label="msgspec",
            distribution="msgspec",
            formats=(FORMAT,),
            build=_msgspec,
            how={FORMAT: "msgspec.to_builtins / msgspec.convert(data, T / list[T])"},
        )
    )
except ImportError as exc:
    UNAVAILABLE["msgspec"] = f"not importable: {exc}"

try:
    import pydantic

    def _pydantic(fmt: str, model: ModelSpec) -> Ops:
        try:
            one: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(model.root)
            many: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(model.list_type)
        except Exception as exc:
            raise Unsupported(f"pydantic.TypeAdapter failed: {type(exc).__name__}: {exc}")

        def dump_one(obj: Any) -> Any:
            return one.dump_python(obj, mode="json")

        def dump_many(objs: Any) -> Any:
            return many.dump_python(objs, mode="json")

        return Ops(dump_one, one.validate_python, dump_many, many.validate_python)

    ADAPTERS.append(
        Adapter(
            name="pydantic",
            label="pydantic v2",
            distribution="pydantic",
            formats=(FORMAT,),
            build=_pydantic,
            how={FORMAT: "TypeAdapter(T / list[T]).dump_python(mode='json') / .validate_python"},
        )
    )
except ImportError as exc:
    UNAVAILABLE["pydantic"] = f"not importable: {exc}"

try:
    from mashumaro.codecs.basic import BasicDecoder, BasicEncoder

    def _mashumaro(fmt: str, model: ModelSpec) -> Ops:
        try:
            enc_one, dec_one = BasicEncoder(model.root), BasicDecoder(model.root)
            enc_many, dec_many = BasicEncoder(model.list_type), BasicDecoder(model.list_type)
        except Exception as exc:
            raise Unsupported(f"mashumaro codec generation failed: {type(exc).__name__}: {exc}")
        return Ops(enc_one.encode, dec_one.decode, enc_many.encode, dec_many.decode)

    ADAPTERS.append(
        Adapter(
            name="mashumaro",
            label="mashumaro",
            distribution="mashumaro",
            formats=(FORMAT,),
            build=_mashumaro,
            how={FORMAT: "mashumaro.codecs.basic.BasicEncoder/BasicDecoder(T / list[T])"},
        )
    )
except ImportError as exc:
    UNAVAILABLE["mashumaro"] = f"not importable: {exc}"

try:
    from ._builtins_schemas import MARSHMALLOW_SCHEMAS, SERPY_SERIALIZERS

    def _marshmallow(fmt: str, model: ModelSpec) -> Ops:
        if model.name not in MARSHMALLOW_SCHEMAS:
            raise Unsupported(f"no hand-written marshmallow schema for the {model.name} model yet")
        cls = MARSHMALLOW_SCHEMAS[model.name]
        one, many = cls(), cls(many=True)
        return Ops(one.dump, one.load, many.dump, many.load)

    def _serpy(fmt: str, model: ModelSpec) -> Ops:
        if model.name not in SERPY_SERIALIZERS:
            raise Unsupported(f"no hand-written serpy serializer for the {model.name} model yet")
        serializer = SERPY_SERIALIZERS[model.name]
        _, from_dict = converters("json", model.name)

        def dump_one(obj: Any) -> Any:
            return serializer(obj).data

        def dump_many(objs: Any) -> Any:
            return serializer(objs, many=True).data

        def load_many(data: list[Any]) -> list[Any]:
            return [from_dict(d) for d in data]

        return Ops(dump_one, from_dict, dump_many, load_many)

    ADAPTERS.append(
        Adapter(
            name="marshmallow",
            label="marshmallow",
            distribution="marshmallow",
            formats=(FORMAT,),
            build=_marshmallow,
            how={
                FORMAT: "hand-written Schema per class with @post_load; .dump / .load "
                "(many=True for batches)"
            },
        )
    )
    ADAPTERS.append(
        Adapter(
            name="serpy",
            label="serpy (dump only)",
            distribution="serpy",
            formats=(FORMAT,),
            build=_serpy,
            how={
                FORMAT: "hand-written Serializer per class, Serializer(obj).data; serpy has "
                "no load: its decode rows are the hand-written converter's"
            },
        )
    )
except ImportError as exc:
    UNAVAILABLE["marshmallow"] = UNAVAILABLE["serpy"] = f"not importable: {exc}"

try:
    import marshmallow_recipe as mr

    MARSHMALLOW_RECIPE_VERSION = importlib.metadata.version("marshmallow-recipe")

    def _marshmallow_recipe(fmt: str, model: ModelSpec) -> Ops:
        root = model.root

        def dump_one(obj: Any) -> Any:
            return mr.dump(obj)

        def load_one(data: Any) -> Any:
            return mr.load(root, data)

        def dump_many(objs: Any) -> Any:
            return mr.dump_many(objs)

        def load_many(data: Any) -> Any:
            return mr.load_many(root, data)

        try:
            mr.schema(root)
        except Exception as exc:
            raise Unsupported(
                f"marshmallow-recipe {MARSHMALLOW_RECIPE_VERSION} cannot build a schema: {exc}"
            )
        return Ops(dump_one, load_one, dump_many, load_many)

    ADAPTERS.append(
        Adapter(
            name="marshmallow-recipe",
            label="marshmallow-recipe",
            distribution="marshmallow-recipe",
            formats=(FORMAT,),
            build=_marshmallow_recipe,
            how={FORMAT: "mr.dump / mr.load(T, data) (dump_many / load_many for batches)"},
        )
    )

    # The Rust backend shipped inside marshmallow-recipe since 0.0.75 (whose releases need
    # Python 3.12 or newer, so a 3.11 install resolves an older one without it).
    nuked = getattr(mr, "nuked", None)
    if nuked is None:
        UNAVAILABLE["marshmallow-recipe-nuked"] = (
            f"marshmallow-recipe {MARSHMALLOW_RECIPE_VERSION} has no nuked backend "
            "(it is in 0.0.75 and later, which need Python 3.12 or newer)"
        )
    else:

        def _marshmallow_recipe_nuked(fmt: str, model: ModelSpec) -> Ops:
            root, items = model.root, model.list_type
            dump, load = nuked.dump, nuked.load
            try:
                # Compiles (and caches) the Rust converters, refusing what nuked cannot do.
                nuked.schema(root)
            except Exception as exc:
                raise Unsupported(
                    f"marshmallow-recipe {MARSHMALLOW_RECIPE_VERSION} nuked: "
                    f"{type(exc).__name__}: {exc}"
                )

            def dump_one(obj: Any) -> Any:
                return dump(root, obj)

            def load_one(data: Any) -> Any:
                return load(root, data)

            def dump_many(objs: Any) -> Any:
                return dump(items, objs)

            def load_many(data: Any) -> Any:
                return load(items, data)

            return Ops(dump_one, load_one, dump_many, load_many)

        ADAPTERS.append(
            Adapter(
                name="marshmallow-recipe-nuked",
                label="marshmallow-recipe (nuked)",
                distribution="marshmallow-recipe",
                formats=(FORMAT,),
                build=_marshmallow_recipe_nuked,
                how={
                    FORMAT: "its Rust backend: mr.nuked.dump(T, obj) / mr.nuked.load(T, data), "
                    "with list[T] as the type for batches (one call each)"
                },
            )
        )
except ImportError as exc:
    UNAVAILABLE["marshmallow-recipe"] = UNAVAILABLE["marshmallow-recipe-nuked"] = (
        f"not importable: {exc}"
    )
