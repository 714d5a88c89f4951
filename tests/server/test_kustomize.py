"""Every kustomize component renders with ``kubectl kustomize``, follows an overlay's namespace,
and everything rendered is accepted by a real kube-apiserver's server-side dry run."""

from __future__ import annotations

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
MANIFESTS = ROOT / "manifests"
COMPONENTS = sorted(p.name for p in (MANIFESTS / "components").iterdir() if p.is_dir())
DATA = Path(__file__).parent / "data" / "kustomize"
SKIP_LABEL = "admission.draguard.dev/skip"
# cert-manager and self-managed-certs both provide the serving certificate: one or the other
CERT_MODES = ("cert-manager", "self-managed-certs")
EVERYTHING_WITH = {mode: [c for c in COMPONENTS if c not in CERT_MODES or c == mode] for mode in CERT_MODES}

needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


def render(tmp: Path, components: Sequence[str], namespace: str | None = None) -> list[dict[str, Any]]:
    """``kubectl kustomize`` of an overlay adding ``components`` to the base; with ``namespace``,
    the namespace is set one level below, as docs/guides/deploy.md "Another namespace" says to."""
    tmp.mkdir(parents=True, exist_ok=True)
    below = MANIFESTS
    if namespace is not None:
        ns_dir = tmp / "namespace"
        ns_dir.mkdir(exist_ok=True)
        (ns_dir / "kustomization.yaml").write_text(yaml.safe_dump(
            {"namespace": namespace, "resources": [os.path.relpath(MANIFESTS, ns_dir)]}))
        below = ns_dir
    top = tmp / "top"
    top.mkdir(exist_ok=True)
    (top / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": [os.path.relpath(below, top)],
        "components": [os.path.relpath(MANIFESTS / "components" / c, top) for c in components],
    }))
    proc = subprocess.run(["kubectl", "kustomize", str(top)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (deploy,) = by_kind(docs, "Deployment")
    return dict(deploy["spec"]["template"]["spec"]["containers"][0])


def ca_bundles_rendered(docs: list[dict[str, Any]]) -> list[Any]:
    return [h["clientConfig"].get("caBundle") for d in docs if d["kind"].endswith("WebhookConfiguration")
            for h in d["webhooks"]]


@needs_kubectl
@pytest.mark.parametrize("mode", CERT_MODES)
def test_certificate_modes_leave_ca_bundle_to_their_owner(tmp_path: Path, mode: str) -> None:
    """A re-applied empty caBundle would blank the injected one: the modes that own it drop it."""
    assert ca_bundles_rendered(render(tmp_path / "base", [])) == [""] * 5  # for `draguard certs --patch`
    assert ca_bundles_rendered(render(tmp_path / mode, [mode])) == [None] * 5


def test_every_component_directory_is_a_component() -> None:
    assert set(COMPONENTS) == {"cert-manager", "self-managed-certs", "high-availability", "network-policy",
                               "service-monitor", "audit", "policyreport-crds"}
    for name in COMPONENTS:
        doc = yaml.safe_load((MANIFESTS / "components" / name / "kustomization.yaml").read_text())
        assert doc["kind"] == "Component", name


@needs_kubectl
@pytest.mark.parametrize("components", [[], *([c] for c in COMPONENTS)], ids=lambda c: "+".join(c) or "base")
def test_each_component_renders(tmp_path: Path, components: list[str]) -> None:
    docs = render(tmp_path, components)
    base = {(d["kind"], d["metadata"]["name"]) for d in render(tmp_path / "base", [])}
    assert base <= {(d["kind"], d["metadata"]["name"]) for d in docs}  # components only add


@needs_kubectl
def test_cert_manager_component(tmp_path: Path) -> None:
    docs = render(tmp_path, ["cert-manager"])
    serving = next(c for c in by_kind(docs, "Certificate") if c["metadata"]["name"] == "draguard-serving")
    (deploy,) = by_kind(docs, "Deployment")
    mounted = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}["tls"]["secret"]["secretName"]
    assert serving["spec"]["secretName"] == mounted  # cert-manager writes what the pods mount
    assert "draguard.draguard.svc" in serving["spec"]["dnsNames"]
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        (hooks,) = by_kind(docs, kind)
        assert hooks["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "draguard/draguard-serving"


@needs_kubectl
def test_self_managed_component(tmp_path: Path) -> None:
    docs = render(tmp_path, ["self-managed-certs"])
    c = container(docs)
    assert "--cert-secret=draguard-tls" in c["args"] and "--tls-cert=/certs/tls.crt" in c["args"]
    (deploy,) = by_kind(docs, "Deployment")
    tls = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}["tls"]
    assert "secret" not in tls and tls["emptyDir"]["medium"] == "Memory"  # the key stays in memory
    assert {m["name"]: m for m in c["volumeMounts"]}["tls"]["readOnly"] is False
    # the bootstrap (serve's 60 s limit) fits the startup probe's window before liveness counts
    startup = c["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] > 60
    # RBAC: get/update of exactly its Secret, its Lease and the two webhook configurations
    (role,) = by_kind(docs, "Role")
    granted = {(g, r, n, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
               for n in rule["resourceNames"] for v in rule["verbs"]}
    assert granted == {("", "secrets", "draguard-tls", v) for v in ("get", "update")} | {
        ("coordination.k8s.io", "leases", "draguard-cert-rotation", v) for v in ("get", "update")}
    webhook_role = next(r for r in by_kind(docs, "ClusterRole") if r["metadata"]["name"] == "draguard-webhook-ca")
    (rule,) = webhook_role["rules"]
    assert rule["resourceNames"] == ["draguard"] and rule["verbs"] == ["get", "update"]
    assert {d["metadata"]["name"] for d in by_kind(docs, "Secret") + by_kind(docs, "Lease")} == {
        "draguard-tls", "draguard-cert-rotation"}


@needs_kubectl
def test_high_availability_service_monitor_and_network_policy(tmp_path: Path) -> None:
    docs = render(tmp_path, ["high-availability", "service-monitor", "network-policy"])
    (deploy,) = by_kind(docs, "Deployment")
    spec = deploy["spec"]
    assert spec["replicas"] == 3
    keys = {t["topologyKey"] for t in spec["template"]["spec"]["topologySpreadConstraints"]}
    assert "topology.kubernetes.io/zone" in keys
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == spec["selector"]["matchLabels"]
    c = container(docs)
    assert "--health-port=8080" in c["args"]
    (svc,) = by_kind(docs, "Service")
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]} == {"https": 443, "metrics": 8080}
    (monitor,) = by_kind(docs, "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    (policy,) = by_kind(docs, "NetworkPolicy")
    assert {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]} == {8443, 8080}


def namespaces_mentioned(docs: list[dict[str, Any]]) -> set[str]:
    """Every namespace an object lives in or points at (bindings, webhooks, cert-manager)."""
    out: set[str] = set()
    for d in docs:
        meta = d["metadata"]
        if "namespace" in meta:
            out.add(meta["namespace"])
        for subject in d.get("subjects") or []:
            out.add(subject["namespace"])
        for hook in d.get("webhooks") or []:
            out.add(hook["clientConfig"]["service"]["namespace"])
        inject = (meta.get("annotations") or {}).get("cert-manager.io/inject-ca-from")
        if inject:
            out.add(inject.split("/")[0])
        for name in (d.get("spec") or {}).get("dnsNames") or []:
            out.add(name.split(".")[1])
    return out


@needs_kubectl
@pytest.mark.parametrize("mode", CERT_MODES)
def test_everything_follows_an_overlay_namespace(tmp_path: Path, mode: str) -> None:
    docs = render(tmp_path, EVERYTHING_WITH[mode], namespace="platform-dra")
    assert namespaces_mentioned(docs) == {"platform-dra"}
    (ns,) = by_kind(docs, "Namespace")
    assert ns["metadata"]["name"] == "platform-dra" and ns["metadata"]["labels"][SKIP_LABEL] == "true"
    for d in by_kind(docs, "ValidatingWebhookConfiguration") + by_kind(docs, "MutatingWebhookConfiguration"):
        for hook in d["webhooks"]:
            values = [v for e in (hook.get("namespaceSelector") or {}).get("matchExpressions", [])
                      for v in e.get("values", [])]
            assert "draguard" not in values  # the exclusion is by label, which travelled


def kustomize_one_level(tmp: Path, components: Sequence[str], namespace: str | None) -> subprocess.CompletedProcess[str]:
    """``namespace:`` (when given) and ``components`` in one kustomization, as people write it first."""
    top = tmp / "one-level"
    top.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"resources": [os.path.relpath(MANIFESTS, top)],
                           "components": [os.path.relpath(MANIFESTS / "components" / c, top) for c in components]}
    if namespace is not None:
        doc["namespace"] = namespace
    (top / "kustomization.yaml").write_text(yaml.safe_dump(doc))
    return subprocess.run(["kubectl", "kustomize", str(top)], capture_output=True, text=True, timeout=60, check=False)


