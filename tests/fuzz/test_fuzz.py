"""The fuzz job: generated hostile inputs through every door; 0 exceptions, 0 5xx, stable answers.

By default (``make test``) a seeded subset of a few thousand inputs runs in well under 20 s;
``make fuzz`` sets ``DRAGUARD_FUZZ=full`` for the 100,000+ input run and writes its figures to
``DRAGUARD_FUZZ_RESULTS`` (a JSON file).  ``DRAGUARD_FUZZ_SEED`` changes the seed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from draguard.inventory import StaticInventory
from draguard.k8s.decode import decode_bytes
from draguard.review.pipeline import ReviewOptions, review_documents
from draguard.server.state import ServerState
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from server.conftest import Served, client_context

from fuzz import generate as gen
from fuzz import harness

FULL = os.environ.get("DRAGUARD_FUZZ") == "full"
SEED = int(os.environ.get("DRAGUARD_FUZZ_SEED", "20261130"))
COUNTS = ({"pipeline": 40_000, "cel": 15_000, "https": 48_000, "hypothesis": 2_000} if FULL
          else {"pipeline": 500, "cel": 1_500, "https": 500, "hypothesis": 200})
RESULTS: dict[str, Any] = {}


def _record(name: str, stats: harness.Stats, seconds: float) -> None:
    RESULTS[name] = {**stats.figures(), "seconds": round(seconds, 1)}
    out = os.environ.get("DRAGUARD_FUZZ_RESULTS")
    if out:
        Path(out).write_text(json.dumps(RESULTS, indent=2) + "\n")
    if FULL:
        print(f"\n[fuzz] {name}: {json.dumps(RESULTS[name])}")


def _assert_clean(stats: harness.Stats) -> None:
    assert (stats.exceptions, stats.server_errors, stats.malformed, stats.nondeterministic) == (0, 0, 0, 0), \
        "\n\n".join(stats.failures)


@pytest.fixture(scope="module")
def inventory() -> Any:
    return harness.inventory_snapshot()


def test_pipeline(inventory: Any) -> None:
    started = time.perf_counter()
    stats = harness.pipeline(SEED, COUNTS["pipeline"], inventory)
    _record("pipeline", stats, time.perf_counter() - started)
    _assert_clean(stats)
    assert stats.total == COUNTS["pipeline"]


def test_cel(inventory: Any) -> None:
    started = time.perf_counter()
    stats = harness.cel(SEED, COUNTS["cel"], inventory)
    _record("cel", stats, time.perf_counter() - started)
    _assert_clean(stats)


def test_https(serve: Callable[..., Served]) -> None:
    served = serve(ServerState(inventory=StaticInventory(gen.INVENTORY_PATHS)))

    def client() -> httpx.Client:
        return httpx.Client(base_url=served.url, verify=client_context(served.ca), timeout=30.0)

    started = time.perf_counter()
    stats = harness.https(client, SEED, COUNTS["https"], workers=4, depths=gen.DEEP if FULL else gen.SHALLOW)
    _record("https", stats, time.perf_counter() - started)
    _assert_clean(stats)
    assert stats.statuses[200] > 0 and stats.statuses[400] > 0


# hypothesis: its own shrinking search over free-form documents, in the lint door
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=40,
)
_documents = st.one_of(
    st.fixed_dictionaries({"apiVersion": st.sampled_from(["resource.k8s.io/v1", "resource.k8s.io/v1beta2", "v1"]),
                           "kind": st.sampled_from(["ResourceClaim", "ResourceClaimTemplate", "ResourceSlice",
                                                    "DeviceClass", "Node", "List"]),
                           "metadata": _json, "spec": _json, "items": _json}),
    st.sampled_from(gen.SEEDS).flatmap(lambda s: st.just(s) | _json.map(lambda v: {**s, "spec": v})),
)
_HYPOTHESIS_INVENTORY = harness.inventory_snapshot()


@seed(SEED)
@settings(max_examples=COUNTS["hypothesis"], deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_documents, st.binary(max_size=40))
def test_hypothesis_documents_through_lint(document: dict[str, Any], noise: bytes) -> None:
    body = gen.json_bytes(document) + (b"\n---\n" + noise if noise else b"")
    decoded = decode_bytes(body)
    review = review_documents(decoded.documents, inventory=_HYPOTHESIS_INVENTORY,
                              options=ReviewOptions(show_mutations=True), decode_findings=decoded.findings)
    assert harness.render(review, "json") == harness.render(
        review_documents(decode_bytes(body).documents, inventory=_HYPOTHESIS_INVENTORY,
                         options=ReviewOptions(show_mutations=True), decode_findings=decode_bytes(body).findings),
        "json")
