"""Kubernetes' own allocator test table, replayed through draguard, per recorded version.

Each case of ``allocatortesting.TestAllocator`` (and the lexicographical table), recorded from the
implementation the scheduler picks at that version (scripts/record-upstream-allocator.sh), is
linted as ``draguard lint case.yaml --inventory inventory/`` at the truth's target (version and
feature gates), and draguard's answer for the case's pod on the case's node is compared with what
the real allocator said:

- a false rejection (draguard denies where upstream allocates) is a failure unless it is listed in
  known.json as one being fixed, and then an expected failure that must keep failing;
- every other disagreement (an unknown where upstream proves "never", a missed proof, a "now"
  difference, an object draguard refuses) fails unless known.json lists it, with its reason;
- a listed disagreement that no longer happens (or happens differently) fails too, so that the
  list says what draguard does today.

``upstreamChanges`` in known.json lists the cases whose upstream outcome differs between the
recorded versions (the allocator's fixes); that list is checked against the data the same way.
"""

from __future__ import annotations

from typing import Any

import pytest

from .cases import Answer, allocated, ask_draguard, cases, classify, known, load, versions

VERSIONS = versions()
KNOWN = known()
PARAMS = [(v, name) for v in VERSIONS for name in sorted(cases(v))]


def _listed(version: str, name: str) -> dict[str, Any] | None:
    entry: dict[str, Any] | None = KNOWN.get("disagreements", {}).get(version, {}).get(name)
    return entry


def _explain(version: str, name: str, truth: dict[str, Any], answer: Answer) -> str:
    return (f"{version} {name}: upstream now={truth['now']['outcome']} ever={truth['ever']['outcome']} "
            f"(target {truth['kubernetesVersion']} {truth['featureGates']}); draguard {answer.describe()}")


@pytest.mark.skipif(not PARAMS, reason="no recorded upstream allocator cases (scripts/record-upstream-allocator.sh)")
@pytest.mark.parametrize(("version", "name"), PARAMS, ids=[f"{v}::{n}" for v, n in PARAMS])
def test_case(version: str, name: str) -> None:
    case = cases(version)[name]
    truth = case["truth"]
    answer = ask_draguard(version, case)
    found = classify(truth, answer)
    listed = _listed(version, name)
    listed_class = listed["class"] if listed else None
    if found != listed_class:
        if listed is None:
            pytest.fail(f"unlisted disagreement {found!r}: {_explain(version, name, truth, answer)}")
        if found is None:
            pytest.fail(f"listed as {listed_class!r} in known.json but draguard now agrees with upstream: "
                        f"remove it. {_explain(version, name, truth, answer)}")
        pytest.fail(f"listed as {listed_class!r} in known.json but the disagreement is now {found!r}: "
                    f"{_explain(version, name, truth, answer)}")
    if found == "false-rejection":
        assert listed is not None and listed.get("fixing"), (
            f"a false rejection may be listed only while a fix is under way ('fixing'): "
            f"{_explain(version, name, truth, answer)}")
        pytest.xfail(f"false rejection being fixed ({listed['fixing']}): {listed['reason']}")


def _outcomes(name: str) -> dict[str, str]:
    """version -> "now/ever" outcome of a case, for the versions that recorded it."""
    out = {}
    for v in VERSIONS:
        c = cases(v).get(name)
        if c is not None:
            out[v] = f"{c['truth']['now']['outcome']}/{c['truth']['ever']['outcome']}"
    return out


def upstream_changes() -> dict[str, dict[str, str]]:
    """Cases recorded at two or more versions whose upstream outcome differs between them."""
    names = {n for v in VERSIONS for n in cases(v)}
    changes = {}
    for name in sorted(names):
        outcomes = _outcomes(name)
        if len(outcomes) > 1 and len(set(outcomes.values())) > 1:
            changes[name] = outcomes
    return changes


@pytest.mark.skipif(len(VERSIONS) < 2, reason="fewer than two recorded versions")
def test_upstream_changes_are_listed() -> None:
    listed = {name: entry["outcomes"] for name, entry in KNOWN.get("upstreamChanges", {}).items()}
    assert upstream_changes() == listed, "the cases whose upstream outcome changed between versions " \
        "differ from known.json's upstreamChanges (list each with the allocator fix that changed it)"


@pytest.mark.skipif(not VERSIONS, reason="no recorded versions")
@pytest.mark.parametrize("version", VERSIONS)
def test_recording_is_usable(version: str) -> None:
    """A recording that lost its cases (or its verdicts) would make every comparison pass."""
    data = load(version)
    assert data["recordedVersion"] == version
    recorded = cases(version)
    assert len(recorded) > 200
    ever = [allocated(c["truth"]["ever"]) for c in recorded.values()]
    assert ever.count(True) > 50 and ever.count(False) > 20
    skipped = {s["case"] for s in data["skipped"]}
    assert skipped <= {"empty", "no-claims-to-allocate", "interrupt/cancel", "interrupt/deadline",
                       "interrupt/timeout", "interrupt/off"}, skipped


def test_listed_cases_exist() -> None:
    """known.json names only recorded cases of recorded versions (a typo would list nothing)."""
    for version, entries in KNOWN.get("disagreements", {}).items():
        assert version in VERSIONS, version
        missing = sorted(set(entries) - set(cases(version)))
        assert not missing, (version, missing)
        for name, entry in entries.items():
            assert entry.get("class") and entry.get("reason"), (version, name)


def test_classify_rejects_and_accepts() -> None:
    """The comparison itself: a denial of an allocatable case is a false rejection; a proof of an
    unallocatable one, or not knowing an allocatable one, is agreement."""
    yes = {"now": {"outcome": "allocated"}, "ever": {"outcome": "allocated"}}
    no = {"now": {"outcome": "unallocatable"}, "ever": {"outcome": "unallocatable"}}
    busy = {"now": {"outcome": "unallocatable"}, "ever": {"outcome": "allocated"}}
    assert classify(yes, Answer("never", None, ())) == "false-rejection"
    assert classify(yes, Answer("runtime-error", None, ())) == "false-rejection"
    assert classify(yes, Answer("unknown", None, ())) is None
    assert classify(yes, Answer("can", "can", ())) is None
    assert classify(yes, Answer("can", "not-now", ())) == "now-false"
    assert classify(no, Answer("never", None, ())) is None
    assert classify(no, Answer("unknown", None, ())) == "unknown-proven"
    assert classify(no, Answer("can", "can", ())) == "missed"
    assert classify(busy, Answer("can", "can", ())) == "now-missed"
    assert classify(busy, Answer("can", "not-now", ())) is None
