"""The webhook's answer memo (app/server/answers.py): a hit answers exactly as a review would.

Every test compares the memo's answer with a fresh review of the same call (``review_call``, no
memo), so a key that leaves out something the answer depends on shows up as a difference.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from draguard.inventory import Inventory, StaticInventory, build_inventory
from draguard.k8s import BudgetExceeded, Finding, ObjectRef, Reason, Severity, budget_scope
from draguard.review import ObjectReview, ReviewOptions
from draguard.server import answers
from draguard.server.answers import AnswerMemo, answer_call, complete, memo_key
from draguard.server.state import ServerState
from draguard.server.webhook import AdmissionCall, Answer, parse_admission_review, review_call
from satisfy.dra_builders import dclass, device, node, rslice

from server.conftest import DATA, Served
from server.reviews import admission_review, claim, template

OPTIONS = ServerState().admission_options
VALIDATE = {"route": "validate"}


class Source:
    """An inventory source over one snapshot; ``problem`` settable."""

    synced = True

    def __init__(self, snapshot: Inventory | None, problem: str | None = None) -> None:
        self.snap = snapshot
        self.why = problem

    def snapshot(self) -> Inventory | None:
        return self.snap

    def problem(self) -> str | None:
        return self.why


def call_of(obj: dict[str, Any], **kw: Any) -> AdmissionCall:
    return parse_admission_review(json.dumps(admission_review(obj, **kw)).encode())


def memo_answer(memo: AnswerMemo, call: AdmissionCall, src: Any, route: Any = "validate",
                options: ReviewOptions = OPTIONS, generation: object = OPTIONS) -> Answer:
    return answer_call(memo, call, route, src, options, generation, size=1000)


def same_answer(a: Answer, b: Answer) -> None:
    """Equal in everything a caller sees, ``uid`` aside (each carries its own call's)."""
    ra, rb = dict(a.response), dict(b.response)
    ra.pop("uid"), rb.pop("uid")
    assert ra == rb
    assert (a.decision, a.reason, a.reasons, a.fail_open) == (b.decision, b.reason, b.reasons, b.fail_open)


@pytest.fixture
def src(static_inventory: StaticInventory) -> Source:
    return Source(static_inventory.snapshot())


def objects() -> list[dict[str, Any]]:
    """Allowed, warned, denied (unsatisfiable), an invalid request, and a template."""
    bad = claim("bad")
    bad["spec"]["devices"]["requests"][0]["exactly"]["count"] = 0
    return [claim("ok"), claim("defaulted", memory="5Gi"), claim("big", memory="50Gi"), bad,
            claim("missing-class", device_class="nope.example.com"), template("tpl", memory="50Gi")]


@pytest.mark.parametrize("route", ["validate", "mutate"])
def test_a_hit_answers_as_the_review_does_but_with_its_own_uid(src: Source, route: Any) -> None:
    memo = AnswerMemo()
    for obj in objects():
        first, second = call_of(obj), call_of(obj)
        assert first.uid != second.uid
        miss = memo_answer(memo, first, src, route)
        hits = memo.hits
        hit = memo_answer(memo, second, src, route)
        assert memo.hits == hits + 1, obj["metadata"]["name"]
        assert hit.response["uid"] == second.uid and miss.response["uid"] == first.uid
        same_answer(hit, review_call(second, route, src, OPTIONS))  # type: ignore[arg-type]
        same_answer(hit, miss)
    assert {memo_answer(memo, call_of(o), src).decision for o in objects()} == {"allowed", "denied"}


def test_replicas_differ_only_in_name_and_share_one_entry_with_their_own_names(src: Source) -> None:
    """Claims from one template, a Deployment's Pods: other name, generateName, uid, owner —
    one entry, and a denial names the object it answers."""
    memo = AnswerMemo()

    def replica(i: int) -> dict[str, Any]:
        obj = claim(f"trainer-{i}-gpu-x{i}z", memory="50Gi")
        obj["metadata"]["generateName"] = f"trainer-{i}-gpu-"
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": f"trainer-{i}",
                                               "uid": str(uuid.uuid4()), "controller": True}]
        return obj

    answers_seen = [memo_answer(memo, call_of(replica(i)), src) for i in range(5)]
    assert memo.hits == 4 and len(memo) == 1
    for i, got in enumerate(answers_seen):
        assert got.decision == "denied"
        assert f'"trainer-{i}-gpu-x{i}z" is invalid' in got.response["status"]["message"]
        assert got.response["status"]["details"]["name"] == f"trainer-{i}-gpu-x{i}z"
        same_answer(got, review_call(call_of(replica(i)), "validate", src, OPTIONS))


