#!/usr/bin/env python3
"""Turn the recorded upstream allocator test table (raw/*.json) into draguard inputs and truths.

    .venv/bin/python scripts/upstream-allocator/convert.py --raw RAW_DIR --out OUT_DIR \
        --kubernetes-version 1.37 [--source k8s.io/dynamic-resource-allocation@v0.37.2]

draguard's copy of the team's upstream-allocator converter, adapted to record more than
one version (scripts/record-upstream-allocator.sh runs it): the target is chosen at the recorded
version with draguard's own gate table (app/k8s/features.py), 1.37's new allocator features map to
their gates, and 1.38's recordings (shared devices without share IDs, consumed capacity keyed by
fully-qualified name) are read.

raw/<case>.json is written by record_test.go beside this file (see README.md): the inputs Kubernetes'
structured allocator received in upstream's own test case (features, allocated state, device
classes, slices, the node and the claims of each Allocate call) and what it returned.

For every case this writes cases/<case>/ (a "/" in a subtest name becomes "__"):
  inventory/deviceclasses.yaml   the case's DeviceClasses
  inventory/resourceslices.yaml  its ResourceSlices (duplicate names made unique, see notes)
  inventory/node.yaml            the Node of the Allocate call, plus label kubernetes.io/hostname
  inventory/allocated-claims.yaml  only when the allocated state is not empty: synthetic
                                 allocated ResourceClaims (namespace "holders") whose
                                 status.allocation.devices.results hold exactly the allocated
                                 devices, shared device IDs and consumed capacity
  case.yaml                      a Namespace, the claims, and a Pod that references all of them
                                 and may only run on the case's node (nodeSelector on
                                 kubernetes.io/hostname)
  truth.json                     what the real allocator said (also collected in manifest.json)
and manifest.json: {"cases": [...], "skipped": [{"case", "reason"}]}.

Truth per case: "now" is the recorded Allocate outcome (with the case's allocated state);
"ever" is the same when the allocated state is empty, else the outcome of a second, fresh
allocator of the same implementation with an empty allocated state (recorded by the recorder,
"everDerived": true). Outcomes: allocated | unallocatable | failed-on-node (an error wrapping
ErrFailedAllocationOnNode: the scheduler marks the node unschedulable with that message) |
error (any other error: the scheduler aborts the attempt).

Upstream builds its inputs in Go, past API validation. Where that leaves an object the API
server would refuse and the allocator reads a part of it only for equality (a name) or not at
all, the converter makes it valid and says so in the case's "notes": slice and claim names made
unique, subrequest names lower-cased ("subReq-0" -> "subreq-0", references too), `count` dropped
beside allocationMode All, a repeated request name renamed, capacity names made C identifiers
("capacity-0" -> "capacity_0", in slices, claims, CEL selectors and consumed capacity).
Everything else is kept as recorded, invalid or not (some objects the API server
would still refuse: upstream's own deliberately broken inputs).

The case's feature set becomes draguard's target: --kubernetes-version and --feature-gates
(the gate of each allocator feature set to the case's value), at the recorded version when it can
express it. A gate locked on at that version (GA) whose allocator feature the case turns off is
left out when the case uses nothing of the feature (then the gate changes nothing: a note says
so); when the case does use it (a taint with DeviceTaints off, adminAccess with AdminAccess off,
...), the case runs at the newest older version where the gate can still be turned off (1.36
locks DRAAdminAccess, 1.37 DRADeviceTaints and DRAPrioritizedList, 1.38 DRAConsumableCapacity,
DRADeviceBindingConditions, DRAPartitionableDevices, DRAFractionalCapacityRange). A feature
whose gate does not exist at a version cannot be on there.

Stdlib + PyYAML. Deterministic: running it twice writes the same bytes.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import sys
import uuid

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository: draguard's gate table
from app.k8s.features import _DEPENDENCIES as DEPENDENCIES  # noqa: E402
from app.k8s.features import SUPPORTED_VERSIONS, FeatureGateError, Target, parse_target  # noqa: E402

NAMESPACE = "upstream"
HOLDERS_NAMESPACE = "holders"
POD = "upstream-pod"
HOSTNAME = "kubernetes.io/hostname"
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
SHARE_NS = uuid.UUID("6f1b3c1e-5b9a-4d53-9a8e-4f0c2d7e9a11")

# allocator feature (internal.Features) -> kube-apiserver / kube-scheduler gates
FEATURE_GATES = {
    "AdminAccess": ["DRAAdminAccess"],
    "CompatibilityGroups": ["DRADeviceCompatibilityGroups"],
    "ConsumableCapacity": ["DRAConsumableCapacity"],
    "DerivedAttributes": ["DRADerivedAttributes"],
    "DeviceBindingAndStatus": ["DRADeviceBindingConditions"],
    "DeviceTaints": ["DRADeviceTaints"],
    "FractionalCapacityRange": ["DRAFractionalCapacityRange"],
    "ListTypeAttributes": ["DRAListTypeAttributes"],
    "OptionalNodeOperations": ["DRAOptionalNodeOperations"],
    "PartitionableDevices": ["DRAPartitionableDevices"],
    "PrioritizedList": ["DRAPrioritizedList"],
}

# Fields whose presence means a case uses an allocator feature (in its slices or claims). Used
# only to decide whether a feature the case turns off matters: when in doubt, it does.
FEATURE_FIELDS = {
    "AdminAccess": {"adminAccess"},
    "CompatibilityGroups": {"compatibilityGroups", "compatibilityGroup"},
    "ConsumableCapacity": {"allowMultipleAllocations", "requestPolicy", "capacity:requests"},
    "DerivedAttributes": {"derivedAttributes"},
    "DeviceBindingAndStatus": {"bindingConditions", "bindingFailureConditions", "bindsToNode"},
    "DeviceTaints": {"taints", "tolerations"},
    "FractionalCapacityRange": {"validRange"},  # it changes how a validRange rounds (KEP-5075)
    "ListTypeAttributes": {"bools", "ints", "strings", "versions"},
    "OptionalNodeOperations": {"nodeOperations", "optionalNodeOperations"},
    "PartitionableDevices": {"sharedCounters", "consumesCounters", "perDeviceNodeSelection", "nodeName:device",
                             "allNodes:device", "nodeSelector:device"},
    "PrioritizedList": {"firstAvailable"},
}

# Cases whose inputs draguard's YAML cannot express at all.
GO_ONLY = {
    "interrupt/timeout": "the allocator's context has an expired timeout (1ns): an interrupted filter call, not an input",
    "interrupt/deadline": "the allocator's context has an expired deadline: an interrupted filter call, not an input",
    "interrupt/cancel": "the allocator's context is cancelled before Allocate: an interrupted filter call, not an input",
}


def case_dir_name(case: str) -> str:
    return case.replace("/", "__")


class Dumper(yaml.SafeDumper):
    pass


# Plain scalars that PyYAML reads as strings but other YAML 1.1 readers do not: go-yaml v2 (kubectl,
# sigs.k8s.io/yaml) reads y/Y/n/N as booleans. Quote them so every reader sees the same string.
_AMBIGUOUS = re.compile(r"^(y|Y|n|N|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE"
                        r"|null|Null|NULL|~|=|<<)$")


def _str_presenter(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    if _AMBIGUOUS.match(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


Dumper.add_representer(str, _str_presenter)


def dump_all(docs, path):
    with open(path, "w", encoding="utf-8") as f:
        yaml.dump_all(docs, f, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=120,
                      allow_unicode=True)


def clean(obj):
    """Drop what encoding/json writes for Go zero values that mean nothing here ({} status...)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            v = clean(v)
            if k == "status" and not v:
                continue
            out[k] = v
        return out
    if isinstance(obj, list):
        return [clean(x) for x in obj]
    return obj


