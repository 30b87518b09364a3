"""Shared fixtures: ``format`` runs a test once for every wire format this build implements."""

from __future__ import annotations

import pytest

from polycodec._polycodec import FORMATS


@pytest.fixture(params=list(FORMATS))
def format(request: pytest.FixtureRequest) -> str:
    """The name of a wire format, from the extension's own list (``_polycodec.FORMATS``)."""
    name: str = request.param
    return name