def test_a_remembered_denial_is_made_again_for_another_name_and_kept_for_the_same(src: Source) -> None:
    """The same object retried (same name) gets the denial made for it before, with its own uid;
    another replica's name a denial naming it; and back again, the first name's."""
    memo = AnswerMemo()
    names = ["trainer-a", "trainer-a", "trainer-a", "trainer-b", "trainer-a"]
    got = [memo_answer(memo, call_of(claim(n, memory="50Gi")), src) for n in names]
    assert memo.hits == 4 and len(memo) == 1
    for name, answer in zip(names, got, strict=True):
        assert answer.decision == "denied"
        assert answer.response["status"]["details"]["name"] == name
        same_answer(answer, review_call(call_of(claim(name, memory="50Gi")), "validate", src, OPTIONS))
    assert len({a.response["uid"] for a in got}) == len(got)
    assert got[2].response["status"] is got[1].response["status"]  # kept, not made again
    assert got[4].response["status"] is not got[1].response["status"]  # made again after trainer-b's


def test_an_answer_that_quotes_a_name_is_kept_under_that_name(src: Source) -> None:
    memo = AnswerMemo()
    call = call_of(claim("quoted"))
    key = memo_key(call, "validate", src.snapshot())  # type: ignore[arg-type]
    assert key is not None and key.names == ("quoted",)
    ref = ObjectRef(kind="ResourceClaim", namespace="default", name="quoted")
    quoting = ObjectReview(ref=ref, findings=[Finding.for_object(ref, Severity.WARNING, Reason.SATISFIABILITY_UNKNOWN,
                                                                 'claim "quoted" is odd')])
    memo.put(key, src.snap, OPTIONS, quoting, current=True)  # type: ignore[arg-type]
    remembered = memo.get(key, src.snap, OPTIONS)  # type: ignore[arg-type]
    assert remembered is not None and remembered.review is quoting
    other = memo_key(call_of(claim("another")), "validate", src.snapshot())  # type: ignore[arg-type]
    assert other is not None and other.digest == key.digest  # alike but for the name ...
    assert memo.get(other, src.snap, OPTIONS) is None  # type: ignore[arg-type]  # ... and not answered for it


def test_names_that_fail_their_checks_stay_in_the_key(src: Source) -> None:
    """An invalid name is reported (with its value), so it cannot be left out."""
    snap = src.snapshot()
    assert snap is not None
    good = memo_key(call_of(claim("good")), "validate", snap)
    bad = memo_key(call_of(claim("Bad_Name")), "validate", snap)
    assert good is not None and bad is not None and bad.names == () and bad.digest != good.digest
    memo = AnswerMemo()
    for name in ("Bad_Name", "Worse_Name"):
        obj = claim(name)
        same_answer(memo_answer(memo, call_of(obj), src), review_call(call_of(obj), "validate", src, OPTIONS))
    assert memo.hits == 0


