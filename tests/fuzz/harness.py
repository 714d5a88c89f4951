"""Drive generated inputs through each door and check what comes out.

Targets: decode → validation → CEL → satisfiability in process (``review_documents`` and
``review_admission``), CEL compile/evaluate on every device of the demo inventory, and
``/validate``, ``/mutate`` and ``/lint`` over real HTTPS.  Oracles: no exception escapes, no
HTTP status >= 500, every AdmissionResponse well-formed, and the same input gives the same
output (each input is run twice; timeouts — answers that depend on load — are the only
exception).  Failures are collected with the ``(seed, i)`` that reproduces them.
"""

from __future__ import annotations

import base64
import json
import random
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
from draguard.cel import CompileFailure, compile_selector
from draguard.inventory import Inventory, StaticInventory
from draguard.k8s.decode import decode_bytes
from draguard.report.render import render
from draguard.review.pipeline import ReviewOptions, review_admission, review_documents

from fuzz import generate as gen

WARNING_LIMIT = 120
TIMEOUT_MARKERS = ("did not finish within", "deadline", "budget ran out")


@dataclass
class Stats:
    """What one fuzz run saw; ``failures`` hold reproducers (capped)."""

    inputs: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    exceptions: int = 0
    server_errors: int = 0
    malformed: int = 0
    nondeterministic: int = 0
    failures: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        if len(self.failures) < 30:
            self.failures.append(what)

    @property
    def total(self) -> int:
        return sum(self.inputs.values())

    def merge(self, other: Stats) -> None:
        self.inputs.update(other.inputs)
        self.statuses.update(other.statuses)
        self.exceptions += other.exceptions
        self.server_errors += other.server_errors
        self.malformed += other.malformed
        self.nondeterministic += other.nondeterministic
        for f in other.failures:
            self.fail(f)

    def figures(self) -> dict[str, Any]:
        return {"inputs": self.total, "by_target": dict(sorted(self.inputs.items())),
                "exceptions": self.exceptions, "responses_5xx": self.server_errors,
                "malformed_responses": self.malformed, "nondeterministic": self.nondeterministic,
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())}}


def _stable(review: Any) -> str:
    return render(review, "json")


def _timed_out(text: str) -> bool:
    return any(marker in text for marker in TIMEOUT_MARKERS)


# ---------------------------------------------------------------------------- in process
def pipeline(seed: int, count: int, inventory: Inventory) -> Stats:
    """decode → validate → CEL → satisfiability for mutated bytes (lint) and objects (admission)."""
    stats = Stats()
    options = ReviewOptions(show_mutations=True)
    admission = ReviewOptions(admission=True, mutate=True)
    for i, rng in gen.inputs(seed, count):
        target = "pipeline.lint" if i % 2 == 0 else "pipeline.admission"
        stats.inputs[target] += 1
        try:
            if target == "pipeline.lint":
                body = gen.encode(gen.object_input(rng, gen.DEEP), rng)
                outputs = []
                for _ in range(2):
                    decoded = decode_bytes(body, source="fuzz.yaml")
                    review = review_documents(decoded.documents, inventory=inventory, options=options,
                                              decode_findings=decoded.findings)
                    outputs.append(_stable(review))
            else:
                obj = gen.object_input(rng, gen.DEEP)
                old = gen.mutate_object(obj, rng, 1) if isinstance(obj, dict) and rng.random() < 0.3 else None
                kind = obj.get("kind") if isinstance(obj, dict) and isinstance(obj.get("kind"), str) else "ResourceClaim"
                outputs = []
                for _ in range(2):
                    result = review_admission(kind=kind, operation="UPDATE" if old else "CREATE",
                                              obj=obj if isinstance(obj, dict) else None, old_obj=old,
                                              namespace="default", inventory=inventory, inventory_problem=None,
                                              options=admission)
                    outputs.append(json.dumps([(f.reason, f.field, f.message) for f in result.findings])
                                   + json.dumps(result.patch))
        except Exception:
            stats.exceptions += 1
            stats.fail(f"{target} seed={seed} i={i}: {traceback.format_exc(limit=-3)}")
            continue
        if outputs[0] != outputs[1] and not _timed_out(outputs[0] + outputs[1]):
            stats.nondeterministic += 1
            stats.fail(f"{target} seed={seed} i={i}: two runs differ")
    return stats


def cel(seed: int, count: int, inventory: Inventory) -> Stats:
    """Compile generated expressions and evaluate each on every device (never raises)."""
    stats = Stats()
    devices = [d.cel for d in inventory.devices if d.cel is not None]
    for i, rng in gen.inputs(seed, count):
        stats.inputs["cel"] += 1
        expression = gen.hostile_cel(rng)
        try:
            results = []
            for _ in range(2):
                compiled = compile_selector(expression)
                if isinstance(compiled, CompileFailure):
                    results.append(repr(compiled))
                else:
                    results.append(repr([compiled.evaluate(d) for d in devices]))
        except Exception:
            stats.exceptions += 1
            stats.fail(f"cel seed={seed} i={i} {expression!r}: {traceback.format_exc(limit=-3)}")
            continue
        if results[0] != results[1]:
            stats.nondeterministic += 1
            stats.fail(f"cel seed={seed} i={i} {expression!r}: two runs differ")
    return stats


