"""The webhook over a live inventory that goes stale (issue #36): no denial from a stale picture,
every answer says so, and ``/readyz``, the metrics and the log say it at once.

The fake API server goes away (open watches cut, requests 503) as one API server of an HA
control plane does while another keeps serving clients: claims still arrive, and a claim that
was provably unsatisfiable a moment ago is now allowed with ``SatisfiabilityUnknown`` naming the
stale resource and since when — until the API server is back and denials resume.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from draguard.certs import generate_bundle, write_bundle
from draguard.inventory.kube import DEVICE_RESOURCES, KubeInventory
from draguard.inventory.kubeconfig import load_kube_config
from draguard.server.state import ServerState
from fakeapi import FakeCluster, serve_fake_api
from kube.helpers import wait_for

from server.conftest import DATA, Served
from server.reviews import admission_review, claim, device_class

STALE_AFTER = 0.5


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[FakeCluster, Path]]:
    paths = write_bundle(generate_bundle("kubernetes", "default", extra_sans=["127.0.0.1"]), tmp_path / "api")
    cluster = FakeCluster(token="t0ken")
    with serve_fake_api(cluster, cert=paths["cert"], key=paths["key"]) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": server.url, "certificate-authority": str(paths["ca"])}}],
            "users": [{"name": "u", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        }))
        resource = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "Node": "nodes"}
        for doc in yaml.safe_load_all((DATA / "inventory.yaml").read_text()):
            cluster.put(resource[doc["kind"]], doc)
        yield cluster, kubeconfig


@pytest.fixture
def served(serve: Callable[..., Served], api: tuple[FakeCluster, Path]) -> tuple[Served, FakeCluster, KubeInventory]:
    cluster, kubeconfig = api
    live = KubeInventory(load_kube_config(kubeconfig), resources=DEVICE_RESOURCES, debounce=0.02,
                         backoff_initial=0.02, backoff_max=0.1, stale_after=STALE_AFTER)
    state = ServerState(inventory=live)
    state.background.append(live.run)
    s = serve(state)
    wait_for(lambda: s.client.get("/readyz").status_code == 200, what="ready")
    wait_for(lambda: all(w["connected"] for w in live.watch_health().values()), what="every watch open")
    return s, cluster, live


def validate(s: Served, obj: dict[str, object]) -> dict[str, object]:
    answer: dict[str, object] = s.client.post("/validate", json=admission_review(obj)).json()["response"]
    return answer


def metric(text: str, series: str) -> float | None:
    found = re.search(rf"^{re.escape(series)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else None


def test_fresh_picture_denies_and_metrics_say_current(served: tuple[Served, FakeCluster, KubeInventory]) -> None:
    s, _, _ = served
    big = validate(s, claim("big", memory="50Gi"))
    assert big["allowed"] is False
    assert big["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"  # type: ignore[index]
    assert not any("inventory stale" in w for w in validate(s, device_class("gpu-2")).get("warnings", []))  # type: ignore[attr-defined]
    text = s.client.get("/metrics").text
    assert metric(text, "draguard_inventory_stale") == 0.0
    assert metric(text, 'draguard_watch_connected{resource="resourceslices"}') == 1.0
    age = metric(text, 'draguard_watch_last_contact_age_seconds{resource="resourceslices"}')
    assert age is not None and age < 60
    assert "draguard_stale_decisions_total{" not in text
    ready = s.client.get("/readyz").json()["inventory"]
    assert ready["stale"] is False and ready["problem"] is None


def test_stale_picture_never_denies_and_every_answer_says_so(
    served: tuple[Served, FakeCluster, KubeInventory], caplog: pytest.LogCaptureFixture
) -> None:
    s, cluster, _ = served
    caplog.set_level(logging.WARNING, logger="draguard.inventory")
    cluster.go_down()
    wait_for(lambda: s.client.get("/readyz").json()["inventory"]["stale"], timeout=STALE_AFTER + 10, what="stale")
    # the provably unsatisfiable claim: allowed, with the stale resource and since when
    big = validate(s, claim("big", memory="50Gi"))
    assert big["allowed"] is True
    warning = big["warnings"][0]  # type: ignore[index]
    assert re.match(r"SatisfiabilityUnknown: satisfiability not checked: inventory stale since \d\d:\d\d:\d\dZ: "
                    r"the (deviceclasses|resourceslices|nodes|devicetaintrules) watch failed", warning), warning
    assert sum("inventory stale since" in w for w in big["warnings"]) == 1  # type: ignore[attr-defined]
    # an answer with no satisfiability question carries the warning too
    dc = validate(s, device_class("gpu-2"))
    assert dc["allowed"] is True and dc["warnings"][0].startswith("draguard: inventory stale since ")  # type: ignore[index]
    # readiness is kept (an API-server hiccup must not empty the Service); the detail says why
    ready = s.client.get("/readyz")
    assert ready.status_code == 200
    inventory = ready.json()["inventory"]
    assert inventory["stale"] is True and inventory["problem"].startswith("inventory stale since ")
    assert inventory["staleAfterSeconds"] == STALE_AFTER
    assert not inventory["watches"]["resourceslices"]["connected"]
    assert "503" in inventory["watches"]["resourceslices"]["error"]
    text = s.client.get("/metrics").text
    assert metric(text, "draguard_inventory_stale") == 1.0
    assert metric(text, 'draguard_watch_connected{resource="resourceslices"}') == 0.0
    allowed = metric(text, 'draguard_stale_decisions_total{decision="allowed",reason="SatisfiabilityUnknown"}')
    assert allowed is not None and allowed >= 1
    assert 'draguard_stale_decisions_total{decision="denied"' not in text
    # the log says it at once (the watchdog's next look), as an error
    def stale_lines() -> list[logging.LogRecord]:
        return [r for r in caplog.records if '"msg": "inventory stale"' in r.getMessage()]

    wait_for(stale_lines, timeout=5, what="the stale log line")
    line = stale_lines()[0]
    assert line.levelno == logging.ERROR
    assert re.search(r"inventory stale since \d\d:\d\d:\d\dZ: the (deviceclasses|resourceslices|nodes|devicetaintrules) watch failed",
                     line.getMessage()), line.getMessage()
    # the API server returns: current again, and the denial is back
    cluster.come_back()
    wait_for(lambda: not s.client.get("/readyz").json()["inventory"]["stale"], timeout=10, what="current again")
    big = validate(s, claim("big", memory="50Gi"))
    assert big["allowed"] is False
    assert not any("inventory stale" in w for w in big.get("warnings", []))  # type: ignore[attr-defined]
    wait_for(lambda: any('"inventory current again"' in r.getMessage() for r in caplog.records), timeout=5,
             what="the log line of the return")
    assert len(stale_lines()) == 1  # once for the outage, not once per review or per look
    assert metric(s.client.get("/metrics").text, "draguard_inventory_stale") == 0.0
