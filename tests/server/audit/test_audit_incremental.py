"""The audit's answers carried to a new snapshot (figure 4d of the performance issue) are exactly a
from-scratch pass's: a differential test over random series of inventory changes, and a pod whose
verdict a slice change flips both ways through the engine that carries its answers.

Why differential: the incremental pass keeps a pod's findings when its engine answers, asked again,
are equal, and remakes them from new answers otherwise (``app/review/rechecks.py``).  A stale "fits"
or a stale "never fits" is a bug, so each step compares every finding — reason, severity, field and
the whole message — with a fresh engine's on the same snapshot.  The two engines get two snapshots
built from the same objects, so the fresh one shares nothing the incremental one remembered.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from draguard.inventory import build_inventory, with_cluster
from draguard.inventory.claims import reduce_claim, reduce_template
from draguard.review import ReviewOptions
from draguard.server.audit import AuditEngine, AuditResult

GPU = "gpu.example.com"
NIC = "nic.example.com"
MODELS = ("A100", "H100", "L4")
MEMORIES = ("8Gi", "16Gi", "40Gi", "80Gi")


def _class(name: str, driver: str, model: str | None = None) -> dict[str, Any]:
    cel = f'device.driver == "{driver}"'
    if model:
        cel += f' && device.attributes["{GPU}"].model == "{model}"'
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": cel}}]}}


def _gpu(i: int, memory: str, model: str) -> dict[str, Any]:
    return {"name": f"gpu-{i}", "attributes": {"model": {"string": model}, "index": {"int": i}},
            "capacity": {"memory": {"value": memory}}}


def _node(name: str, zone: str, taint: bool = False) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}}}
    if taint:
        obj["spec"] = {"taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}
    return obj


def _slices(node: str, rng: random.Random) -> list[dict[str, Any]]:
    model = rng.choice(MODELS)
    gpus = [_gpu(i, rng.choice(MEMORIES), model) for i in range(rng.randint(1, 3))]
    nics = [{"name": f"eth{i}", "attributes": {"subnet": {"string": f"10.{i % 2}.0.0/24"}}} for i in range(2)]
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{kind}"},
             "spec": {"driver": driver, "nodeName": node,
                      "pool": {"name": f"{node}-{kind}", "generation": 1, "resourceSliceCount": 1}, "devices": devices}}
            for kind, driver, devices in (("gpu", GPU, gpus), ("nic", NIC, nics))]


def initial_inventory(rng: random.Random) -> list[dict[str, Any]]:
    objects = [_class("gpu", GPU), _class("nic", NIC)]
    for n in range(5):
        objects.append(_node(f"n{n}", f"z{n % 2}", taint=n == 4))
        objects += _slices(f"n{n}", rng)
    return objects


def _request(name: str, cls: str, *, memory: str | None = None, model: str | None = None, count: int = 1) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls}
    if count != 1:
        exactly["count"] = count
    selectors = []
    if memory:
        selectors.append(f'device.capacity["{GPU}"].memory.compareTo(quantity("{memory}")) >= 0')
    if model:
        selectors.append(f'device.attributes["{GPU}"].model == "{model}"')
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


SPECS: list[dict[str, Any]] = [
    {"devices": {"requests": [_request("gpu", "gpu", memory="16Gi")]}},
    {"devices": {"requests": [_request("gpu", "gpu", memory="40Gi", count=2)]}},
    {"devices": {"requests": [_request("gpu", "gpu", model="H100")]}},
    {"devices": {"requests": [_request("gpu", "gpu", memory="80Gi"), _request("nic", "nic")]}},
    {"devices": {"requests": [_request("a", "nic"), _request("b", "nic")],
                 "constraints": [{"requests": ["a", "b"], "distinctAttribute": f"{NIC}/subnet"}]}},
    {"devices": {"requests": [_request("gpu", "gpu", count=3)]}},
]


def _template(ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "resourceVersion": "1"},
            "spec": {"spec": copy.deepcopy(spec)}}


def _pod(ns: str, name: str, template: str, placement: dict[str, Any], *, claim: str | None = None) -> dict[str, Any]:
    """A pending pod with one claim from ``template`` (or the shared claim ``claim``, by name)."""
    ref = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template}
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", **ref}], **placement,
    }
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "resourceVersion": "1"},
            "spec": spec, "status": {"phase": "Pending"}}


PLACEMENTS: list[dict[str, Any]] = [
    {},
    {"nodeSelector": {"zone": "z0"}},
    {"nodeSelector": {"zone": "z1"}},
    {"tolerations": [{"key": "dedicated", "operator": "Exists"}]},
    {"tolerations": [{"key": "nothing-has-this", "operator": "Exists"}]},
]


def _shared_claim(ns: str, spec: dict[str, Any], rv: str = "1") -> dict[str, Any]:
    """An unallocated claim pods name directly (audited, and in the cluster's claims)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": ns, "uid": f"uid-{ns}-shared", "resourceVersion": rv},
            "spec": copy.deepcopy(spec)}


