"""Where a codec's compiled state is made: ``Codec()`` (``src/python_api/codec.rs``) calls
``compiled_state`` once, and it does the rest in Python (the cache lookup, the plan, the format's
own state, the store), crossing back into Rust only to build the plan and open the format on it
(``_polycodec._Compiled``)."""

from __future__ import annotations

from typing import Any, Callable, Dict

from . import _cache, _options, _plan
from ._avro import avro_state
from ._polycodec import _Compiled

__all__ = ["compiled_state"]

# What each format derives in Python before Rust opens it on the plan: (plan spec, type, the
# format's options) -> the state its ``open`` reads. A format not named here needs none.
_FORMAT_STATE: Dict[str, Callable[[Any, Any, Dict[str, Any]], Any]] = {"avro": avro_state}


def compiled_state(
    tp: Any,
    format: str,
    options: Dict[str, Any],
    compile_options: Dict[str, Any],
    format_options: Dict[str, Any],
) -> _Compiled:
    """The compiled plan and format state of a codec of ``tp`` in ``format`` with ``options``
    (all the codec's options; ``compile_options``: those the plan compiler takes, with the
    format; ``format_options``: those only the format takes): an earlier codec's, or compiled
    now and kept for the next one."""
    found = _cache.lookup(tp, format, options)
    if found is not None:
        return found  # type: ignore[no-any-return]
    # Read before the classes' options are: a plan compiled while some class is given options
    # is not stored (issue 38, item 10).
    generation = _options.generation
    spec = _plan.compile_spec(tp, **compile_options)
    make_state = _FORMAT_STATE.get(format)
    state = None if make_state is None else make_state(spec, tp, format_options)
    compiled = _Compiled(spec, format, format_options, compile_options, state)
    _cache.store(tp, format, options, compiled, spec, generation)
    return compiled
