"""The kustomize base hangs together: names, ports, paths, SANs, RBAC, security settings; and the
Dockerfile has the structure the deployment relies on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from draguard.certs import describe_certificate, generate_bundle, patch_ca_bundle
from draguard.inventory.kube import RESOURCES
from draguard.server.references import PLURALS

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests"
SKIP_LABEL = "admission.draguard.dev/skip"


def load_base() -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    docs: list[dict[str, Any]] = []
    for name in kustomization["resources"]:
        docs.extend(d for d in yaml.safe_load_all((MANIFESTS / name).read_text()) if d)
    return docs


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    return load_base()


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]


def webhooks(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(d["kind"], h) for d in docs if d["kind"].endswith("WebhookConfiguration") for h in d["webhooks"]]


def test_every_listed_resource_file_exists_and_parses(docs: list[dict[str, Any]]) -> None:
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted([
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment",
        "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
    ])
    listed = set(yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())["resources"])
    assert listed == {p.name for p in MANIFESTS.glob("*.yaml")} - {"kustomization.yaml"}


def test_service_deployment_and_webhooks_line_up(docs: list[dict[str, Any]]) -> None:
    ns = one(docs, "Namespace")["metadata"]["name"]
    svc = one(docs, "Service")
    deploy = one(docs, "Deployment")
    pod = deploy["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert svc["metadata"]["namespace"] == deploy["metadata"]["namespace"] == ns
    # selector → pod labels
    for k, v in svc["spec"]["selector"].items():
        assert pod["metadata"]["labels"][k] == v
    assert deploy["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    # 443 → named port → 8443 → --port
    port = svc["spec"]["ports"][0]
    assert port["port"] == 443
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert named[port["targetPort"]] == 8443
    assert "--port=8443" in container["args"]
    assert container["args"][0] == "serve"  # the image's entrypoint is `draguard`
    # every webhook calls this Service on 443 at a route the server has
    for kind, hook in webhooks(docs):
        ref = hook["clientConfig"]["service"]
        assert (ref["name"], ref["namespace"], ref.get("port", 443)) == (svc["metadata"]["name"], ns, 443)
        assert ref["path"] == ("/mutate" if kind.startswith("Mutating") else "/validate")
        assert "caBundle" in hook["clientConfig"]


def test_webhook_settings(docs: list[dict[str, Any]]) -> None:
    assert one(docs, "Namespace")["metadata"]["labels"][SKIP_LABEL] == "true"
    seen: dict[str, dict[str, Any]] = {}  # validating webhooks by resource
    for kind, hook in webhooks(docs):
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["sideEffects"] == "None"
        assert hook["timeoutSeconds"] == 5
        assert hook["failurePolicy"] in ("Fail", "Ignore")
        assert len(hook["name"].split(".")) >= 3
        scopes = {rule["scope"] for rule in hook["rules"]}
        if scopes == {"Namespaced"}:
            expressions = hook["namespaceSelector"]["matchExpressions"]
            assert {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]} in expressions
            # draguard's own namespace is skipped by a label it carries, so an overlay's
            # `namespace:` keeps the exclusion
            assert {"key": SKIP_LABEL, "operator": "DoesNotExist"} in expressions
        else:  # cluster-scoped: a namespaceSelector would not apply; unchanged specs are skipped
            assert scopes == {"Cluster"} and "namespaceSelector" not in hook
            assert [c["name"] for c in hook["matchConditions"]] == ["spec-changed"]
        if hook["name"] == "workloads.validate.draguard.dev":
            assert [c["name"] for c in hook["matchConditions"]] == ["template-changed", "uses-dra"]
        for rule in hook["rules"]:
            assert rule["apiGroups"] in (["resource.k8s.io"], [""], ["apps"], ["batch"])
            for res in rule["resources"]:
                if kind.startswith("Mutating"):
                    continue
                seen[res] = {"ops": set(rule["operations"]), "policy": hook["failurePolicy"], "name": hook["name"]}
    assert seen["resourceclaims"]["policy"] == "Fail"
    assert seen["resourceslices"]["policy"] == "Ignore"
    assert seen["pods"]["policy"] == "Ignore"  # an outage must never stop the cluster's pods
    validate_ops = {r: s["ops"] for r, s in seen.items()}
    workloads = ("replicationcontrollers", "podtemplates", "deployments", "replicasets", "statefulsets",
                 "daemonsets", "jobs", "cronjobs")
    assert validate_ops == {
        "resourceclaims": {"CREATE"}, "resourceclaimtemplates": {"CREATE"},
        "resourceslices": {"CREATE", "UPDATE"}, "deviceclasses": {"CREATE", "UPDATE"},
        "pods": {"CREATE"}, **{w: {"CREATE", "UPDATE"} for w in workloads},
    }
    assert {seen[w]["policy"] for w in workloads} == {"Ignore"}
    mutating = [h for k, h in webhooks(docs) if k.startswith("Mutating")]
    assert len(mutating) == 1 and mutating[0]["failurePolicy"] == "Ignore"
    # every failurePolicy choice is explained in a comment
    text = (MANIFESTS / "webhooks.yaml").read_text()
    for word in ("claims", "ResourceSlices", "DeviceClasses", "mutation", "workloads"):
        assert re.search(rf"#.*{word}.*: (Fail|Ignore)\.", text), word


def test_certificate_sans_cover_the_service(docs: list[dict[str, Any]]) -> None:
    svc = one(docs, "Service")["metadata"]
    bundle = generate_bundle(svc["name"], svc["namespace"])
    names = describe_certificate(bundle.cert)["names"]
    assert f"{svc['name']}.{svc['namespace']}.svc" in names  # what the API server dials
    text = (MANIFESTS / "webhooks.yaml").read_text()
    patched, count = patch_ca_bundle(text, bundle.ca_bundle_b64)
    assert count == len(webhooks(docs))
    assert patched.count(bundle.ca_bundle_b64) == count
    assert "# failurePolicy, per webhook" in patched


def test_rbac_covers_exactly_what_the_watcher_lists_and_the_reference_lookup_gets(docs: list[dict[str, Any]]) -> None:
    role = one(docs, "ClusterRole")
    granted: set[tuple[str, str, str]] = set()
    urls: set[tuple[str, str]] = set()
    for rule in role["rules"]:
        if "nonResourceURLs" in rule:  # /version and /metrics: the cluster's version and gates
            urls.update((u, v) for u in rule["nonResourceURLs"] for v in rule["verbs"])
            continue
        for g in rule["apiGroups"]:
            for r in rule["resources"]:
                for v in rule["verbs"]:
                    granted.add((g, r, v))
    needed = set()
    for res in RESOURCES:
        group = "" if res.path.startswith("/api/v1") else res.path.split("/")[2]
        for verb in ("list", "watch") if res.held else ("get", "list", "watch"):
            needed.add((group, res.name, verb))
    # the webhook GETs one claim or template a pod names that the watch has not delivered yet
    needed |= {("resource.k8s.io", plural, "get") for plural in PLURALS.values()}
    # and LISTs the pods of the review's namespace that share a claim with the reviewed pod (sharing.py)
    needed.add(("", "pods", "list"))
    assert granted == needed  # nothing more
    assert urls == {("/version", "get"), ("/metrics", "get")}  # read by app/inventory/clusterversion.py
    binding = one(docs, "ClusterRoleBinding")
    sa = one(docs, "ServiceAccount")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                    "namespace": sa["metadata"]["namespace"]}]
    deploy = one(docs, "Deployment")
    assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == sa["metadata"]["name"]
    assert "--kube" in deploy["spec"]["template"]["spec"]["containers"][0]["args"]


def test_deployment_is_hardened_and_available(docs: list[dict[str, Any]]) -> None:
    deploy = one(docs, "Deployment")
    spec = deploy["spec"]
    pod = spec["template"]["spec"]
    c = pod["containers"][0]
    assert spec["replicas"] == 2
    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"]["labelSelector"]["matchLabels"] == spec["selector"]["matchLabels"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= c["resources"]["requests"].keys()
    assert c["resources"]["limits"].keys() == {"memory"}  # no CPU limit: throttling stalls reviews
    assert pod["priorityClassName"] == "system-cluster-critical"
    # drain: the preStop pause plus the longest in-flight review (the webhook timeout) fit the grace
    pause = int(c["lifecycle"]["preStop"]["exec"]["command"][1])
    longest_review = max(h["timeoutSeconds"] for _, h in webhooks(docs))
    assert pause + longest_review < pod["terminationGracePeriodSeconds"]
    env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for e in c["env"]}
    assert env["POD_NAME"] == "metadata.name" and env["POD_NAMESPACE"] == "metadata.namespace"
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "https", "scheme": "HTTPS"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "https", "scheme": "HTTPS"}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    tls = volumes[mounts["tls"]["name"]]["secret"]["secretName"]
    assert tls == "draguard-tls"
    certs_dir = mounts["tls"]["mountPath"]
    assert f"--tls-cert={certs_dir}/tls.crt" in c["args"] and f"--tls-key={certs_dir}/tls.key" in c["args"]
    deadline = next(float(a.split("=")[1]) for a in c["args"] if a.startswith("--deadline-seconds="))
    assert deadline < min(h["timeoutSeconds"] for _, h in webhooks(docs))
    pdb = yaml.safe_load((MANIFESTS / "components" / "high-availability" / "pdb.yaml").read_text())
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == spec["selector"]["matchLabels"]