# ---------------------------------------------------------------------------- over HTTPS
def check_admission_response(payload: Any, uid: str, route: str) -> str | None:
    """Why ``payload`` is not a well-formed AdmissionReview answer, or None."""
    if not isinstance(payload, dict) or payload.get("kind") != "AdmissionReview":
        return "not an AdmissionReview"
    response = payload.get("response")
    if not isinstance(response, dict) or response.get("uid") != uid:
        return "uid not echoed"
    if not isinstance(response.get("allowed"), bool):
        return "allowed is not a boolean"
    if route == "/mutate" and not response["allowed"]:
        return "/mutate denied"
    warnings = response.get("warnings", [])
    if not isinstance(warnings, list) or any(not isinstance(w, str) or len(w) > WARNING_LIMIT for w in warnings):
        return "warnings not a list of short strings"
    if not response["allowed"]:
        status = response.get("status")
        if not isinstance(status, dict) or status.get("code") != 422 or not status.get("message"):
            return "denial without a 422 status and message"
    if "patch" in response:
        if response.get("patchType") != "JSONPatch":
            return "patch without patchType JSONPatch"
        ops = json.loads(base64.b64decode(response["patch"]))
        if not isinstance(ops, list) or any(op.get("op") != "add" for op in ops):
            return "patch is not a list of add operations"
    return None


def _http_case(rng: random.Random, i: int, depths: tuple[int, ...]) -> tuple[str, bytes, str]:
    route = ("/validate", "/mutate", "/lint")[i % 3]
    obj = gen.object_input(rng, depths)
    if route == "/lint":
        return route, gen.encode(obj, rng), ""
    uid = f"fuzz-{i}" if rng.random() < 0.9 else rng.choice(["\ud800", "x" * 5000, "é"])
    review = gen.mutate_envelope(gen.admission_review(obj, rng, uid), rng)
    request = review.get("request") if isinstance(review, dict) else None
    sent_uid = request.get("uid") if isinstance(request, dict) else None  # the envelope may be mutated
    return route, gen.json_bytes(review), sent_uid if isinstance(sent_uid, str) else ""


def _post(client: httpx.Client, route: str, body: bytes) -> httpx.Response:
    return client.post(route, content=body, headers={"Content-Type": "application/json"})


def https(client_factory: Callable[[], httpx.Client], seed: int, count: int, *, workers: int = 4,
          depths: tuple[int, ...] = gen.SHALLOW) -> Stats:
    """``count`` requests spread over ``workers`` keep-alive clients; every 4th sent twice."""
    shards = [range(w, count, workers) for w in range(workers)]

    def run(indices: range) -> Stats:
        stats = Stats()
        with client_factory() as client:
            for i in indices:
                rng = random.Random(seed * 1_000_003 + i)
                route, body, uid = _http_case(rng, i, depths)
                stats.inputs["https" + route] += 1
                try:
                    first = _post(client, route, body)
                    second = _post(client, route, body) if i % 4 == 0 else None
                except httpx.HTTPError as exc:
                    stats.exceptions += 1
                    stats.fail(f"https{route} seed={seed} i={i}: {type(exc).__name__}: {exc}")
                    continue
                stats.statuses[first.status_code] += 1
                if first.status_code >= 500:
                    stats.server_errors += 1
                    stats.fail(f"https{route} seed={seed} i={i}: {first.status_code} {first.text[:300]}")
                    continue
                problem = _check_http(route, first, uid)
                if problem:
                    stats.malformed += 1
                    stats.fail(f"https{route} seed={seed} i={i}: {problem}: {first.text[:300]}")
                differ = second is not None and (second.status_code, second.content) != (first.status_code, first.content)
                busy = second is not None and 429 in (first.status_code, second.status_code)  # /lint's concurrency limit
                if differ and second is not None and not busy and not _timed_out(first.text + second.text):
                    stats.nondeterministic += 1
                    stats.fail(f"https{route} seed={seed} i={i}: two answers differ")
        return stats

    total = Stats()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(run, shards):
            total.merge(part)
    return total


def _check_http(route: str, response: httpx.Response, uid: str) -> str | None:
    try:
        payload = json.loads(response.content)
    except ValueError:
        return "body is not JSON"
    if response.status_code != 200:
        if not (isinstance(payload, dict) and payload.get("kind") == "Status" and payload.get("reason")):
            return "error without a Status reason"
        return None
    if route == "/lint":
        ok = isinstance(payload, dict) and isinstance(payload.get("findings"), list) and "summary" in payload
        return None if ok else "lint answer without findings and summary"
    return check_admission_response(payload, uid, route)


def inventory_snapshot() -> Inventory:
    snapshot = StaticInventory(gen.INVENTORY_PATHS).snapshot()
    assert snapshot is not None
    return snapshot


def all_devices(inventory: Inventory) -> Iterator[Any]:
    yield from inventory.devices
