"""Reading the cluster's DRA gates never holds the API server's whole ``/metrics`` page.

The 30-minute soak of the team's chaos harness showed the webhook's and the audit's RSS jumping by
7-9 MiB every 60 s, together: the cluster-version recheck (``RECHECK_SECONDS``) read kube-apiserver's
``/metrics`` — megabytes — whole, decoded it and split it into lines, for a handful of
``kubernetes_feature_enabled`` lines.  It is now read line by line as it arrives."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any, cast

import httpx
import pytest
from draguard.inventory import clusterversion
from draguard.inventory.kubeconfig import KubeConfig
from draguard.k8s.features import Target

GATES = (b'kubernetes_feature_enabled{name="DRAConsumableCapacity",stage="BETA"} 1\n'
         b'kubernetes_feature_enabled{name="DRAPartitionableDevices",stage="BETA"} 0\n')
FILLER = b'apiserver_request_duration_seconds_bucket{resource="resourceclaims",verb="LIST",le="0.05"} 12345\n'
CHUNK = 64 * 1024
PAGE_MB = 24


class _Chunks(httpx.AsyncByteStream):
    """The page as the API server sends it: chunks made before tracing starts (the test's own
    memory is not the reader's)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


def _page() -> list[bytes]:
    body = GATES + FILLER * (PAGE_MB * 1024 * 1024 // len(FILLER))
    return [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _page()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/version":
            return httpx.Response(200, json={"gitVersion": "v1.36.2"})
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, stream=_Chunks(chunks))

    monkeypatch.setattr(clusterversion, "make_client",
                        lambda config: httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="https://api"))


def test_the_gates_of_a_24_mib_metrics_page_are_read_in_a_fraction_of_its_size(served: Any) -> None:
    tracemalloc.start()
    try:
        found = asyncio.run(clusterversion.detect(cast(KubeConfig, object()), fallback=Target(), operator_gates=None,
                                                  timeout=60))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found.problem is None and found.gates_source == "metrics", (found.problem, found.gates_source)
    assert found.gates == {"DRAConsumableCapacity": True, "DRAPartitionableDevices": False}
    assert peak < 4 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB while reading a {PAGE_MB} MiB page"


def test_a_page_without_gates_keeps_the_defaults_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/version":
            return httpx.Response(200, json={"gitVersion": "v1.36.2"})
        return httpx.Response(200, stream=_Chunks([FILLER * 3]))

    monkeypatch.setattr(clusterversion, "make_client",
                        lambda config: httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="https://api"))
    found = asyncio.run(clusterversion.detect(cast(KubeConfig, object()), fallback=Target(), operator_gates=None))
    assert found.gates_source == "defaults (/metrics has no DRA gate)" and found.gates == {}
