"""The architecture, held by test: layers point down, no import cycles, packages meet at their surface.

Rules (docs/guides/architecture.md), checked on the source text of every module under ``app/``:

1. **Ranked.** Every package (``app/<name>/``) and top-level module (``app/<name>.py``) has a
   rank in :data:`RANK`; a new one must be placed before it can land.
2. **Down only.** A module may import its own package freely; another package only when that
   package ranks strictly lower.  Strict ranks make a cycle between packages impossible.
3. **No cycles** between modules either (module-level imports; ``TYPE_CHECKING`` blocks and
   imports inside functions do not run at import time and are left out).
4. **Surfaces.** Every package's ``__init__.py`` declares ``__all__``.  Another package may
   import only names from ``app.<pkg>`` itself (never ``app.<pkg>.<module>``), and only names
   in its ``__all__``.
5. **Relative inside.** The package is installed as ``draguard`` from the folder ``app/``, so a
   module never imports the package by an absolute name (``app.x`` or ``draguard.x``): only
   relative imports work under both names.

Every import form counts: ``import app.x.y``, ``from app.x.y import z``, ``from app import x``
and relative imports (``from . import x``, ``from ..server import app``).  The checker is a
function of a source folder so that the test of the test can run it on a copy with one
deliberately bad import per rule and see it fail.
"""

from __future__ import annotations

import ast
import functools
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# Lower imports nothing above it.  One rank per package: equal ranks could import each other.
RANK = {
    "lazy": -2,  # names a package exports but imports on first use: stdlib only
    "collector": -1,  # the garbage-collector pause: stdlib only, imported before anything else
    "k8s": 0,
    "certs": 1,
    "cel": 2,
    "capacity": 3,
    "validation": 4,
    "inventory": 5,
    "satisfy": 6,
    "review": 7,
    "report": 8,
    "server": 9,
    "ui": 10,  # draguard ui: the page over the commands' engines; only the ui command imports it
    "commands": 11,
    "cli": 12,
    "__main__": 13,
}


@dataclass(frozen=True)
class Import:
    """One imported module (absolute) and, for ``from … import``, the names taken from it."""

    importer: str
    module: str
    names: tuple[str, ...]
    line: int
    runtime: bool  # executed when the importer is imported (module level, not TYPE_CHECKING)
    absolute: bool = False  # written ``app.x`` / ``draguard.x`` instead of relative


