"""The plan spec's contract with Rust (docs/plan-spec.md): the node kinds and what each kind's
data holds."""

from __future__ import annotations

from typing import Any, Dict, Tuple

Node = Tuple[str, Dict[str, Any]]

_RECORD_KINDS = frozenset({"dataclass", "typeddict", "namedtuple"})