@needs_kubectl
def test_namespace_in_the_same_kustomization_as_cert_manager_fails_loudly(tmp_path: Path) -> None:
    """cert-manager's values carry the namespace (inject-ca-from, dnsNames) and components run before
    the `namespace:` beside them: rather than render `draguard/...` into another namespace, the build
    stops, and the guard's name says what to do (docs/guides/deploy.md "Another namespace")."""
    proc = kustomize_one_level(tmp_path, ["cert-manager", "high-availability"], namespace="platform-dra")
    assert proc.returncode != 0 and proc.stdout == ""
    assert "namespace transformation produces ID conflict" in proc.stderr
    assert "draguard-cert-manager-set-namespace-in-a-kustomization-below-this-one" in proc.stderr


@needs_kubectl
def test_namespace_in_the_same_kustomization_works_for_the_other_components(tmp_path: Path) -> None:
    """Their namespaced values are only metadata.namespace and subjects, which `namespace:` reaches."""
    others = [c for c in COMPONENTS if c != "cert-manager"]
    proc = kustomize_one_level(tmp_path, others, namespace="platform-dra")
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert namespaces_mentioned(docs) == {"platform-dra"}
    assert {d["kind"] for d in docs} >= {"Lease", "PodDisruptionBudget", "NetworkPolicy", "ServiceMonitor"}