VOLATILE_VALUES: dict[str, Callable[[random.Random], Any]] = {
    "uid": lambda r: str(uuid.UUID(int=r.getrandbits(128))),
    "resourceVersion": lambda r: str(r.randrange(10**9)),
    "creationTimestamp": lambda r: r.choice([None, f"2026-0{r.randrange(1, 9)}-01T00:00:00Z"]),
    "managedFields": lambda r: [{"manager": f"m{r.randrange(9)}", "operation": "Update", "fieldsV1": {"f:spec": {}}}],
}


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
def test_the_answer_never_depends_on_the_volatile_metadata_left_out(src: Source, operation: str) -> None:
    """Left out of the key, so they must not matter: random well-typed values, same answer, same key
    (on UPDATE ``uid`` stays in the key: changing it is an error)."""
    rng = random.Random(21)
    snap = src.snapshot()
    assert snap is not None
    assert set(VOLATILE_VALUES) == set(answers.VOLATILE_METADATA)
    for obj in objects():
        base = review_call(call_of(obj, operation=operation, old=obj if operation == "UPDATE" else None),
                           "validate", src, OPTIONS)
        base_key = memo_key(call_of(obj, operation=operation, old=obj if operation == "UPDATE" else None),
                            "validate", snap)
        for _ in range(4):
            varied, old = copy.deepcopy(obj), copy.deepcopy(obj)
            for field, make in VOLATILE_VALUES.items():
                if operation == "UPDATE" and field == "uid":
                    continue
                varied["metadata"][field] = make(rng)
                old["metadata"][field] = make(rng)
            call = call_of(varied, operation=operation, old=old if operation == "UPDATE" else None)
            same_answer(review_call(call, "validate", src, OPTIONS), base)
            assert memo_key(call, "validate", snap) == base_key


def test_ill_typed_volatile_fields_stay_in_the_key(src: Source) -> None:
    snap = src.snapshot()
    assert snap is not None
    obj = claim("typed")
    keys = {memo_key(call_of(obj), "validate", snap)}
    for field, value in (("managedFields", "not a list"), ("managedFields", [1]), ("uid", 7), ("resourceVersion", {})):
        odd = copy.deepcopy(obj)
        odd["metadata"][field] = value
        keys.add(memo_key(call_of(odd), "validate", snap))
    assert len(keys) == 5


def test_an_uid_change_on_update_is_not_answered_from_memory(src: Source) -> None:
    memo = AnswerMemo()
    obj = claim("same")
    same = memo_answer(memo, call_of(obj, operation="UPDATE", old=obj), src)
    changed = copy.deepcopy(obj)
    changed["metadata"]["uid"] = str(uuid.uuid4())
    got = memo_answer(memo, call_of(changed, operation="UPDATE", old=obj), src)
    same_answer(got, review_call(call_of(changed, operation="UPDATE", old=obj), "validate", src, OPTIONS))
    assert "FieldValueInvalid" in got.reasons and "FieldValueInvalid" not in same.reasons


def test_a_new_snapshot_misses(tmp_path: Path) -> None:
    """A new snapshot (devices or cluster state) starts over: the 50Gi claim fits the bigger one."""
    small = StaticInventory([str(DATA / "inventory.yaml")])
    text = (DATA / "inventory.yaml").read_text().replace("max: 16Gi", "max: 64Gi").replace("value: 40Gi", "value: 80Gi")
    (tmp_path / "big.yaml").write_text(text)
    big = StaticInventory([str(tmp_path / "big.yaml")])
    src = Source(small.snapshot())
    memo = AnswerMemo()
    obj = claim("grows", memory="48Gi")
    assert memo_answer(memo, call_of(obj), src).decision == "denied"
    src.snap = big.snapshot()
    got = memo_answer(memo, call_of(obj), src)
    assert memo.hits == 0 and got.decision == "allowed"
    same_answer(got, review_call(call_of(obj), "validate", src, OPTIONS))
    again = build_inventory(small.objects())  # equal content, another snapshot: still a miss
    src.snap = again
    assert memo_answer(memo, call_of(obj), src).decision == "denied" and memo.hits == 0


def test_new_options_miss(src: Source) -> None:
    memo = AnswerMemo()
    obj = claim("big", memory="50Gi")
    memo_answer(memo, call_of(obj), src)
    lenient = ServerState(options=ReviewOptions(deny=frozenset())).admission_options
    got = memo_answer(memo, call_of(obj), src, options=lenient, generation=lenient)
    assert memo.hits == 0 and got.decision == "allowed"


