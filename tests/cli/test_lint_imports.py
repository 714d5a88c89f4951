"""``draguard lint`` loads only what a lint needs: no web server, no HTTP client, no certificates.

Why a test: start-up is most of a CI lint's time (issue #21), and one module-level import in the
wrong place (``app.inventory`` importing its API-server client) silently brings back httpx,
asyncio and rich.  This is a behaviour test — which modules a real lint process has loaded when
it is done — not a timing one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER_AND_CLIENT = ("fastapi", "uvicorn", "starlette", "httpx", "anyio", "h11", "cryptography", "asyncio")

_PROBE = """
import contextlib, io, json, sys
from draguard.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _lint_modules(*args: str) -> tuple[int, set[str]]:
    out = subprocess.run([sys.executable, "-c", _PROBE, "lint", *args], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=300)
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    return answer["code"], {m.split(".")[0] for m in answer["modules"]}


def test_lint_with_an_inventory_loads_no_server_client_or_certificate_code() -> None:
    code, loaded = _lint_modules(str(ROOT / "examples" / "claims"), "--inventory", str(ROOT / "examples" / "inventory"))
    assert code in (0, 1)  # it really linted (the bad examples have findings)
    assert "draguard" in loaded and "pydantic" in loaded
    assert loaded.isdisjoint(SERVER_AND_CLIENT), sorted(loaded & set(SERVER_AND_CLIENT))


_STARTS_WITH = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: prefix, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model.startsWith("A")'}
"""


def test_cel_python_loads_only_when_a_selector_is_evaluated(tmp_path: Path) -> None:
    """Without an inventory the examples' CEL selectors are parsed and checked, never evaluated:
    cel-python's evaluator (and pendulum behind it) stays out.  With one, the examples' plain
    comparisons (``device.driver == "…"``, an attribute ``== "…"``) are answered without it
    (app/cel/plain.py); a selector that is not plain loads it and is evaluated by it."""
    claims = str(ROOT / "examples" / "claims")
    inventory = str(ROOT / "examples" / "inventory")
    code, loaded = _lint_modules(claims)
    assert code in (0, 1) and "lark" in loaded  # the syntax-error example went to Lark (plain ones do not: tests/cel)
    assert loaded.isdisjoint({"celpy", "pendulum"}), sorted(loaded & {"celpy", "pendulum"})
    _, loaded = _lint_modules(claims, "--inventory", inventory)
    assert loaded.isdisjoint({"celpy", "pendulum"}), sorted(loaded & {"celpy", "pendulum"})
    (tmp_path / "prefix.yaml").write_text(_STARTS_WITH)
    _, loaded = _lint_modules(str(tmp_path / "prefix.yaml"), "--inventory", inventory)
    assert "celpy" in loaded


def test_the_api_server_names_still_load_when_asked_for() -> None:
    """The lazy names of ``app.inventory`` are the real ones (the explain/serve doors use them)."""
    probe = ("import sys; from draguard.inventory import KubeConfig, read_cluster, status_message; "
             "import draguard.inventory.kubeconfig as k; assert KubeConfig is k.KubeConfig; "
             "print('httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True,
                         timeout=300)
    assert out.stdout.strip() == "True"


def test_the_v1beta1_models_load_with_the_first_v1beta1_object() -> None:
    probe = ("import sys; from draguard.k8s import structural_pass; before = 'draguard.k8s.v1beta1' in sys.modules; "
             "structural_pass('ResourceClaim', {'apiVersion': 'resource.k8s.io/v1beta1', 'kind': 'ResourceClaim', "
             "'metadata': {'name': 'c'}, 'spec': {'devices': {'requests': [{'name': 'r', 'deviceClassName': 'x'}]}}}); "
             "print(before, 'draguard.k8s.v1beta1' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True,
                         timeout=300)
    assert out.stdout.split() == ["False", "True"]


_DUPLICATE_KEY = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: twice}
metadata: {name: again}
"""