@needs_kubectl
@pytest.mark.parametrize("order", [CERT_MODES, CERT_MODES[::-1]], ids=["cert-manager-first", "self-managed-first"])
def test_both_certificate_components_refuse_with_a_message(tmp_path: Path, order: tuple[str, ...]) -> None:
    """Two owners for one serving Secret cannot both be right: the build stops naming the choice
    (it used to stop at "Unable to remove nonexistent key: caBundle")."""
    proc = kustomize_one_level(tmp_path, list(order), namespace=None)
    assert proc.returncode != 0
    assert "draguard-use-one-certificate-component-cert-manager-or-self-managed-certs" in proc.stderr
    assert "caBundle" not in proc.stderr


@needs_kubectl
@pytest.mark.parametrize("mode", CERT_MODES)
def test_guards_are_never_rendered(tmp_path: Path, mode: str) -> None:
    """The guards are local-config: kustomize reads them and prints nothing of them."""
    for docs in (render(tmp_path / "plain", EVERYTHING_WITH[mode]),
                 render(tmp_path / "ns", EVERYTHING_WITH[mode], namespace="platform-dra")):
        assert not [d for d in docs if d["kind"] == "ConfigMap"]
        assert all("config.kubernetes.io/local-config" not in (d["metadata"].get("annotations") or {}) for d in docs)


