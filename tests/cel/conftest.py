"""Run every test in tests/cel once per evaluation engine: production's cel-python evaluator and the
oracle (``oracle.py``), so that every expectation is checked on two independent evaluators."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from draguard.cel.engines import engine_scope
from draguard.cel.selector import clear_caches

from .oracle import ENGINES


@pytest.fixture(params=sorted(ENGINES), autouse=True)
def cel_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Make ``request.param`` the engine new selectors compile with; restore the env default after."""
    name: str = request.param
    with engine_scope(ENGINES[name]):
        clear_caches()
        yield name
    clear_caches()
