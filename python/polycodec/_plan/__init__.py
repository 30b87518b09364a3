"""Compile a Python type into the flat *plan spec* the Rust extension builds its IR from.

The contract (node kinds, data keys, union rules) is ``docs/plan-spec.md``. Everything here runs
once per type, so it favours clear errors over speed: every annotation polycodec cannot encode
*and* decode faithfully is refused with a ``TypeError`` naming the field it sits in.

Only record nodes (dataclass, TypedDict, NamedTuple) are memoised; every other node is created
fresh for each place it occurs, so constraints can be merged into a copy without affecting any
other use of the same type. (A recursive ``type`` alias is the one exception: the references back
to it inside its own value share its node, as references back to a class share the record's.) Nodes orphaned by such copies (or by union normalisation) are
dropped by a final compaction pass, so the returned list holds exactly the reachable nodes.
"""

from __future__ import annotations

from .._defaults import NODEFAULT
from .compiler import compile_spec

__all__ = ["NODEFAULT", "compile_spec"]