def with_kind(api_version, kind, obj):
    out = {"apiVersion": api_version, "kind": kind}
    out.update(obj)
    return out


# ------------------------------------------------------------------------------- conversion
def uses_admin_access(claims):
    for c in claims:
        for r in c.get("spec", {}).get("devices", {}).get("requests") or []:
            if (r.get("exactly") or {}).get("adminAccess"):
                return True
    return False


def _keys(obj, out, parent=""):
    """Every non-empty field name below obj; "name:device" for fields of a device (a slice's
    devices[]), "name:requests" for a capacity's requests."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if v in (None, False, [], {}, ""):
                continue
            out.add(k)
            if parent:
                out.add(f"{k}:{parent}")
            _keys(v, out, "device" if k == "devices" else ("requests" if k == "capacity" else ""))
    elif isinstance(obj, list):
        for x in obj:
            _keys(x, out, parent)


def used_features(rec, claims):
    """Allocator features whose fields the case's slices, classes or claims (or state) use."""
    keys = set()
    _keys(rec.get("slices") or [], keys)
    _keys(rec.get("classes") or [], keys)
    _keys(claims, keys)
    for c in claims:
        for r in c.get("spec", {}).get("devices", {}).get("requests") or []:
            for sub in [r.get("exactly")] + list(r.get("firstAvailable") or []):
                if sub and (sub.get("capacity") or {}).get("requests"):
                    keys.add("capacity:requests")
    used = {f for f, fields in FEATURE_FIELDS.items() if keys & fields}
    used.discard("AdminAccess")
    if uses_admin_access(claims):
        used.add("AdminAccess")
    state = rec.get("allocatedState") or {}
    if state.get("sharedDevices") or state.get("consumedCapacity"):
        used.add("ConsumableCapacity")
    return used


