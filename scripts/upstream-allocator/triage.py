#!/usr/bin/env python3
"""Replay every recorded upstream allocator case through draguard and list the disagreements.

    .venv/bin/python scripts/upstream-allocator/triage.py            # print them, per version and class
    .venv/bin/python scripts/upstream-allocator/triage.py --write    # (re)write tests/data/upstream-allocator/known.json

Why: after a re-recording (a new Kubernetes version) or a change to draguard, known.json must say
again which cases disagree and why; tests/upstream/test_upstream_allocator.py fails on any case
whose disagreement differs from it. --write keeps every reason already written for a case whose
class did not change, and gives new ones the cause its CAUSES rule names (by case name) or, for
none, draguard's own message: review those by hand before committing.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from upstream.cases import KNOWN, ask_draguard, cases, classify, known, versions  # noqa: E402
from upstream.test_upstream_allocator import upstream_changes  # noqa: E402

LIST_FIX = "list-typed attribute values in CEL and in matchAttribute/distinctAttribute (another helper, in progress)"

# (case-name pattern, class or "" for any, cause, fixing-or-"")
CAUSES: list[tuple[str, str, str, str]] = [
    (r"^(list-attributes-|numanode-matchattribute-overlapping-lists)", "false-rejection",
     "list-typed attribute values (DRAListTypeAttributes): draguard's CEL reads a list attribute as having no "
     "value (SelectorRuntimeError) and its matchAttribute/distinctAttribute compare scalars only", LIST_FIX),
    (r"^list-attributes-distinct-constraint-single-request-count-3-not-distinct$", "missed",
     "list-typed attribute values under distinctAttribute (DRAListTypeAttributes): two list values with a "
     "common element are not distinct upstream; draguard compares them as scalars", ""),
    (r"^derived-attributes", "false-rejection",
     "DRADerivedAttributes (alpha, 1.37+): draguard does not evaluate a request's derivedAttributes, so a "
     "matchAttribute on a derived name sees the device's own (missing or other) attribute and proves no match", ""),
    (r"build-metadata", "false-rejection",
     "semantic versions that differ only in build metadata compare equal in 1.38's allocator "
     "(matchAttribute/distinctAttribute); draguard compares the whole version string", ""),
    (r"build-metadata", "missed",
     "semantic versions that differ only in build metadata compare equal in 1.38's allocator, so "
     "distinctAttribute fails upstream; draguard compares the whole version string and finds them distinct", ""),
    (r"^consumable-capacity-request-(qualified|unqualified)-and-", "false-rejection",
     "capacity requests by `<driver>/<name>` or `<name>` (kubernetes#142202, 1.38): the claim check says "
     "SatisfiabilityUnknown ('not decided for 1.38'), but the pod check proves Unsatisfiable with exact names", ""),
    (r"incomplete|obsolete|stale-slice", "unknown-proven",
     "an incomplete pool (fewer slices of its newest generation than resourceSliceCount): upstream skips it "
     "now; draguard does not prove 'never' because the missing slices may still be published", ""),
    (r"invalid-pool|duplicate-slice|same-counter-set-name|validation-error-on-non-targeting-slice|"
     r"references-(counter-set-in-other-pool|unknown-counter)", "unknown-proven",
     "an invalid pool (a device listed twice, a counter set defined twice or referenced but missing): "
     "upstream fails on it; draguard skips the pool and does not prove 'never' (it may be fixed by its driver)", ""),
    (r"^(no-classes|unknown-class)$", "unknown-proven",
     "the DeviceClass does not exist: upstream errors; draguard says unknown (classes may be applied later)", ""),
    (r"invalid-CEL", "unknown-proven",
     "a selector that does not compile: upstream errors; draguard reports the CEL error as a warning "
     "(SatisfiabilityUnknown), not as a proof", ""),
    (r"^(no-slices|all-devices-no-slices|all-devices-slice-without-devices|many-devices-okay)$", "unknown-proven",
     "no device of the class in the inventory: draguard says unknown (a driver may still publish devices)", ""),
    (r"claim-limit|would-wrap-to-zero|too-many-devices", "unknown-proven",
     "more devices than a claim may hold (the per-claim limit of the allocator): upstream refuses; draguard "
     "finds no device of the class in the case's inventory (the case ships none) and says unknown", ""),
    (r"^compatibility-groups", "",
     "DRADeviceCompatibilityGroups (alpha, 1.37+): draguard does not model compatibility groups yet", ""),
    (r"^optional-node-operations", "",
     "DRAOptionalNodeOperations (alpha, 1.37+): draguard does not model the node's declared operations", ""),
    (r"-disabled|without-feature-gate|missing-feature|disabled-feature", "",
     "a feature the case turns off: the allocator refuses a device or request that uses the disabled "
     "feature; draguard (at the case's target, the gate off) drops the gated field instead, as the API "
     "server does on create, and then finds a device", ""),
    (r"negative-request|overflow|above-int64|rounded-value", "missed",
     "a capacity request upstream refuses at allocation (negative, or overflowing after rounding to the "
     "policy): draguard's satisfiability does not re-check these figures (validation would reject "
     "some of them on create)", ""),
    (r"^distinct-constraint-(single-request-count-3|two-requests-with-count)-not-distinct$", "missed",
     "distinctAttribute over several devices of one request (1.37+): upstream requires every device to "
     "differ; draguard checks pairs across requests only", ""),
    (r"persisted-share|cross-cycle|allocation-mode-all-in-use", "",
     "the allocated state holds shares (consumed capacity) of a shared device: draguard's 'now' "
     "counts what is left differently", ""),
    (r"network-attached|tainted-prioritized-list|exclude-multi-allocatable|change-from-multi-allocatable|"
     r"admin-access-disabled|per-device-node-selection|no-capacity-available|overallocated", "",
     "", ""),
]


def cause_for(name: str, cls: str, message: str) -> tuple[str, str]:
    for pattern, want, cause, fixing in CAUSES:
        if re.search(pattern, name) and want in ("", cls) and cause:
            return cause, fixing
    return f"(to be explained) draguard: {message}", ""


def _first_message(answer) -> str:
    for f in answer.findings:
        if f.kind == "Pod" and f.reason in ("Unsatisfiable", "SatisfiabilityUnknown", "SelectorRuntimeError",
                                            "CapacityInUse"):
            return f"{f.reason}: {f.message[:300]}"
    for f in answer.findings:
        if f.severity.value in ("error", "warning"):
            return f"{f.reason}: {f.message[:300]}"
    return f"ever={answer.ever} now={answer.now}, nothing against it"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite known.json")
    args = ap.parse_args(argv)
    old = known()
    out: dict = {"_doc": old.get("_doc", ""), "disagreements": {}, "upstreamChanges": old.get("upstreamChanges", {})}
    for version in versions():
        groups = defaultdict(list)
        entries = {}
        for name, case in sorted(cases(version).items()):
            answer = ask_draguard(version, case)
            cls = classify(case["truth"], answer)
            if cls is None:
                continue
            message = _first_message(answer)
            prev = old.get("disagreements", {}).get(version, {}).get(name)
            if prev and prev.get("class") == cls:
                entry = prev
            else:
                cause, fixing = cause_for(name, cls, message)
                entry = {"class": cls, "reason": cause}
                if fixing and cls == "false-rejection":
                    entry["fixing"] = fixing
            entry["draguard"] = message
            entries[name] = entry
            groups[cls].append(name)
        out["disagreements"][version] = entries
        print(f"== {version}: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(groups.items())))
        for cls, names in sorted(groups.items()):
            for n in names:
                print(f"  {cls:16} {n}: {entries[n]['reason'][:160]}")
    changes = upstream_changes()
    prev_changes = old.get("upstreamChanges", {})
    out["upstreamChanges"] = {
        n: {"outcomes": o, "cause": prev_changes.get(n, {}).get("cause", "(to be explained)")} for n, o in changes.items()
    }
    print("== upstream outcome changes between versions (now/ever)")
    for n, o in changes.items():
        print(f"  {n}: {o}")
    if args.write:
        with open(KNOWN, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=False)
            f.write("\n")
        print(f"wrote {KNOWN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
