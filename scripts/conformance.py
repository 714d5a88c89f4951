#!/usr/bin/env python3
"""Score draguard against the conformance sample in tests/data/conformance (Kubernetes 1.36.2's own
verdicts: API-server validation and the structured allocator), from the repository alone.

For each case file of ``manifest.json`` it runs ``draguard lint CASE --inventory INV --format json``
and compares per object (file, kind, namespace, name) with ``expected/<case>.jsonl``:

- validation: the set of (field path, reason) of draguard's error-severity ``FieldValue*`` findings
  equals Kubernetes' set, parsed from its ``<field>: <Type>: ...`` error strings;
- satisfiability, for objects Kubernetes accepts: not allocatable → an ``Unsatisfiable`` error;
  allocatable → no ``Unsatisfiable`` and no error at all (else a **false rejection**, the worst
  failure); a CEL runtime error in the allocator → ``SelectorRuntimeError`` or ``Unsatisfiable``;
  allocatable on some node and a CEL error on another → no error other than ``SelectorRuntimeError``.

Per version: ``expected/`` holds 1.36.2's verdicts (draguard runs at ``--kubernetes-version 1.36``);
``--version 1.37`` scores against ``expected-1.37/`` (made by that version's own oracle,
``scripts/oracle-expectations.py``) with draguard at target 1.37 — every DRA gate of the version
on, as the oracle runs (``--feature-gates``).

The last line is ``agreement V/T validation, S/U satisfiability, false rejections F``; exit 0 only
when everything agrees.  draguard runs as ``$DRAGUARD`` (a command line) or ``python -m draguard``
with this interpreter.  Stdlib only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "conformance"
NAMESPACED = {"ResourceClaim", "ResourceClaimTemplate"}
# apimachinery's ErrorType strings → the reasons draguard reports (TypeInvalid prints like Invalid)
CAUSES = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Duplicate value": "FieldValueDuplicate",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Forbidden": "FieldValueForbidden",
    "Internal error": "InternalError",
}
ERROR_LINE = re.compile(r"^(.*?): (" + "|".join(map(re.escape, CAUSES)) + ")")
SAME_AS = {"FieldValueTypeInvalid": "FieldValueInvalid"}
FIELD_REASONS = set(CAUSES.values()) | set(SAME_AS)

Key = tuple[str, str, str, str]


def kubernetes_fields(errors: list[str]) -> set[tuple[str, str]]:
    out = set()
    for text in errors:
        m = ERROR_LINE.match(text)
        out.add((m.group(1), CAUSES[m.group(2)]) if m else (text.split(": ", 1)[0], "Unknown"))
    return out


def draguard_fields(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(f.get("field") or "", SAME_AS.get(f["reason"], f["reason"])) for f in findings
            if f.get("severity") == "error" and f.get("reason") in FIELD_REASONS}


def satisfiability_case(expected: dict[str, Any]) -> str | None:
    """unsat | sat | mixed | cel-error | other-error, or None for objects without the question."""
    if expected.get("kind") not in NAMESPACED or expected.get("allocatable") is None:
        return None
    node_errors = [v for v in (expected.get("nodeOutcomes") or {}).values() if v.startswith("error")]
    if expected["allocatable"]:
        return "mixed" if node_errors else "sat"
    error = expected.get("allocationError") or ""
    if not error:
        return "unsat"
    return "cel-error" if "CEL runtime error" in error else "other-error"


def satisfiability_agrees(case: str, findings: list[dict[str, Any]]) -> tuple[bool, bool]:
    """(agrees, is a false rejection) for one object's findings."""
    errors = {f["reason"] for f in findings if f.get("severity") == "error"}
    unsat = any(f["reason"] == "Unsatisfiable" for f in findings)
    if case == "unsat":
        return "Unsatisfiable" in errors, False
    if case == "cel-error":
        return bool(errors & {"Unsatisfiable", "SelectorRuntimeError"}), False
    allowed = set() if case == "sat" else {"SelectorRuntimeError"}  # mixed: a CEL error on another node
    ok = not unsat and errors <= allowed
    return ok, not ok


def draguard_command() -> list[str]:
    env = os.environ.get("DRAGUARD")
    return shlex.split(env) if env else [sys.executable, "-m", "draguard"]


# every DRA gate of a version on, as the oracle that made its expectations runs (dependencies included)
ALL_GATES = {
    "1.36": "DRAListTypeAttributes=true,DRANodeAllocatableResources=true,DRADeviceTaintRules=true,"
            "DRAResourcePoolStatus=true,DRAWorkloadResourceClaims=true,GenericWorkload=true",
    "1.37": "DRAListTypeAttributes=true,DRANodeAllocatableResources=true,DRAResourcePoolStatus=true,"
            "DRAFractionalCapacityRange=true,DRADerivedAttributes=true,DRADeviceCompatibilityGroups=true,"
            "DRAPartitionableDevicesType=true,DRAWorkloadResourceClaims=true,GenericWorkload=true,"
            "DRAOptionalNodeOperations=true",
    "1.38": "DRAListTypeAttributes=true,DRANodeAllocatableResources=true,DRAResourcePoolStatus=true,"
            "DRADerivedAttributes=true,DRADeviceCompatibilityGroups=true,DRAPartitionableDevicesType=true,"
            "DRAWorkloadResourceClaims=true,GenericWorkload=true,DRAOptionalNodeOperations=true",
}


def target_arguments(version: str, gates: str | None) -> list[str]:
    """draguard's flags for a version's expectations: that version, its gates (default: 1.36's
    defaults for the original sample — it was scored so since it was made — every gate for later
    versions, whose oracle turns them all on)."""
    chosen = gates if gates is not None else ("" if version == "1.36" else ALL_GATES.get(version, ""))
    return ["--kubernetes-version", version, *(["--feature-gates", chosen] if chosen else [])]