def audited_objects(rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(4):
        ns = f"ns{n}"
        names = [f"t{i}" for i in range(len(SPECS))]
        out += [_template(ns, name, spec) for name, spec in zip(names, SPECS, strict=True)]
        for p in range(8):
            out.append(_pod(ns, f"p{p}", rng.choice(names), rng.choice(PLACEMENTS)))
    out.append(_shared_claim("ns1", SPECS[0]))
    out += [_pod("ns1", f"s{p}", "", rng.choice(PLACEMENTS), claim="shared") for p in range(3)]
    out += [_pod("ns0", f"h{p}", "", rng.choice(PLACEMENTS), claim="held") for p in range(2)]
    return out


def _allocated_claim(device: str | None) -> dict[str, Any]:
    """A claim of ns0 holding one GPU of n0 (so "does it fit now?" has something to subtract), or
    not allocated (None); pods ``h*`` name it."""
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": "held", "namespace": "ns0", "uid": "uid-held"},
                           "spec": {"devices": {"requests": [_request("gpu", "gpu")]}}}
    if device is not None:
        obj["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": GPU, "pool": "n0-gpu", "device": device}]}}}
    return obj


def snapshot(objects: list[dict[str, Any]], audited: list[dict[str, Any]], held: str | None = "gpu-0") -> Any:
    """A snapshot as the live inventory holds it: devices, and the cluster's claims and templates
    (the audited ones, and the claim ``held`` allocated to device ``held`` of n0 or not at all)."""
    templates = dict(t for o in audited if o["kind"] == "ResourceClaimTemplate" if (t := reduce_template(o)))
    claims = {(o["metadata"]["namespace"], o["metadata"]["name"]): c for o in audited
              if o["kind"] == "ResourceClaim" if (c := reduce_claim(o)) is not None}
    held_claim = reduce_claim(_allocated_claim(held))
    assert held_claim is not None
    claims[("ns0", "held")] = held_claim
    return with_cluster(build_inventory(objects), claims, templates, known=True)


# ------------------------------------------------------------------ the changes
def _slices_of(objects: list[dict[str, Any]], driver: str | None = None) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == "ResourceSlice" and (driver is None or o["spec"]["driver"] == driver)]