def test_nothing_is_remembered_while_the_inventory_has_a_problem(src: Source) -> None:
    memo = AnswerMemo()
    src.why = "inventory not synced with the API server yet"
    for _ in range(3):
        got = memo_answer(memo, call_of(claim("big", memory="50Gi")), src)
    assert len(memo) == 0 and memo.hits == 0 and Reason.SATISFIABILITY_UNKNOWN in got.reasons


def test_an_answer_cut_short_by_the_budget_is_not_remembered(src: Source) -> None:
    late = claim("late", memory="50Gi")
    late["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [  # never compiled before: work to cut
        {"cel": {"expression": f'device.attributes["gpu.example.com"].model != "{uuid.uuid4()}"'}}]
    memo = AnswerMemo()
    with budget_scope(0.0):
        got = memo_answer(memo, call_of(late), src)
    assert got.fail_open and len(memo) == 0
    assert memo_answer(memo, call_of(late), src).decision == "denied"  # reviewed again, with time
    assert len(memo) == 1


def test_an_answer_whose_budget_ran_out_silently_is_not_remembered(src: Source, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that swallows BudgetExceeded (the "not now" hint) leaves no trace in the findings."""
    real = answers.review_object

    def suppressing(*args: Any) -> ObjectReview:
        try:
            raise BudgetExceeded("a hint that had no time left")
        except BudgetExceeded:
            pass
        return real(*args)

    monkeypatch.setattr(answers, "review_object", suppressing)
    memo = AnswerMemo()
    got = memo_answer(memo, call_of(claim("hint")), src)
    assert got.decision == "allowed" and not got.fail_open and len(memo) == 0


def test_complete_judges_what_cut_an_answer_short() -> None:
    ref = ObjectRef(kind="ResourceClaim", name="x")
    plain = ObjectReview(ref=ref)
    assert complete(plain, seconds=0.01, exceeded=0, search_deadline=1.0)
    assert not complete(plain, seconds=0.01, exceeded=1, search_deadline=1.0)
    assert not complete(plain, seconds=1.0, exceeded=0, search_deadline=1.0)  # a search may have stopped
    gave_up = ObjectReview(ref=ref, findings=[Finding.for_object(ref, Severity.WARNING, Reason.SATISFIABILITY_UNKNOWN,
                                                                 "search deadline", fail_open="SearchDeadline")])
    assert not complete(gave_up, seconds=0.01, exceeded=0, search_deadline=1.0)


def test_a_review_of_an_older_snapshot_is_not_stored(src: Source, static_inventory: StaticInventory) -> None:
    memo = AnswerMemo()
    call = call_of(claim("old"))
    snap = src.snapshot()
    assert snap is not None
    key = memo_key(call, "validate", snap)
    assert key is not None
    memo.put(key, snap, OPTIONS, ObjectReview(ref=ObjectRef()), current=False)
    assert len(memo) == 0


def test_the_memo_stays_within_its_bound(src: Source) -> None:
    # no search deadline: on a loaded machine a review may outlast one, and an answer that might have
    # been cut short is rightly not remembered — this test counts evictions, so every answer must be
    untimed = dataclasses.replace(OPTIONS, deadline_seconds=None)
    memo = AnswerMemo(weight=8)
    for i in range(40):
        memo_answer(memo, call_of(claim("c", memory=f"{4 + i}Gi")), src, options=untimed, generation=untimed)
        assert memo.stats()["weight"] <= 8
    stats = memo.stats()
    assert 0 < stats["entries"] <= 8 and stats["evictions"] >= 32 and stats["limit"] == 8
    latest = call_of(claim("c", memory="43Gi"))
    memo_answer(memo, latest, src, options=untimed, generation=untimed)
    assert memo.hits == 1  # the most recent stays


def test_large_bodies_are_not_remembered(src: Source) -> None:
    memo = AnswerMemo()
    call = call_of(claim("huge"))
    for _ in range(2):
        answer_call(memo, call, "validate", src, OPTIONS, OPTIONS, size=answers.MAX_BODY_BYTES + 1)
    assert len(memo) == 0 and memo.hits == 0


# -------------------------------------------------------------- cluster state: namespace and own name
def held(name: str, ns: str, dev: str, pool: str = "node-1") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            "status": {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": pool, "device": dev}]}}}}


@pytest.fixture
def busy(tmp_path: Path) -> Source:
    """Every GPU held: team-a holds two, team-b and team-c one each (their names show only at home)."""
    docs = [dclass(), node("node-1"), node("node-2"), rslice("node-1", [device("gpu-0"), device("gpu-1")]),
            rslice("node-2", [device("gpu-0"), device("gpu-1")]),
            held("train-1", "team-a", "gpu-0"), held("train-2", "team-a", "gpu-1"),
            held("secret-job", "team-b", "gpu-0", "node-2"), held("other-job", "team-c", "gpu-1", "node-2")]
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump_all(docs))
    return Source(StaticInventory([str(tmp_path / "inv.yaml")]).snapshot())


def asking(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


def test_no_answer_crosses_namespaces(busy: Source) -> None:
    """The same claim in two namespaces: each sees its own holders' names, never the other's."""
    memo = AnswerMemo()
    for ns in ("team-a", "team-b", "team-a", "team-b"):
        got = memo_answer(memo, call_of(asking("want", ns)), busy)
        same_answer(got, review_call(call_of(asking("want", ns)), "validate", busy, OPTIONS))
    assert memo.hits == 2
    seen = {}  # the warning is clipped to 120 characters: read the remembered findings in full
    for ns in ("team-a", "team-b"):
        key = memo_key(call_of(asking("want", ns)), "validate", busy.snap)  # type: ignore[arg-type]
        assert key is not None
        remembered = memo.get(key, busy.snap, OPTIONS)  # type: ignore[arg-type]
        assert remembered is not None
        seen[ns] = orjson.dumps([(f.message, f.details) for f in remembered.review.findings]).decode()
    assert "train-1" in seen["team-a"] and "train-1" not in seen["team-b"]
    assert "secret-job" in seen["team-b"] and "secret-job" not in seen["team-a"]


def test_a_claim_the_cluster_holds_allocated_is_not_answered_as_another(busy: Source) -> None:
    """Alike but for the name, and one of them is allocated in the cluster: two answers."""
    memo = AnswerMemo()
    for name in ("want", "train-1", "want", "train-1", "train-9"):
        got = memo_answer(memo, call_of(asking(name, "team-a")), busy)
        same_answer(got, review_call(call_of(asking(name, "team-a")), "validate", busy, OPTIONS))
        assert (Reason.CAPACITY_IN_USE in got.reasons) == (name != "train-1")
    assert memo.hits == 3


# -------------------------------------------------------------- over HTTPS: what a hit still does
def test_a_hit_over_https_logs_counts_and_answers_its_own_uid(
    serve: Callable[..., Served], static_inventory: StaticInventory, caplog: pytest.LogCaptureFixture
) -> None:
    s = serve(ServerState(inventory=static_inventory))
    bodies = [admission_review(claim("big", memory="50Gi")) for _ in range(3)]
    with caplog.at_level("INFO", logger="draguard.review"):
        got = [s.client.post("/validate", json=b).json() for b in bodies]
    assert [g["response"]["uid"] for g in got] == [b["request"]["uid"] for b in bodies]
    assert len({json.dumps({**g["response"], "uid": ""}) for g in got}) == 1
    lines = [r for r in caplog.records if r.name == "draguard.review" and r.getMessage() == "review"]
    assert [r.fields["uid"] for r in lines] == [b["request"]["uid"] for b in bodies]  # type: ignore[attr-defined]
    assert {r.fields["reason"] for r in lines} == {"Unsatisfiable"}  # type: ignore[attr-defined]
    text = s.client.get("/metrics").text
    assert 'draguard_requests_total{decision="denied",reason="Unsatisfiable",route="validate"} 3.0' in text
    assert 'draguard_answer_memo_lookups_total{result="hit"} 2.0' in text
    assert "draguard_answer_memo_entries 1.0" in text