def expected_path(entry: dict[str, Any], version: str) -> str:
    """``expected/...`` for 1.36, ``expected-<version>/...`` otherwise."""
    path = str(entry["expected"])
    return path if version == "1.36" else path.replace("expected/", f"expected-{version}/", 1)


def lint(command: list[str], corpus: Path, entry: dict[str, Any], timeout: float,
         target_args: list[str]) -> list[dict[str, Any]]:
    argv = [*command, "lint", str(corpus / entry["file"]), *target_args]
    for inventory in entry["inventory"]:
        argv += ["--inventory", str(corpus / inventory)]
    proc = subprocess.run([*argv, "--format", "json"], capture_output=True, text=True, timeout=timeout,
                          check=False)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"exit {proc.returncode}: {shlex.join(argv)}: {(proc.stderr or proc.stdout)[-800:]}")
    try:
        findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    except (ValueError, KeyError, TypeError) as exc:  # a crash exits 1 too: say what it printed
        raise RuntimeError(f"unreadable report ({exc}) from {shlex.join(argv)}: {proc.stderr[-800:]}") from exc
    return findings


def key(finding: dict[str, Any], corpus: Path, default: str) -> Key:
    kind = finding.get("kind") or ""
    namespace = (finding.get("namespace") or "default") if kind in NAMESPACED else ""
    file = os.path.relpath(os.path.abspath(finding["file"]), corpus) if finding.get("file") else default
    return (os.path.normpath(file), kind, namespace, finding.get("name") or "")


@dataclass
class Score:
    validation: list[int] = field(default_factory=lambda: [0, 0])
    satisfiability: list[int] = field(default_factory=lambda: [0, 0])
    false_rejections: int = 0
    disagreements: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def perfect(self) -> bool:
        return (self.validation[0] == self.validation[1] and self.satisfiability[0] == self.satisfiability[1]
                and not self.false_rejections and not self.failures)

    def line(self) -> str:
        v, s = self.validation, self.satisfiability
        return f"agreement {v[0]}/{v[1]} validation, {s[0]}/{s[1]} satisfiability, false rejections {self.false_rejections}"


def score(corpus: Path, *, only: str | None = None, name_filter: str = "", jobs: int = 2,
          timeout: float = 120.0, command: list[str] | None = None, version: str = "1.36",
          gates: str | None = None) -> Score:
    manifest = json.loads((corpus / "manifest.json").read_text())
    entries = [e for e in manifest["files"] if name_filter in e["file"]]
    expected: dict[Key, dict[str, Any]] = {}
    for e in entries:
        for line in (corpus / expected_path(e, version)).read_text().splitlines():
            o = json.loads(line)
            expected[(os.path.normpath(e["file"]), o["kind"], o.get("namespace") or "", o["name"])] = o
    result = Score()
    found: dict[Key, list[dict[str, Any]]] = {k: [] for k in expected}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        args = target_arguments(version, gates)
        runs = {pool.submit(lint, command or draguard_command(), corpus, e, timeout, args): e for e in entries}
        for run in concurrent.futures.as_completed(runs):
            entry = runs[run]
            try:
                findings = run.result()
            except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as exc:
                result.failures.append(f"{entry['file']}: {exc}")
                continue
            for f in findings:
                k = key(f, corpus, entry["file"])
                if k in found:
                    found[k].append(f)
    failed = {f.split(":", 1)[0] for f in result.failures}
    for k, o in sorted(expected.items()):
        fs = found[k]
        label = f"{k[0]} {k[1]} {'/'.join(p for p in k[2:] if p)}"
        if only != "satisfiability" and not o.get("decodeError") and not o.get("panics"):
            result.validation[1] += 1
            want, got = kubernetes_fields(o["validationErrors"]), draguard_fields(fs)
            if k[0] not in failed and want == got:
                result.validation[0] += 1
            elif k[0] not in failed:
                result.disagreements.append(f"[validation] {label}: kubernetes {sorted(want) or 'valid'}, "
                                            f"draguard {sorted(got) or 'valid'}")
        case = satisfiability_case(o)
        if only == "validation" or o["validationErrors"] or o.get("decodeError") or case in (None, "other-error"):
            continue
        result.satisfiability[1] += 1
        if k[0] in failed:
            continue
        ok, false_rejection = satisfiability_agrees(str(case), fs)
        result.satisfiability[0] += ok
        result.false_rejections += false_rejection
        if not ok:
            seen = "; ".join(f"{f['severity']}:{f['reason']}@{f.get('field')}" for f in fs) or "no findings"
            result.disagreements.append(f"[{'FALSE REJECTION' if false_rejection else 'satisfiability'}] {label}: "
                                        f"kubernetes {case}, draguard {seen}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the sample (default tests/data/conformance)")
    parser.add_argument("--only", choices=["validation", "satisfiability"])
    parser.add_argument("--filter", default="", help="only case files whose path contains this")
    parser.add_argument("--jobs", "-j", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per lint call")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every disagreement")
    parser.add_argument("--version", default="1.36",
                        help="whose verdicts: 1.36 (expected/, the default) or a version with expected-<version>/")
    parser.add_argument("--feature-gates", default=None, help="draguard's gates (default: see target_arguments)")
    args = parser.parse_args(argv)
    result = score(args.corpus, only=args.only, name_filter=args.filter, jobs=args.jobs, timeout=args.timeout,
                   version=args.version, gates=args.feature_gates)
    for failure in result.failures:
        print(f"draguard failed: {failure}")
    if args.verbose:
        for line in result.disagreements:
            print(line)
    print(result.line())
    return 0 if result.perfect else 1


if __name__ == "__main__":
    sys.exit(main())
