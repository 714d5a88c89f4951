"""Layers point down (DESIGN.md §1.6): no module imports a layer above its own.

Vocabulary (k8s) at the bottom, adapters (server, cli) at the top.  A module may import its
own layer and anything below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"

RANK = {
    "k8s": 0,
    "cel": 1,
    "capacity": 2,
    "validation": 2,
    "inventory": 3,
    "satisfy": 4,
    "review": 5,
    "report": 6,
    "certs": 6,
    "server": 7,
    "cli": 8,
    "__main__": 9,
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app"):
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out.extend(a.name for a in node.names if a.name.startswith("app"))
    return out


def test_no_module_imports_upward() -> None:
    violations: list[str] = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP.parent).with_suffix("")
        module = ".".join(rel.parts)
        own = layer_of(module)
        if own == "__init__":
            continue
        for target in imports_of(path):
            other = layer_of(target)
            if other in RANK and own in RANK and RANK[other] > RANK[own]:
                violations.append(f"{module} imports {target} ({own} < {other})")
    assert violations == []


def test_every_layer_is_ranked() -> None:
    layers = {p.name for p in APP.iterdir() if p.is_dir() and not p.name.startswith("__")}
    layers |= {p.stem for p in APP.glob("*.py") if p.stem != "__init__"}
    assert layers <= set(RANK)
