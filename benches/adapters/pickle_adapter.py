"""The stdlib ``pickle`` module: the pickle baseline (``protocol=5``; a batch is a pickled list)."""

from __future__ import annotations

import pickle
from functools import partial

from ..models import ModelSpec
from .base import Adapter, Ops


def _build(fmt: str, model: ModelSpec) -> Ops:
    dumps = partial(pickle.dumps, protocol=5)
    return Ops(dumps, pickle.loads, dumps, pickle.loads)


ADAPTERS = [
    Adapter(
        name="pickle",
        label="stdlib pickle",
        distribution=None,
        formats=("pickle",),
        build=_build,
        how={"pickle": "pickle.dumps(obj or list, protocol=5); pickle.loads"},
        class_options=True,
    )
]