def _minor(v):
    return tuple(int(x) for x in v.split("."))


def target_for(features, claims, rec, recorded):
    """(kubernetes version, --feature-gates text, notes, skip reason or None).

    Tries the recorded version first, then each older one (module docstring)."""
    used = used_features(rec, claims)
    tried = []
    for version in sorted((v for v in SUPPORTED_VERSIONS if _minor(v) <= _minor(recorded)), key=_minor, reverse=True):
        target = Target(version)
        gates, notes, why = {}, [], ""
        for feat, names in FEATURE_GATES.items():
            on = bool(features.get(feat))
            for g in names:
                state = target.state(g)
                if state is None:
                    if on:
                        why = f"{g} does not exist in {version}"
                    continue
                if state.locked and state.default != on:
                    if feat in used:
                        why = f"{g} is locked {'on' if state.default else 'off'} in {version} and the case uses {feat}"
                    else:
                        notes.append(f"allocator feature {feat} off, {g} locked on in Kubernetes {version}: "
                                     f"the case uses nothing of it, so the gate stays on")
                    continue
                if state.locked:
                    continue
                gates[g] = on
        if features.get("DeviceBindingAndStatus") and not (target.state("DRAResourceClaimDeviceStatus") or
                                                           Target("1.34").state("DRAResourceClaimDeviceStatus")).locked:
            gates["DRAResourceClaimDeviceStatus"] = True  # the allocator feature is both gates together
        # a gate the case turns off takes the gates that need it along (DRADeviceTaintRules needs
        # DRADeviceTaints, which 1.37 no longer locks): kube-apiserver refuses one without the other
        for gate, needs in DEPENDENCIES.items():
            state = target.state(gate)
            if (state is not None and not state.locked and gates.get(gate, state.default)
                    and any(gates.get(n) is False for n in needs)):
                gates[gate] = False
        text = ",".join(f"{g}={str(v).lower()}" for g, v in sorted(gates.items()))
        if not why:
            try:
                parse_target(version, text)
            except FeatureGateError as exc:
                why = f"kube-apiserver {version} refuses --feature-gates={text}: {exc}"
        if not why:
            if version != recorded:
                notes.append(f"recorded from Kubernetes {recorded}, run at {version}: " + "; ".join(tried))
            return version, text, notes, None
        tried.append(why)
    return None, None, [], "no Kubernetes version draguard supports expresses the case's features: " + "; ".join(tried)


