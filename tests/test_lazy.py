"""Names imported on first use (``app/lazy.py``): a lint of claims loads no pod machinery, and
every exported name still resolves, by attribute and by ``from … import``."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest
from draguard.lazy import lazy_exports

ROOT = Path(__file__).resolve().parents[1]
POD_MODULES = ("k8s.pod", "satisfy.pod", "satisfy.podcheck", "satisfy.replicas", "review.workloads",
               "review.explain", "validation.pod", "report.explain")
PACKAGES = ("k8s", "validation", "satisfy", "review", "report")


def _loaded_after(code: str) -> set[str]:
    """The pod modules in ``sys.modules`` after ``code`` ran in a fresh interpreter."""
    probe = (f"import sys\n{code}\n"
             f"print(' '.join(m for m in {POD_MODULES!r} if 'draguard.' + m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_a_lint_of_claims_and_slices_imports_no_pod_machinery(tmp_path: Path) -> None:
    claim = tmp_path / "claim.yaml"
    claim.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
                     "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu}\n")
    code = ("import io, contextlib\nfrom draguard.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['lint', {str(claim)!r}, '--format', 'json'])")
    assert _loaded_after(code) == set()


def test_a_lint_loads_no_part_of_the_ui(tmp_path: Path) -> None:
    """``draguard ui`` (its page, FastAPI app and poller) is imported only for ``ui``: a lint of
    claims and pods never pays for it."""
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
                   "  resourceClaims:\n  - name: g\n    resourceClaimName: c\n"
                   "  containers:\n  - name: x\n    image: busybox\n")
    probe = ("import sys, io, contextlib\nfrom draguard.cli import main\n"
             f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['lint', {str(pod)!r}, '--format', 'json'])\n"
             "print(' '.join(sorted(m for m in sys.modules if m == 'draguard.ui' or m.startswith('draguard.ui.'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == []
    ui = ("import sys\nfrom draguard.cli import build_parser\nbuild_parser('ui')\n"
          "print('draguard.ui' in sys.modules)")  # the other side: the ui command does load it
    assert subprocess.run([sys.executable, "-c", ui], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip() == "True"


def test_a_lint_of_a_pod_loads_it(tmp_path: Path) -> None:
    """The other side: the first pod pulls in what it needs (nothing is missing on the way)."""
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
                   "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu}\n---\n"
                   "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
                   "  resourceClaims:\n  - name: g\n    resourceClaimName: c\n"
                   "  containers:\n  - name: x\n    image: busybox\n    resources:\n      claims:\n      - name: g\n")
    code = ("import io, contextlib\nfrom draguard.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['lint', {str(pod)!r}, '--format', 'json'])")
    loaded = _loaded_after(code)
    assert {"k8s.pod", "satisfy.podcheck", "review.workloads"} <= loaded


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(f"draguard.{package}")
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    exec(f"from draguard.{package} import {', '.join(module.__all__)}", {})


def test_a_lazy_name_is_the_defining_module_s_own_object() -> None:
    from draguard.k8s import PodSpec
    from draguard.k8s.pod import PodSpec as defined
    from draguard.satisfy import check_pod
    from draguard.satisfy.podcheck import check_pod as defined_check

    assert PodSpec is defined and check_pod is defined_check


def test_an_unknown_name_is_an_attribute_error() -> None:
    fake = types.ModuleType("draguard_lazy_probe")
    sys.modules[fake.__name__] = fake
    try:
        getter = lazy_exports(fake.__name__, {"json": ("dumps",)})
        assert getter("dumps") is importlib.import_module("json").dumps
        assert fake.dumps is getter("dumps")  # kept: the next use is a plain attribute
        with pytest.raises(AttributeError, match="no attribute 'nothing'"):
            getter("nothing")
        with pytest.raises(AttributeError):
            importlib.import_module("draguard.k8s").NoSuchName  # noqa: B018
    finally:
        del sys.modules[fake.__name__]


def test_a_server_loads_everything_before_its_first_request() -> None:
    """``create_app`` (every server) imports what the lazy names defer: no pod pays for it."""
    code = ("from draguard.inventory import StaticInventory\nfrom draguard.server.app import create_app\n"
            "from draguard.server.state import ServerState\n"
            f"create_app(ServerState(inventory=StaticInventory([{str(ROOT / 'tests/server/data/inventory.yaml')!r}])))")
    assert _loaded_after(code) == set(POD_MODULES)
