"""What the wire format a plan is compiled for changes in it, as the format itself says
(``_polycodec.FORMATS``)."""

from __future__ import annotations

from .._polycodec import FORMATS

# Why a format whose entry in ``_polycodec.FORMATS`` has ``keeps_raw`` false cannot keep a value
# as its encoded bytes.
NO_RAW = {
    "avro": "an Avro value carries neither its type nor its length, so its bytes cannot be told "
    "apart from the ones around it without its schema",
    "pickle": "a pickle's values share its memo and stack, so one value's opcodes cannot be cut "
    "out of one pickle and written into another",
}


def keeps_raw(format: str) -> bool:
    """Whether ``format`` can keep a value as its encoded bytes (``polycodec.Raw``), as the
    format itself says (``_polycodec.FORMATS``)."""
    capabilities = FORMATS.get(format)
    return capabilities is None or bool(capabilities["keeps_raw"])


def unions_need_tag(format: str) -> bool:
    """Whether records sharing a union need a tag field in ``format``, as the format itself says
    (``_polycodec.FORMATS``). A *branched* format (Avro's branch index, pickle's class reference)
    says on the wire which alternative follows, so several records may share a union untagged:
    the decoder reads the branch, and the encoder picks it by the value's class. An unknown name
    needs tags (the codec refuses the name itself once the plan is compiled)."""
    capabilities = FORMATS.get(format)
    return capabilities is None or bool(capabilities["unions_need_tag"])


# ---------------------------------------------------------------------------------------------