def unique_names(objs, kind, notes):
    """Make metadata.name unique (the allocator sees a list; the API server keys by name)."""
    seen = {}
    for o in objs:
        name = o["metadata"]["name"]
        if name in seen:
            seen[name] += 1
            new = f"{name}-{seen[name]}"
            while new in seen:
                seen[name] += 1
                new = f"{name}-{seen[name]}"
            notes.append(f"{kind} #{objs.index(o)} named {name} again in the Go test: renamed {new}")
            o["metadata"]["name"] = new
            seen[new] = 1
        else:
            seen[name] = 1


DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def api_valid_claim(claim, notes):
    """Rewrite what the API server would refuse but the allocator never reads (names, count).

    Upstream's table builds claims in Go, past API validation. Three of its habits make a claim
    the API server refuses, which would leave draguard judging an object that cannot exist:
    - subrequest names "subReq-0" (not a DNS label): lower-cased, and every reference to
      "<request>/subReq-0" (constraints, config) with them. The allocator compares these names
      only for equality, so the case is unchanged;
    - `count` set together with allocationMode All: dropped (the allocator ignores count in All
      mode, the API server refuses it);
    - two requests (or two subrequests of one request) with the same name: the later one
      renamed, only when no constraint or config names it (then the name means nothing to the
      allocator either: it tells requests apart by position).
    """
    name = claim["metadata"]["name"]
    devices = claim.get("spec", {}).get("devices", {})
    requests = devices.get("requests") or []
    refs = set()
    for c in devices.get("constraints") or []:
        refs.update(c.get("requests") or [])
    for c in devices.get("config") or []:
        refs.update(c.get("requests") or [])
    rename = {}
    seen = set()
    for r in requests:
        rn = r.get("name", "")
        if rn in seen:
            if rn in refs or any(x.startswith(rn + "/") for x in refs):
                raise Skip(f"claim {name}: two requests named {rn!r} and a constraint or config names it")
            i = 1
            while f"{rn}-dup{i}" in seen:
                i += 1
            new = f"{rn}-dup{i}"
            notes.append(f"claim {name}: a second request named {rn} in the Go test (API: Duplicate value): renamed {new}")
            r["name"] = new
            rn = new
        seen.add(rn)
        ex = r.get("exactly")
        if ex and ex.get("allocationMode") == "All" and "count" in ex:
            notes.append(f"claim {name}: request {rn}: count {ex['count']} with allocationMode All dropped "
                         f"(the API server refuses it, the allocator ignores it)")
            del ex["count"]
        subs = r.get("firstAvailable") or []
        originals = [s.get("name", "") for s in subs]
        taken = set()
        for s, sn in zip(subs, originals):
            if s.get("allocationMode") == "All" and "count" in s:
                notes.append(f"claim {name}: subrequest {rn}/{sn}: count {s['count']} with allocationMode All "
                             f"dropped (the API server refuses it, the allocator ignores it)")
                del s["count"]
            new = sn
            if not DNS_LABEL.match(new):
                new = new.lower()
                if not DNS_LABEL.match(new) or (new != sn and new in originals):
                    raise Skip(f"claim {name}: subrequest name {sn!r} is not a DNS label and has no safe lower-case form")
            if new in taken:
                if originals.count(sn) > 1 and f"{rn}/{sn}" in refs:
                    raise Skip(f"claim {name}: two subrequests named {rn}/{sn} and a constraint or config names it")
                i = 1
                while f"{new}-dup{i}" in taken or f"{new}-dup{i}" in originals:
                    i += 1
                new = f"{new}-dup{i}"
                notes.append(f"claim {name}: a second subrequest named {rn}/{sn} in the Go test (API: Duplicate value): "
                             f"renamed {rn}/{new}")
            elif new != sn:
                rename[f"{rn}/{sn}"] = f"{rn}/{new}"
            taken.add(new)
            s["name"] = new
    if rename:
        notes.append(f"claim {name}: subrequest names lower-cased to DNS labels (API: Invalid value): "
                     + ", ".join(f"{a} -> {b}" for a, b in sorted(rename.items())))
        for c in (devices.get("constraints") or []) + (devices.get("config") or []):
            if c.get("requests"):
                c["requests"] = [rename.get(x, x) for x in c["requests"]]