@functools.cache
def _parse(text: str) -> ast.Module:
    """Parsed once per distinct text: the copies of the test of the test differ in one file."""
    return ast.parse(text)


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _import_nodes(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement, with whether it runs at import time."""
    stack: list[tuple[ast.AST, bool]] = [(tree, True)]
    while stack:
        node, runtime = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, runtime
            continue
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _HOLDS_STATEMENTS):
                continue  # imports are statements: expressions never hold one
            lazy = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or (
                isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body
            )
            stack.append((child, runtime and not lazy))


def imports_of(path: Path, root: Path) -> list[Import]:
    """The ``app`` imports of one module, every form resolved to an absolute module name."""
    importer = module_name(path, root)
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    out: list[Import] = []
    for node, runtime in _import_nodes(_parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.extend(Import(importer, _own(a.name), (), node.lineno, runtime, True) for a in node.names)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = _own(node.module or "")
        names = tuple(a.name for a in node.names)
        out.append(Import(importer, module, names, node.lineno, runtime, not node.level))
    return [i for i in out if i.module == "app" or i.module.startswith("app.")]


def _own(module: str) -> str:
    """``draguard.x`` is ``app.x`` under its installed name."""
    return "app" + module[len("draguard"):] if module == "draguard" or module.startswith("draguard.") else module


def unit_of(module: str) -> str:
    """The package or top-level module a module belongs to (``app.cel.parser`` → ``cel``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "app"


def _surface(root: Path, unit: str) -> set[str] | None:
    """``__all__`` of a package's ``__init__`` (or of a top-level module); None when undeclared."""
    path = root / unit / "__init__.py" if (root / unit).is_dir() else root / f"{unit}.py"
    if not path.exists():
        return None
    for node in _parse(path.read_text()).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                return set(ast.literal_eval(node.value))
    return None


def _is_module(module: str, root: Path) -> bool:
    path = root.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _targets(imp: Import, root: Path, surfaces: dict[str, set[str] | None]) -> Iterator[tuple[str, str | None]]:
    """(absolute module, name taken from it or None).  ``from app.cel import parser`` imports the
    module ``app.cel.parser``, ``from app.cel import compile_selector`` a name of ``app.cel`` — and
    a name the package's ``__init__`` binds (``app.report.render``, the function) wins over a
    submodule of the same name, as it does in Python."""
    if not imp.names:
        yield imp.module, None
    surface = surfaces.get(unit_of(imp.module)) if imp.module.count(".") == 1 else None
    for name in imp.names:
        if name not in (surface or ()) and _is_module(f"{imp.module}.{name}", root):
            yield f"{imp.module}.{name}", None
        else:
            yield imp.module, name


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle found by depth-first search (one representative per back edge)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def check_layers(root: Path) -> list[str]:
    """Every violation of the four rules in the source tree ``root`` (an ``app`` folder)."""
    violations: list[str] = []
    units = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    units |= {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    violations += [f"{u}: not ranked (place it in RANK)" for u in sorted(units - set(RANK))]
    surfaces = {u: _surface(root, u) for u in units}
    violations += [
        f"app.{u}: __init__.py declares no __all__ (its public surface)"
        for u in sorted(units)
        if (root / u).is_dir() and surfaces[u] is None
    ]
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for imp in imports_of(path, root):
            own = unit_of(imp.importer)
            where = f"{imp.importer}:{imp.line}"
            if imp.absolute:
                violations.append(f"{where}: imports {imp.module} by an absolute name (use a relative import)")
            for module, name in _targets(imp, root, surfaces):
                if imp.runtime:
                    graph.setdefault(imp.importer, set()).add(module)
                other = unit_of(module)
                if other in ("app", own) or own == "app":
                    continue
                if other in RANK and own in RANK and RANK[other] >= RANK[own]:
                    violations.append(f"{where}: imports {module} ({own} may not import {other}: not below it)")
                if module.count(".") > 1:
                    violations.append(f"{where}: imports {module}, past the surface of app.{other}")
                elif name is not None:
                    surface = surfaces.get(other)
                    if surface is not None and name not in surface:
                        violations.append(f"{where}: imports {name} from app.{other}, which is not in its __all__")
    violations += [f"import cycle: {' -> '.join(c)}" for c in _cycles(graph)]
    return violations


# --------------------------------------------------------------------------- the rules hold
def test_app_keeps_its_layers_cycles_and_surfaces() -> None:
    assert check_layers(APP) == []


def test_the_ranking_follows_the_documented_order() -> None:
    order = ["k8s", "cel", "validation", "inventory", "satisfy", "review", "report", "server", "ui", "commands", "cli"]
    assert [RANK[u] for u in order] == sorted(RANK[u] for u in order)
    assert RANK["capacity"] < RANK["satisfy"] and RANK["certs"] < RANK["server"]


# --------------------------------------------------------------------------- the test of the test
def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(APP, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + "\n" + text + "\n")


BAD_IMPORTS = [
    # (file under app/, line added, a fragment of the violation it must cause)
    ("k8s/field.py", "from ..server import app", "k8s may not import server"),
    ("k8s/field.py", "from app import server", "k8s may not import server"),
    ("k8s/field.py", "import app.server.app", "k8s may not import server"),
    ("k8s/quantity.py", "from app.review import review_documents", "k8s may not import review"),
    ("capacity/fit.py", "from app.validation import validate", "capacity may not import validation"),
    ("satisfy/check.py", "from app.inventory.snapshot import Inventory", "past the surface of app.inventory"),
    ("satisfy/check.py", "import app.cel.parser", "past the surface of app.cel"),
    ("satisfy/check.py", "from app.cel import parse_with_tree", "not in its __all__"),
    ("satisfy/check.py", "from app.cel import parser", "past the surface of app.cel"),
    ("satisfy/check.py", "from ..cel import parser", "past the surface of app.cel"),
    ("k8s/golang.py", "from app.k8s.quantity import Quantity", "import cycle"),
    ("k8s/field.py", "from app.k8s import Path", "import cycle"),
    ("k8s/field.py", "from . import Quantity", "import cycle"),
    ("satisfy/check.py", "from app.inventory import Inventory", "by an absolute name"),
    ("satisfy/check.py", "from draguard.inventory import Inventory", "by an absolute name"),
    ("satisfy/check.py", "import draguard.k8s", "by an absolute name"),
]


@pytest.mark.parametrize(("target", "line", "expected"), BAD_IMPORTS, ids=[b[1] for b in BAD_IMPORTS])
def test_a_deliberately_bad_import_fails_the_check(tmp_path: Path, target: str, line: str, expected: str) -> None:
    root = _copy(tmp_path)
    assert check_layers(root) == []
    _append(root / target, line)
    violations = check_layers(root)
    assert any(expected in v for v in violations), violations


def test_an_import_inside_a_function_or_type_checking_block_is_not_a_cycle(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _append(root / "k8s" / "field.py", "def _later() -> None:\n    from . import finding  # noqa: F401")
    _append(root / "k8s" / "tree.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import decode")
    assert check_layers(root) == []


def test_an_unranked_package_and_a_package_without_a_surface_fail_the_check(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "plugins").mkdir()
    (root / "plugins" / "__init__.py").write_text('"""New."""\n')
    violations = check_layers(root)
    assert "plugins: not ranked (place it in RANK)" in violations
    assert "app.plugins: __init__.py declares no __all__ (its public surface)" in violations