def change(objects: list[dict[str, Any]], rng: random.Random) -> str:
    """One random change of the inventory objects (in place); returns what it did."""
    gpu_slices = _slices_of(objects, GPU)
    what = rng.choice(["remove-device", "add-device", "capacity", "remove-slice", "add-node", "class",
                       "labels", "taint", "model"])
    if what == "remove-device" and any(s["spec"]["devices"] for s in gpu_slices):
        s = rng.choice([s for s in gpu_slices if s["spec"]["devices"]])
        s["spec"]["devices"].pop(rng.randrange(len(s["spec"]["devices"])))
    elif what == "add-device" and gpu_slices:
        s = rng.choice(gpu_slices)
        used = {d["name"] for d in s["spec"]["devices"]}
        i = next(i for i in range(99) if f"gpu-{i}" not in used)
        s["spec"]["devices"].append(_gpu(i, rng.choice(MEMORIES), rng.choice(MODELS)))
    elif what == "capacity" and any(s["spec"]["devices"] for s in gpu_slices):
        d = rng.choice([d for s in gpu_slices for d in s["spec"]["devices"]])
        d["capacity"]["memory"]["value"] = rng.choice(MEMORIES)
    elif what == "model" and any(s["spec"]["devices"] for s in gpu_slices):
        d = rng.choice([d for s in gpu_slices for d in s["spec"]["devices"]])
        d["attributes"]["model"]["string"] = rng.choice(MODELS)
    elif what == "remove-slice" and len(_slices_of(objects)) > 2:
        objects.remove(rng.choice(_slices_of(objects)))
    elif what == "add-node":
        name = f"x{sum(1 for o in objects if o['kind'] == 'Node')}"
        objects.append(_node(name, rng.choice(["z0", "z1"])))
        objects.extend(_slices(name, rng))
    elif what == "class":
        i = next(i for i, o in enumerate(objects) if o["kind"] == "DeviceClass" and o["metadata"]["name"] == "gpu")
        objects[i] = _class("gpu", GPU, rng.choice([None, *MODELS]))
    elif what == "labels":
        n = rng.choice([o for o in objects if o["kind"] == "Node"])
        n["metadata"]["labels"]["zone"] = rng.choice(["z0", "z1", "z2"])
    elif what == "taint":
        n = rng.choice([o for o in objects if o["kind"] == "Node"])
        if n.get("spec", {}).get("taints"):
            n["spec"] = {}
        else:
            n["spec"] = {"taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}
    else:
        return f"{what} (nothing to change)"
    return what


def findings(result: AuditResult) -> list[tuple[str, ...]]:
    return sorted((f.subject.kind, f.subject.namespace, f.subject.name, f.reason, f.severity.value, f.field,
                   f.message, f.fail_open) for f in result.findings)


def engine() -> AuditEngine:
    # a generous deadline: an answer cut short by a loaded machine is not the snapshot's own
    return AuditEngine(ReviewOptions(deadline_seconds=120.0))


def change_cluster(audited: list[dict[str, Any]], held: str | None, rng: random.Random) -> tuple[str | None, str]:
    """One random change of the cluster's claims and templates (audited objects edited in place,
    with a new resourceVersion, as the API server would): returns the held claim's device, and
    what it did."""
    what = rng.choice(["allocate", "template", "shared-claim"])
    if what == "allocate":
        return rng.choice([None, "gpu-0", "gpu-1"]), what
    if what == "template":
        i = rng.choice([i for i, o in enumerate(audited) if o["kind"] == "ResourceClaimTemplate"])
        audited[i] = _template(audited[i]["metadata"]["namespace"], audited[i]["metadata"]["name"], rng.choice(SPECS))
        audited[i]["metadata"]["resourceVersion"] = str(rng.randrange(2, 10**6))
    else:
        i = next(i for i, o in enumerate(audited) if o["kind"] == "ResourceClaim")
        audited[i] = _shared_claim("ns1", rng.choice(SPECS[:3]), rv=str(rng.randrange(2, 10**6)))
    return held, what


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_incremental_audit_equals_a_fresh_pass_over_random_inventory_changes(seed: int) -> None:
    rng = random.Random(seed)
    inventory_objects = initial_inventory(rng)
    audited = audited_objects(rng)
    incremental = engine()
    held: str | None = "gpu-0"
    incremental.evaluate(audited, snapshot(inventory_objects, audited, held))
    carried = redecided = 0
    for step in range(16):
        if rng.random() < 0.3:
            held, what = change_cluster(audited, held, rng)
        else:
            what = change(inventory_objects, rng)
        got = incremental.evaluate(audited, snapshot(inventory_objects, audited, held))
        fresh = engine().evaluate(audited, snapshot(inventory_objects, audited, held))
        assert findings(got) == findings(fresh), f"seed {seed}, step {step}: after {what}"
        carried += got.carried
        redecided += got.redecided
    # the incremental path was taken, both ways: answers kept, and answers made again
    assert carried > 0 and redecided > 0


def _big(devices: int) -> list[dict[str, Any]]:
    return [_class("gpu", GPU), _node("big", "z0"),
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "big-gpu"},
             "spec": {"driver": GPU, "nodeName": "big", "pool": {"name": "big-gpu", "generation": 1, "resourceSliceCount": 1},
                      "devices": [_gpu(i, "80Gi", "H100") for i in range(devices)]}}]


def test_a_slice_change_flips_a_pods_verdict_both_ways_through_the_carried_answers() -> None:
    audited = [_template("team", "two", SPECS[1]), _pod("team", "p", "two", {})]
    eng = engine()
    assert findings(eng.evaluate(audited, snapshot(_big(2), audited))) == []  # two 80Gi GPUs: fits
    rejected = eng.evaluate(audited, snapshot(_big(1), audited))  # one left: never fits
    pod = [f for f in rejected.findings if f.subject.kind == "Pod"]
    assert [(f.reason, f.severity.value) for f in pod] == [("Unsatisfiable", "error")]
    # the pod's and the template's findings made from their new answers, not from a new review
    assert (rejected.reviewed, rejected.redecided) == (0, 2)
    assert findings(rejected) == findings(engine().evaluate(audited, snapshot(_big(1), audited)))
    accepted = eng.evaluate(audited, snapshot(_big(2), audited))  # the device is back: fits again
    assert [f for f in accepted.findings if f.subject.kind == "Pod"] == []
    assert (accepted.reviewed, accepted.redecided) == (0, 2)
    kept = eng.evaluate(audited, snapshot(_big(3), audited))  # a third device: still fits, answer kept
    assert (kept.reviewed, kept.redecided, kept.carried) == (0, 0, 3) and findings(kept) == []  # pod, template, class


