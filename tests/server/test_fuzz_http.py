"""Fuzzing the real HTTPS server: no body, however broken, yields a 500 or a hang.

A seeded generator (reproducible, bounded) mutates real AdmissionReviews — any JSON value at
any path, truncated bodies, wrong types for the envelope — and posts them to /validate,
/mutate and /lint.  Every answer must be 200 with an AdmissionReview (or findings), or a 4xx
with a JSON reason.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

from draguard.inventory import StaticInventory
from draguard.server.state import ServerState

from server.conftest import Served
from server.reviews import admission_review, claim

SEED = 20261129
CASES = 150


def _values(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(9 if depth < 2 else 6)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, -1, 2**63, 2**70, 3])
    if choice == 3:
        return rng.choice([1.5, -0.0, 1e308])
    if choice == 4:
        return rng.choice(["", "x", "5Gi", "-1", "\u0000", "é" * 3, "a" * 300, '"', "device.driver =="])
    if choice == 5:
        return rng.choice([[], {}])
    if choice == 6:
        return [_values(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {rng.choice(["kind", "name", "x", "spec", "devices"]): _values(rng, depth + 1) for _ in range(2)}


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _mutate(doc: dict[str, Any], rng: random.Random) -> bytes:
    out = copy.deepcopy(doc)
    path = rng.choice(_paths(out))
    value = _values(rng)
    if not path:
        out = value
    else:
        target = out
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    body = json.dumps(out).encode()
    if rng.random() < 0.1:
        body = body[: rng.randrange(len(body) + 1)]
    return body


def test_random_admission_bodies_never_fail_the_server(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    served = serve(ServerState(inventory=static_inventory))
    rng = random.Random(SEED)
    base = admission_review(claim("fuzz", memory="8Gi"))
    seen: dict[int, int] = {}
    for _ in range(CASES):
        route = rng.choice(["/validate", "/mutate", "/lint"])
        body = _mutate(base, rng) if route != "/lint" else _mutate(claim("fuzz", memory="8Gi"), rng)
        response = served.client.post(route, content=body, headers={"Content-Type": "application/json"})
        seen[response.status_code] = seen.get(response.status_code, 0) + 1
        assert response.status_code in (200, 400, 413, 415, 422), (route, body[:300], response.text[:300])
        payload = response.json()
        if response.status_code == 200 and route != "/lint":
            assert payload["kind"] == "AdmissionReview" and "response" in payload
        if response.status_code == 200 and route == "/lint":
            assert "findings" in payload
    assert seen.get(200, 0) > 0 and seen.get(400, 0) > 0