def test_pyyaml_and_the_report_formats_load_only_when_needed(tmp_path: Path) -> None:
    """Plain block-style manifests are read by yaml-rs and located line by line: PyYAML (the
    careful decoder, :mod:`app.k8s.careful`), the JUnit writer's ``xml.etree`` and the SVG's
    ``html`` stay out of a JSON lint (the examples' findings are located too).  A duplicate key, or
    a finding in a document with flow collections (the bad slice's ``{string: A100}``, the NIC
    claim's ``requests: [nic-a, …]``: :mod:`app.k8s.linepos` declines those), needs the careful
    decoder, which then loads and answers; ``--format junit`` loads its writer."""
    claims = str(ROOT / "examples" / "claims")
    inventory = str(ROOT / "examples" / "inventory")
    plain = [str(p) for p in sorted((ROOT / "examples" / "claims").glob("*/*.yaml")) if not p.name.startswith(("30-three", "60-slice"))]
    code, loaded = _lint_modules(*plain, "--inventory", inventory, "--format", "json")
    assert code == 1  # the bad examples' findings, each with its line
    assert loaded.isdisjoint({"yaml", "xml", "html"}), sorted(loaded & {"yaml", "xml", "html"})
    code, loaded = _lint_modules(claims, "--inventory", inventory, "--format", "json")
    assert code == 1 and "yaml" in loaded
    code, loaded = _lint_modules(str(ROOT / "examples" / "claims" / "good"), "--format", "json")
    assert code == 0
    assert loaded.isdisjoint({"yaml", "xml", "html"}), sorted(loaded & {"yaml", "xml", "html"})
    (tmp_path / "twice.yaml").write_text(_DUPLICATE_KEY)
    code, loaded = _lint_modules(str(tmp_path / "twice.yaml"), "--format", "json")
    assert code == 1 and "yaml" in loaded  # the duplicate key was found by the careful decoder
    _, loaded = _lint_modules(claims, "--format", "junit")
    assert "xml" in loaded


_EXIT_PROBE = """
import gc, os, sys
from draguard import cli
real_exit = os._exit
def exiting(code):
    kept = cli._retained or []
    models = sum(1 for c in (kept[0] if kept else []) if getattr(c, "model", None) is not None)
    sys.stderr.write(f"retained models at exit: {models}\\n")
    sys.stderr.write(f"collector enabled at exit: {gc.isenabled()}\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = exiting
sys.argv = ["draguard", *sys.argv[1:]]
cli.entry()
"""


def test_a_lint_exits_without_resuming_the_collector_or_freeing_the_review() -> None:
    """Resumed right before the exit, the collector's first pass would scan every object the
    paused lint made (~10 % of linting 400 objects), and freeing the review's models one by one
    was ~5–7 % of linting 10,000; ``entry`` keeps the collector paused and the models alive to the
    quick exit.  ``main`` called in process (as a library) still puts the collector back as it
    found it and retains nothing."""
    claims = str(ROOT / "examples" / "claims" / "good")
    out = subprocess.run([sys.executable, "-c", _EXIT_PROBE, "lint", claims], capture_output=True, text=True,
                         cwd=ROOT, check=False, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "collector enabled at exit: False" in out.stderr
    assert "retained models at exit: 7" in out.stderr  # the seven good examples' models, never freed
    probe = ("import contextlib, gc, io; from draguard import cli\n"
             f"with contextlib.redirect_stdout(io.StringIO()): cli.main(['lint', {claims!r}])\n"
             "print(gc.isenabled(), cli._retained)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True,
                         timeout=300)
    assert out.stdout.split() == ["True", "None"]  # a library caller's process goes on: all is freed


def _undocumented_dataclasses(root: Path) -> list[str]:
    """``file:line class`` of every ``@dataclass`` class under ``root`` whose body opens without a docstring."""
    import ast

    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            decorated = any(
                (d.func if isinstance(d, ast.Call) else d).__class__ is ast.Name
                and (d.func if isinstance(d, ast.Call) else d).id == "dataclass"  # type: ignore[union-attr]
                for d in node.decorator_list
            )
            if decorated and ast.get_docstring(node) is None:
                out.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    return out


def test_every_dataclass_has_a_docstring(tmp_path: Path) -> None:
    """A dataclass without a docstring has one made up at import from ``inspect.signature`` (~0.2 ms
    each, on every start-up); a docstring that says what it is costs nothing.  The checker is seen
    to find a planted one."""
    assert _undocumented_dataclasses(ROOT / "app") == []
    (tmp_path / "m.py").write_text("from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass A:\n    x: int\n")
    assert _undocumented_dataclasses(tmp_path) == ["m.py:4 A"]