C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def capacity_renames(slices, notes, claims=()):
    """{old: new} for capacity names that are not C identifiers ("capacity-0": API: Invalid value).

    The API server refuses such a slice, so no cluster holds one. The allocator compares capacity
    names only for equality, so "-" becomes "_" everywhere the name appears: slice capacities,
    claims' capacity requests, CEL selectors (device.capacity["driver-a"]["capacity-0"]) and the
    consumed capacity of the allocated state.
    """
    names = set()
    for sl in slices:
        for d in sl["spec"].get("devices") or []:
            names.update((d.get("capacity") or {}).keys())
    for c in claims:  # a request may name a capacity no device has (then it stays one no device has)
        for r in c.get("spec", {}).get("devices", {}).get("requests") or []:
            for sub in [r.get("exactly")] + list(r.get("firstAvailable") or []):
                if sub and (sub.get("capacity") or {}).get("requests"):
                    names.update(sub["capacity"]["requests"].keys())
    out = {}
    for n in sorted(names):
        dom, sep, ident = n.rpartition("/")
        if C_IDENT.match(ident):
            continue
        new_ident = ident.replace("-", "_").replace(".", "_")
        new = f"{dom}{sep}{new_ident}"
        if not C_IDENT.match(new_ident) or new in names:
            raise Skip(f"capacity name {n!r} is not a C identifier and has no safe replacement")
        out[n] = new
    if out:
        notes.append("capacity names made C identifiers (API: Invalid value): "
                     + ", ".join(f"{a} -> {b}" for a, b in out.items()))
    return out


def _renamed(k, ren):
    """k renamed; a capacity request's name is renamed by its identifier whether or not it has a
    domain (since 1.38 a request may name `<driver>/<name>` for a device's `<name>` and the other
    way round, kubernetes#142202)."""
    if k in ren:
        return ren[k]
    idents = {a.rpartition("/")[2]: b.rpartition("/")[2] for a, b in ren.items()}
    dom, sep, ident = k.rpartition("/")
    if ident in idents:
        return f"{dom}{sep}{idents[ident]}"
    return k


def rename_keys(m, ren):
    return {_renamed(k, ren): v for k, v in m.items()} if isinstance(m, dict) else m


