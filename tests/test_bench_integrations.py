"""`python -m benches.integrations` measures what it claims: every FastAPI case answers the
request with the order it was sent, every Celery case gives the receipt back (small counts; no
timing asserted)."""

from __future__ import annotations

import decimal
import json

import pytest

from benches import integrations


def test_cases_do_the_same_work() -> None:
    integrations.check()


@pytest.mark.parametrize("case", sorted(integrations.CASES))
def test_each_case_runs_several_iterations(case: str) -> None:
    got = integrations.CASES[case]()(3)
    if case.startswith("fastapi"):
        assert json.loads(got)["id"] == integrations.ORDER.id
    else:
        total = got["total"] if isinstance(got, dict) else got.total
        assert decimal.Decimal(total) == integrations._total(integrations.ORDER.lines)
