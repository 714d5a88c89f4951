"""Fixtures of the docs tests: the generator of scripts/docs/ as a module, and tests/server's
real HTTPS server for the ``POST /lint`` answer."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from server.conftest import serve, tls_master, tls_paths  # noqa: F401  (a real HTTPS server for POST /lint)

ROOT = Path(__file__).resolve().parents[2]


def load_generator() -> ModuleType:
    """scripts/docs/generate.py (it puts its own folder on sys.path for its page modules)."""
    name = "draguard_docs_generate"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def generator() -> ModuleType:
    return load_generator()
