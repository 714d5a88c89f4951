"""Run every test in tests/cel once per evaluation engine (cel-python's evaluator and the compiled one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.cel.engines import ENGINES, set_default_engine
from app.cel.selector import clear_caches


@pytest.fixture(params=sorted(ENGINES), autouse=True)
def cel_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Make ``request.param`` the engine new selectors compile with; restore the env default after."""
    name: str = request.param
    set_default_engine(name)
    clear_caches()
    yield name
    set_default_engine(None)
    clear_caches()