def test_a_clean_answer_shared_across_namespaces_is_never_remade_from_another_namespaces_check() -> None:
    """Three namespaces with equal templates and pods share one clean review per kind; when a slice
    change makes them unsatisfiable, each namespace's findings come from its own review or its own
    check — the shared check belongs to one namespace, and findings made from it would be about it."""
    audited: list[dict[str, Any]] = []
    for ns in ("a", "b", "c"):
        audited += [_template(ns, "two", SPECS[1]), _pod(ns, "p", "two", {})]
    eng = AuditEngine(ReviewOptions(deadline_seconds=120.0), classes=False)
    first = eng.evaluate(audited, snapshot(_big(2), audited))
    assert findings(first) == [] and first.reviewed == 2  # one template, one pod: the rest shared
    rejected = eng.evaluate(audited, snapshot(_big(1), audited))
    assert (rejected.redecided, rejected.reviewed) == (2, 4)  # the reviewed namespace's own two are remade
    assert findings(rejected) == findings(AuditEngine(ReviewOptions(deadline_seconds=120.0), classes=False).evaluate(
        audited, snapshot(_big(1), audited)))
    assert {(f.subject.namespace, f.subject.kind) for f in rejected.findings} == {
        (ns, kind) for ns in ("a", "b", "c") for kind in ("Pod", "ResourceClaimTemplate")}


# ------------------------------------------------------------------ one slice change of each kind
def _gpu_slice(node: str, gpus: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": GPU, "nodeName": node, "pool": {"name": f"{node}-gpu", "generation": 1,
                                                                "resourceSliceCount": 1}, "devices": gpus}}


def _nic_slice(node: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-nic"},
            "spec": {"driver": NIC, "nodeName": node, "pool": {"name": f"{node}-nic", "generation": 1,
                                                                "resourceSliceCount": 1},
                     "devices": [{"name": "eth0", "attributes": {"subnet": {"string": "10.0.0.0/24"}}}]}}


def _fixed_inventory() -> list[dict[str, Any]]:
    """Three nodes: n0 has an 8Gi L4 and a 40Gi A100, n1 an 8Gi L4, n2 an 80Gi H100; each a NIC."""
    objects = [_class("gpu", GPU), _class("nic", NIC)]
    gpus = {"n0": [_gpu(0, "8Gi", "L4"), _gpu(1, "40Gi", "A100")], "n1": [_gpu(0, "8Gi", "L4")],
            "n2": [_gpu(0, "80Gi", "H100")]}
    for node, devices in gpus.items():
        objects += [_node(node, "z0"), _gpu_slice(node, devices), _nic_slice(node)]
    return objects


FIXED_SPECS: dict[str, dict[str, Any]] = {
    "nic": {"devices": {"requests": [_request("nic", "nic")]}},                      # fits on every node
    "mem16": {"devices": {"requests": [_request("gpu", "gpu", memory="16Gi")]}},     # fits on n0 and n2
    "h100": {"devices": {"requests": [_request("gpu", "gpu", model="H100")]}},       # fits on n2 only
    "a100": {"devices": {"requests": [_request("gpu", "gpu", model="A100")]}},       # fits on n0 only
    "l4-16": {"devices": {"requests": [_request("gpu", "gpu", memory="16Gi", model="L4")]}},  # no node
    "two40": {"devices": {"requests": [_request("gpu", "gpu", memory="40Gi", count=2)]}},     # no node
    "two80": {"devices": {"requests": [_request("gpu", "gpu", memory="80Gi", count=2)]}},     # no node
}


def _fixed_audited() -> list[dict[str, Any]]:
    """Per spec a template and two pods on it whose contents differ (one tolerates a taint no node
    has), as the worst case of the benchmark: each pod's answers are its own."""
    out: list[dict[str, Any]] = []
    for name, spec in FIXED_SPECS.items():
        out.append(_template("team", name, spec))
        out.append(_pod("team", f"{name}-a", name, {}))
        out.append(_pod("team", f"{name}-b", name, {"tolerations": [{"key": "nothing-has-this", "operator": "Exists"}]}))
    return out