def rename_capacity_in_cel(obj, ren):
    """Rewrite ["old"] in every CEL expression below obj (selectors of classes and claims)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "expression" and isinstance(v, str):
                for a, b in ren.items():
                    v = v.replace(f'["{a}"]', f'["{b}"]')
                obj[k] = v
            else:
                rename_capacity_in_cel(v, ren)
    elif isinstance(obj, list):
        for x in obj:
            rename_capacity_in_cel(x, ren)


def apply_capacity_renames(slices, classes, claims, state, ren):
    if not ren:
        return state
    for sl in slices:
        for d in sl["spec"].get("devices") or []:
            if d.get("capacity"):
                d["capacity"] = rename_keys(d["capacity"], ren)
    for c in claims:
        for r in c.get("spec", {}).get("devices", {}).get("requests") or []:
            for sub in [r.get("exactly")] + list(r.get("firstAvailable") or []):
                if sub and (sub.get("capacity") or {}).get("requests"):
                    sub["capacity"]["requests"] = rename_keys(sub["capacity"]["requests"], ren)
    rename_capacity_in_cel(classes, ren)
    rename_capacity_in_cel(claims, ren)
    state = copy.deepcopy(state)
    for cc in state.get("consumedCapacity") or []:
        cc["capacity"] = rename_keys(cc["capacity"], ren)
    return state


def slice_node_of(slices, dev):
    for s in slices:
        sp = s["spec"]
        if sp["driver"] == dev["driver"] and sp["pool"]["name"] == dev["pool"]:
            for d in sp.get("devices") or []:
                if d["name"] == dev["device"]:
                    return sp.get("nodeName") or d.get("nodeName")
    return None


def normalize_state(state, slices, notes):
    """1.38's allocated state: shared devices without share IDs get a made-up one (each device
    has one share: what the scheduler folds them into), consumed capacity keyed by "domain/name"
    is keyed by the device's own capacity name again."""
    state = copy.deepcopy(state)
    for d in state.get("sharedDevices") or []:
        if not d.get("shareID"):
            d["shareID"] = str(uuid.uuid5(SHARE_NS, "share/" + "/".join((d["driver"], d["pool"], d["device"]))))
            notes.append(f"shared device {d['driver']}/{d['pool']}/{d['device']} recorded without a share ID "
                         f"(1.38's state keeps none): held under shareID {d['shareID']}")
    for cc in state.get("consumedCapacity") or []:
        caps = set()
        for s in slices:
            sp = s["spec"]
            if sp["driver"] == cc["driver"] and sp["pool"]["name"] == cc["pool"]:
                for d in sp.get("devices") or []:
                    if d["name"] == cc["device"]:
                        caps.update((d.get("capacity") or {}).keys())
        out = {}
        for k, v in cc["capacity"].items():
            short = k[len(cc["driver"]) + 1:] if k.startswith(cc["driver"] + "/") else None
            out[short if k not in caps and short in caps else k] = v
        cc["capacity"] = out
    return state


def holder_claims(state, slices, class_name, notes):
    """Synthetic allocated claims that make the scheduler's GatherAllocatedState give `state`.

    The scheduler (pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go) maps
    every non-adminAccess result of an allocated claim to: AllocatedDevices (no shareID), or
    AllocatedSharedDeviceIDs (shareID) plus AggregatedCapacity (its consumedCapacity, summed).
    So: one claim per dedicated device; one claim per shared device ID, carrying the device's
    whole consumed capacity on the first share; a share with a made-up UUID for consumed
    capacity that has no shared device ID in the case (the scheduler never builds that state;
    the extra ID changes nothing: IsDeviceAllocated is already true through the capacity).
    """
    out = []
    consumed = {(c["driver"], c["pool"], c["device"]): c["capacity"] for c in state.get("consumedCapacity") or []}
    placed = set()

    def claim(idx, results, node):
        alloc = {"devices": {"results": results}}
        if node:
            alloc["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        return {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"holder-{idx}", "namespace": HOLDERS_NAMESPACE,
                         "uid": str(uuid.uuid5(SHARE_NS, f"holder-{idx}"))},
            "spec": {"devices": {"requests": [{"name": "held", "exactly": {
                "deviceClassName": class_name, "allocationMode": "ExactCount", "count": 1}}]}},
            "status": {"allocation": alloc,
                       "reservedFor": [{"resource": "pods", "name": f"holder-{idx}",
                                        "uid": str(uuid.uuid5(SHARE_NS, f"pod-holder-{idx}"))}]},
        }

    idx = 0
    for d in state.get("devices") or []:
        res = {"request": "held", "driver": d["driver"], "pool": d["pool"], "device": d["device"]}
        out.append(claim(idx, [res], slice_node_of(slices, d)))
        idx += 1
    for d in state.get("sharedDevices") or []:
        key = (d["driver"], d["pool"], d["device"])
        res = {"request": "held", "driver": d["driver"], "pool": d["pool"], "device": d["device"],
               "shareID": d["shareID"]}
        if key in consumed and key not in placed:
            res["consumedCapacity"] = dict(consumed[key])
            placed.add(key)
        out.append(claim(idx, [res], slice_node_of(slices, d)))
        idx += 1
    for key, cap in consumed.items():
        if key in placed:
            continue
        d = {"driver": key[0], "pool": key[1], "device": key[2]}
        share = str(uuid.uuid5(SHARE_NS, "/".join(key)))
        res = {"request": "held", **d, "shareID": share, "consumedCapacity": dict(cap)}
        out.append(claim(idx, [res], slice_node_of(slices, d)))
        notes.append(f"consumed capacity of {'/'.join(key)} has no shared device ID in the case: held under shareID {share}")
        idx += 1
    return out


