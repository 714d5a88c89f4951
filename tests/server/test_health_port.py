"""The plain-HTTP health door serves probes and nothing else."""

from __future__ import annotations

import httpx
from draguard.inventory import StaticInventory
from draguard.server.app import create_app
from draguard.server.health import health_only
from draguard.server.runner import BackgroundServer
from draguard.server.state import ServerState

from server.reviews import admission_review, claim


def test_health_paths_over_plain_http_and_nothing_else(static_inventory: StaticInventory) -> None:
    app = create_app(ServerState(inventory=static_inventory))
    with BackgroundServer(health_only(app), lifespan="off") as health, httpx.Client(base_url=health.url) as client:
        assert health.url.startswith("http://")
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code in (200, 503)
        assert "draguard" in client.get("/metrics").text
        refused = client.post("/validate", json=admission_review(claim("x")))
        assert refused.status_code == 404
        assert refused.json()["reason"] == "NotFound"
        assert client.post("/lint", content=b"kind: ResourceClaim").status_code == 404
        assert client.post("/healthz").status_code == 404