@needs_kubectl
def test_every_object_carries_the_part_of_label(tmp_path: Path) -> None:
    """The base's `labels:` reaches only the base: the components label their own objects."""
    for mode in CERT_MODES:
        for d in render(tmp_path / mode, EVERYTHING_WITH[mode]):
            assert d["metadata"].get("labels", {}).get("app.kubernetes.io/part-of") == "draguard", d["metadata"]


@needs_kubectl
def test_everything_rendered_is_accepted_by_a_real_api_server(tmp_path: Path) -> None:
    realapi.require()
    docs: list[dict[str, Any]] = []
    for mode in CERT_MODES:  # both sets in one API server: dry-run creates do not collide
        docs += render(tmp_path / mode, EVERYTHING_WITH[mode])
    # third-party kinds last, so their CRDs (applied just before) are surely served by then
    docs.sort(key=lambda d: "." in d["apiVersion"].split("/")[0] and not d["apiVersion"].endswith("k8s.io/v1"))
    cases = tmp_path / "rendered.yaml"
    cases.write_text(yaml.safe_dump_all(docs))
    run = realapi.run([cases], inventory=DATA, dry_run=True)
    assert len(run.verdicts) == len(docs), run.output
    refused = [(v.kind, v.name, v.code, v.message) for v in run.verdicts
               if not v.admitted and not (v.kind == "Namespace" and v.reason == "AlreadyExists")]
    assert refused == [], run.output
    kinds = {v.kind for v in run.verdicts if v.admitted}
    assert {"Deployment", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Certificate",
            "Issuer", "ServiceMonitor", "NetworkPolicy", "PodDisruptionBudget", "Lease", "Secret", "Role"} <= kinds


@needs_kubectl
def test_audit_component(tmp_path: Path) -> None:
    """Its own Deployment and service account: the webhook's RBAC stays read-only, and the audit's
    is exactly list+watch of what it re-evaluates, its reports, Events (create) and its Lease."""
    docs = render(tmp_path, ["audit", "policyreport-crds"])
    audit = next(d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "draguard-audit")
    pod = audit["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "draguard-audit"
    args = pod["containers"][0]["args"]
    assert args[0] == "serve"  # the image's entrypoint is `draguard`: the subcommand comes first
    assert {"--kube", "--audit", "--audit-lease=draguard-audit", "--health-port=8080"} <= set(args)
    role = next(r for r in by_kind(docs, "ClusterRole") if r["metadata"]["name"] == "draguard-audit")
    granted = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
               for v in rule["verbs"]}
    watched = {("resource.k8s.io", r) for r in ("deviceclasses", "resourceslices", "resourceclaims",
                                                "resourceclaimtemplates")}
    watched |= {("", "nodes"), ("", "pods"), ("batch", "jobs"), ("batch", "cronjobs")}
    watched |= {("apps", r) for r in ("deployments", "replicasets", "statefulsets", "daemonsets")}
    reports = {("wgpolicyk8s.io", r, v) for r in ("policyreports", "clusterpolicyreports")
               for v in ("get", "list", "create", "update", "delete")}
    assert granted == {(g, r, v) for g, r in watched for v in ("list", "watch")} | reports | {("", "events", "create")}
    lease_role = next(r for r in by_kind(docs, "Role") if r["metadata"]["name"] == "draguard-audit")
    assert lease_role["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                                    "resourceNames": ["draguard-audit"], "verbs": ["get", "update"]}]
    (webhook_role,) = [r for r in by_kind(docs, "ClusterRole") if r["metadata"]["name"] == "draguard"]
    assert all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in webhook_role["rules"])
    assert {c["metadata"]["name"] for c in by_kind(docs, "CustomResourceDefinition")} == {
        "policyreports.wgpolicyk8s.io", "clusterpolicyreports.wgpolicyk8s.io"}
    from draguard.server.audit import AUDIT_RESOURCES  # what the audit lists is what RBAC grants

    listed = {r.path.split("/")[2] if r.path.startswith("/apis/") else "" for r in AUDIT_RESOURCES}
    assert listed <= {g for g, _ in watched}
    assert {r.name for r in AUDIT_RESOURCES} <= {r for _, r in watched}