def convert_case(rec, notes):
    """-> (files {relpath: [docs]}, truth dict) or raises Skip."""
    case = rec["case"]
    if case in GO_ONLY:
        raise Skip(GO_ONLY[case])
    calls = rec.get("calls") or []
    if len(calls) != 1:
        raise Skip(f"{len(calls)} Allocate calls (one expected)")
    call = calls[0]
    claims_in = call.get("claims") or []
    if not claims_in:
        raise Skip("no claims to allocate: a Pod without claims does not use DRA, nothing to check")
    if rec.get("classListError"):
        raise Skip(f"the class lister fails ({rec['classListError']}): not expressible as objects")

    features = rec["features"]
    version, gates, target_notes, why = target_for(features, claims_in, rec, RECORDED["version"])
    if why:
        raise Skip(why)
    notes.extend(target_notes)

    # --- inventory
    classes = [with_kind("resource.k8s.io/v1", "DeviceClass", clean(copy.deepcopy(c))) for c in rec.get("classes") or []]
    slices = [with_kind("resource.k8s.io/v1", "ResourceSlice", clean(copy.deepcopy(s))) for s in rec.get("slices") or []]
    unique_names(slices, "ResourceSlice", notes)
    unique_names(classes, "DeviceClass", notes)

    node_in = call["node"]
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": copy.deepcopy(node_in["metadata"])}
    node_name = node["metadata"]["name"]
    labels = node["metadata"].setdefault("labels", {})
    for s in rec.get("slices") or []:
        if HOSTNAME in json.dumps(s):
            raise Skip(f"a slice selects nodes by {HOSTNAME}; the pod could not be pinned by it")
    if labels.get(HOSTNAME, node_name) != node_name:
        raise Skip(f"the node's {HOSTNAME} label is not its name")
    labels[HOSTNAME] = node_name

    state = normalize_state(rec.get("allocatedState") or {}, slices, notes)
    cap_ren = capacity_renames(slices, notes, claims_in)
    state_empty = not any(state.get(k) for k in ("devices", "sharedDevices", "consumedCapacity"))
    if not state_empty and not features.get("ConsumableCapacity") and (state.get("sharedDevices") or state.get("consumedCapacity")):
        raise Skip("shared device IDs / consumed capacity with DRAConsumableCapacity off: the scheduler "
                   "never builds that state (it folds shares into whole devices)")

    # --- case: namespace, claims, pod
    claims = []
    for c in claims_in:
        c = clean(copy.deepcopy(c))
        c.pop("status", None)
        c["metadata"] = {"name": c["metadata"]["name"], "namespace": NAMESPACE}
        api_valid_claim(c, notes)
        claims.append(with_kind("resource.k8s.io/v1", "ResourceClaim", c))
    unique_names(claims, "ResourceClaim", notes)
    state = apply_capacity_renames(slices, classes, claims, state, cap_ren)
    holders = []
    if not state_empty:
        class_name = classes[0]["metadata"]["name"] if classes else "held"
        holders = holder_claims(state, slices, class_name, notes)
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": NAMESPACE, "labels": {ADMIN_LABEL: "true"}}}
    refs = [{"name": c["metadata"]["name"], "resourceClaimName": c["metadata"]["name"]} for c in claims]
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": POD, "namespace": NAMESPACE},
        "spec": {
            "nodeSelector": {HOSTNAME: node_name},
            "resourceClaims": refs,
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": r["name"]} for r in refs]}}],
        },
    }

    now = {"outcome": call["outcome"]}
    if call.get("error"):
        now["error"] = call["error"]
    if rec.get("everDerived"):
        ev = call.get("ever") or {}
        ever = {"outcome": ev.get("outcome"), "derived": True}
        if ev.get("error"):
            ever["error"] = ev["error"]
    else:
        ever = dict(now, derived=False)

    files = {
        "inventory/deviceclasses.yaml": classes,
        "inventory/resourceslices.yaml": slices,
        "inventory/node.yaml": [node],
        "case.yaml": [ns] + claims + [pod],
    }
    if holders:
        files["inventory/allocated-claims.yaml"] = holders
    truth = {
        "case": case,
        "dir": "cases/" + case_dir_name(case),
        "source": rec.get("source", ""),
        "implementation": rec["implementation"],
        "crossCheck": rec.get("crossCheck") or {},
        "features": sorted(k for k, v in features.items() if v),
        "recordedVersion": RECORDED["version"],
        "recordedFrom": RECORDED["source"],
        "kubernetesVersion": version,
        "featureGates": gates,
        "node": node_name,
        "namespace": NAMESPACE,
        "pod": POD,
        "claims": [c["metadata"]["name"] for c in claims],
        "allocatedStateEmpty": state_empty,
        "holders": [h["metadata"]["name"] for h in holders],
        "now": now,
        "ever": ever,
        "notes": notes,
    }
    return files, truth


