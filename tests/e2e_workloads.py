"""e2e-kube with draguard's pod and workload webhook too: the harness registers claim rules only.

Run as ``python tests/e2e_workloads.py <e2e-kube arguments>`` (tests/realapi.py does, with
``workloads=True``).  It loads ``scripts/e2e-kube.py`` as a module and, before the harness
registers its own webhook, registers the ``workloads.validate.draguard.dev`` entry of
``manifests/webhooks.yaml`` — rules, ``matchConditions`` and ``failurePolicy`` as shipped — pointed at
the harness's draguard.  So a test sees exactly what a cluster with the shipped manifests sees: only
pods that use DRA reach draguard, and its denials come back through the real API server.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parents[1]
HARNESS = PROJECT / "scripts" / "e2e-kube.py"
WORKLOADS_HOOK = "workloads.validate.draguard.dev"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("e2e_kube", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shipped_entry() -> dict[str, Any]:
    """The pods-and-workloads webhook entry exactly as manifests/webhooks.yaml ships it."""
    for doc in yaml.safe_load_all((PROJECT / "manifests" / "webhooks.yaml").read_text()):
        if doc and doc.get("kind") == "ValidatingWebhookConfiguration":
            for hook in doc["webhooks"]:
                if hook["name"] == WORKLOADS_HOOK:
                    return dict(hook)
    raise SystemExit(f"no {WORKLOADS_HOOK} in manifests/webhooks.yaml")


def main(argv: list[str]) -> int:
    ek = _load()
    original = ek.Harness.register_webhooks

    def register_webhooks(self: Any) -> None:
        import base64

        with open(self.webhook_ca, "rb") as f:
            ca_bundle = base64.b64encode(f.read()).decode()
        hook = shipped_entry()
        hook["clientConfig"] = {"url": f"https://127.0.0.1:{self.webhook_port}/validate", "caBundle": ca_bundle}
        self.post_config("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "draguard-workloads"}, "webhooks": [hook]})
        original(self)

    ek.Harness.register_webhooks = register_webhooks
    return int(ek.main(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
