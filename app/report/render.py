"""Findings → text, JSON, JUnit XML or SARIF 2.1.0.

Why four formats from one list: people read text, scripts parse the JSON contract
(DESIGN.md §4), CI dashboards ingest JUnit, and code-scanning UIs ingest SARIF.  All four are
pure functions of the same :class:`~app.review.pipeline.Review`, so they can never disagree.

Text is one line per finding — ``file:line:col: severity: Kind ns/name: field: message`` —
then a summary line.  Multi-line messages (CEL compiler output with its caret) keep the
one-line promise by showing their line breaks as the two characters ``\\n``; the JSON form
carries the real text.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any, Literal

from app.k8s.finding import Finding, Severity
from app.review.pipeline import Review

__all__ = ["FORMATS", "Format", "render", "severity_at_least"]

Format = Literal["text", "json", "junit", "sarif"]
FORMATS: tuple[Format, ...] = ("text", "json", "junit", "sarif")
TOOL_URI = "https://github.com/draguard/draguard"
TOOL_VERSION = "0.1.0"


def severity_at_least(finding: Finding, threshold: Literal["error", "warning", "never"]) -> bool:
    if threshold == "never":
        return False
    wanted = Severity.ERROR if threshold == "error" else Severity.WARNING
    return finding.severity.rank >= wanted.rank


def render(
    review: Review,
    fmt: Format,
    *,
    fail_on: Literal["error", "warning", "never"] = "error",
    show_mutations: bool = False,
) -> str:
    if fmt == "json":
        return render_json(review, show_mutations=show_mutations)
    if fmt == "junit":
        return render_junit(review, fail_on=fail_on)
    if fmt == "sarif":
        return render_sarif(review)
    return render_text(review, show_mutations=show_mutations)


# ---------------------------------------------------------------------------- JSON
def json_document(review: Review, *, show_mutations: bool = False) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "findings": [f.to_json() for f in review.findings],
        "summary": review.summary(),
    }
    if show_mutations:
        doc["mutations"] = [
            {
                "kind": o.ref.kind,
                "namespace": o.ref.namespace,
                "name": o.ref.name,
                "file": o.ref.file,
                "patch": o.patch,
                "description": o.patch_descriptions,
            }
            for o in review.objects
            if o.patch
        ]
    return doc


def render_json(review: Review, *, show_mutations: bool = False) -> str:
    return json.dumps(json_document(review, show_mutations=show_mutations), indent=2) + "\n"


# ---------------------------------------------------------------------------- text
def _object_label(f: Finding) -> str:
    if not f.kind:
        return ""
    ns = f"{f.namespace}/" if f.namespace else ""
    return f"{f.kind} {ns}{f.name}"


def text_line(f: Finding) -> str:
    location = f"{f.file or '-'}:{f.line}:{f.column}"
    parts = [location, f.severity.value]
    label = _object_label(f)
    if label:
        parts.append(label)
    if f.field:
        parts.append(f.field)
    parts.append(f.message.replace("\n", "\\n"))
    return ": ".join(parts)


def render_text(review: Review, *, show_mutations: bool = False) -> str:
    lines = [text_line(f) for f in review.findings]
    if show_mutations:
        for o in review.objects:
            if o.patch:
                ns = f"{o.ref.namespace}/" if o.ref.namespace else ""
                lines.append(f"{o.ref.file or '-'}: mutation: {o.ref.kind} {ns}{o.ref.name}: {json.dumps(o.patch)}")
    s = review.summary()
    infos = sum(f.severity is Severity.INFO for f in review.findings)
    summary = f"{s['objects']} objects checked: {s['errors']} errors, {s['warnings']} warnings"
    if infos:
        summary += f", {infos} notes"
    lines.append(summary)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- JUnit
def render_junit(review: Review, *, fail_on: Literal["error", "warning", "never"] = "error") -> str:
    """One testcase per object (and one per file with decode errors); failures carry findings."""
    suite = ET.Element("testsuite", name="draguard")
    cases: list[tuple[str, str, list[Finding]]] = []
    seen: set[tuple[str, str, str, str]] = set()
    for o in review.objects:
        ns = f"{o.ref.namespace}/" if o.ref.namespace else ""
        key = (o.ref.file, o.ref.kind, o.ref.namespace, o.ref.name)
        if key in seen:
            continue
        seen.add(key)
        mine = [
            f for f in review.findings
            if (f.file, f.kind, f.namespace, f.name) == key
        ]
        cases.append((o.ref.kind or "object", f"{ns}{o.ref.name} ({o.ref.file or 'request'})", mine))
    orphans = [f for f in review.findings if not f.kind]
    by_file: dict[str, list[Finding]] = {}
    for f in orphans:
        by_file.setdefault(f.file or "-", []).append(f)
    for file, fs in by_file.items():
        cases.append(("file", file, fs))
    failures = 0
    for classname, name, findings in cases:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")
        failing = [f for f in findings if severity_at_least(f, fail_on)]
        if failing:
            failures += 1
            failure = ET.SubElement(
                case, "failure", message=failing[0].message.splitlines()[0][:200], type=failing[0].reason
            )
            failure.text = "\n".join(text_line(f) for f in failing)
        rest = [f for f in findings if f not in failing]
        if rest:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(text_line(f) for f in rest)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    root = ET.Element("testsuites", name="draguard", tests=str(len(cases)), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------- SARIF
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}

_RULE_HELP = {
    "DecodeError": "The input is not a decodable Kubernetes object.",
    "UnknownField": "A field the resource.k8s.io API does not have (usually a typo).",
    "Unsatisfiable": "No node of the inventory could ever allocate this claim.",
    "SatisfiabilityUnknown": "Whether the claim can be allocated could not be decided.",
    "SelectorRuntimeError": "A CEL selector fails on a device it is evaluated against.",
    "CapacityRounded": "The request will consume more capacity than asked, after policy rounding.",
    "CapacityDefaulted": "An omitted capacity request will consume the policy default.",
}


def _rule_text(reason: str) -> str:
    if reason in _RULE_HELP:
        return _RULE_HELP[reason]
    if reason.startswith("FieldValue"):
        return f"The Kubernetes API server rejects this field ({reason})."
    if reason.startswith("Lint"):
        return f"draguard lint check {reason} (not enforced by Kubernetes)."
    return reason


def render_sarif(review: Review) -> str:
    reasons = sorted({f.reason for f in review.findings})
    index = {r: i for i, r in enumerate(reasons)}
    rules = [
        {"id": r, "name": r, "shortDescription": {"text": _rule_text(r)}, "helpUri": f"{TOOL_URI}#rules"}
        for r in reasons
    ]
    results = [_sarif_result(f, index[f.reason]) for f in review.findings]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "draguard",
                        "version": TOOL_VERSION,
                        "informationUri": TOOL_URI,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def _sarif_result(f: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.reason,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": f.message},
    }
    location: dict[str, Any] = {}
    if f.file:
        physical: dict[str, Any] = {"artifactLocation": {"uri": f.file}}
        if f.line > 0:
            physical["region"] = {"startLine": f.line, "startColumn": max(f.column, 1)}
        location["physicalLocation"] = physical
    label = _object_label(f)
    if label:
        name = f"{label}.{f.field}" if f.field else label
        location["logicalLocations"] = [{"fullyQualifiedName": name, "kind": "object"}]
    if location:
        result["locations"] = [location]
    return result


def count_at_least(findings: Iterable[Finding], threshold: Literal["error", "warning", "never"]) -> int:
    return sum(severity_at_least(f, threshold) for f in findings)