class Skip(Exception):
    pass


RECORDED = {"version": "1.36", "source": ""}  # set by main from --kubernetes-version / --source


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", default=os.path.join(HERE, "raw"))
    ap.add_argument("--out", default=HERE, help="writes OUT/cases/ and OUT/manifest.json")
    ap.add_argument("--kubernetes-version", default="1.36", help="the minor the recording was made at (1.36, 1.37, 1.38)")
    ap.add_argument("--source", default="", help="what was recorded (k8s.io/dynamic-resource-allocation@v0.37.2)")
    args = ap.parse_args(argv)
    RECORDED["version"], RECORDED["source"] = args.kubernetes_version, args.source

    cases_dir = os.path.join(args.out, "cases")
    if os.path.isdir(cases_dir):
        shutil.rmtree(cases_dir)
    os.makedirs(cases_dir)
    manifest = {"cases": [], "skipped": []}
    names = sorted(f for f in os.listdir(args.raw) if f.endswith(".json") and not f.startswith("_"))
    if not names:
        print(f"no recorded cases in {args.raw}", file=sys.stderr)
        return 2
    for fn in names:
        with open(os.path.join(args.raw, fn), encoding="utf-8") as f:
            rec = json.load(f)
        notes = []
        try:
            files, truth = convert_case(rec, notes)
        except Skip as e:
            manifest["skipped"].append({"case": rec["case"], "source": rec.get("source", ""), "reason": str(e)})
            continue
        d = os.path.join(cases_dir, case_dir_name(rec["case"]))
        os.makedirs(os.path.join(d, "inventory"))
        for rel, docs in files.items():
            if docs:
                dump_all(docs, os.path.join(d, rel))
        with open(os.path.join(d, "truth.json"), "w", encoding="utf-8") as f:
            json.dump(truth, f, indent=1, sort_keys=False)
            f.write("\n")
        manifest["cases"].append(truth)
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"{len(names)} recorded, {len(manifest['cases'])} converted, {len(manifest['skipped'])} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