def _device(objects: list[dict[str, Any]], node: str, index: int) -> dict[str, Any]:
    s = next(o for o in objects if o["kind"] == "ResourceSlice" and o["metadata"]["name"] == f"{node}-gpu")
    return next(d for d in s["spec"]["devices"] if d["name"] == f"gpu-{index}")


def _add_slice(objects: list[dict[str, Any]]) -> None:
    objects += [_node("n3", "z0"), _gpu_slice("n3", [_gpu(0, "80Gi", "H100"), _gpu(1, "80Gi", "H100")])]


def _remove_slice(objects: list[dict[str, Any]]) -> None:
    objects.remove(next(o for o in objects if o["kind"] == "ResourceSlice" and o["metadata"]["name"] == "n2-gpu"))


def _capacity(objects: list[dict[str, Any]]) -> None:
    _device(objects, "n0", 0)["capacity"]["memory"]["value"] = "40Gi"


def _attribute(objects: list[dict[str, Any]]) -> None:
    _device(objects, "n0", 1)["attributes"]["model"]["string"] = "L4"


def _pod_verdicts(result: AuditResult) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per template name (both of its pods must agree), the pods' (reason, severity) pairs."""
    out: dict[str, set[tuple[tuple[str, str], ...]]] = {name: set() for name in FIXED_SPECS}
    for name in FIXED_SPECS:
        for pod in (f"{name}-a", f"{name}-b"):
            out[name].add(tuple(sorted((f.reason, f.severity.value) for f in result.findings
                                       if f.subject.kind == "Pod" and f.subject.name == pod)))
    assert all(len(v) == 1 for v in out.values()), out
    return {name: next(iter(v)) for name, v in out.items()}


UNSAT = (("Unsatisfiable", "error"),)


@pytest.mark.parametrize(("change_slice", "flipped"), [
    pytest.param(_add_slice, {"two80": ((), UNSAT), "two40": ((), UNSAT)}, id="slice-added"),  # two 80Gi GPUs
    pytest.param(_remove_slice, {"h100": (UNSAT, ()), "two80": (UNSAT, UNSAT)}, id="slice-removed"),
    # n0's 8Gi L4 now has 40Gi: n0 has two GPUs of 40Gi, and an L4 of 16Gi or more
    pytest.param(_capacity, {"two40": ((), UNSAT), "l4-16": ((), UNSAT)}, id="capacity-changed"),
    # n0's A100 becomes an L4: "model == A100" no longer matches any device, "L4 with 16Gi" now does
    pytest.param(_attribute, {"a100": (UNSAT, ()), "l4-16": ((), UNSAT)}, id="attribute-changed"),
])
def test_one_slice_change_gives_a_full_passs_findings_changed_and_unchanged(
        change_slice: Any, flipped: dict[str, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]]) -> None:
    """After one slice change of each kind, the incremental pass (answers carried or remade from
    answers asked again) says exactly what a full pass on the same objects says, and the change
    shows in both directions of the contract: the verdicts it flips are new, the others are kept.
    ``flipped``: template name → (verdict after, verdict before) of its pods (equal: unchanged)."""
    inventory_objects = _fixed_inventory()
    audited = _fixed_audited()
    eng = engine()
    before = eng.evaluate(audited, snapshot(inventory_objects, audited, held=None))
    changed = copy.deepcopy(inventory_objects)
    change_slice(changed)
    after = eng.evaluate(audited, snapshot(changed, audited, held=None))
    fresh = engine().evaluate(audited, snapshot(changed, audited, held=None))
    assert findings(after) == findings(fresh)
    was, now = _pod_verdicts(before), _pod_verdicts(after)
    for name in FIXED_SPECS:
        expected_now, expected_was = flipped.get(name, (was[name], was[name]))
        assert (now[name], was[name]) == (expected_now, expected_was), name
    assert any(now[n] != was[n] for n in FIXED_SPECS) and any(now[n] == was[n] for n in FIXED_SPECS)
    assert now["nic"] == was["nic"] == ()  # a NIC is never touched by a GPU slice: kept
    # through the incremental path: nothing reviewed again, answers kept and answers remade
    assert after.reviewed == 0 and after.carried > 0 and after.redecided > 0
