"""Findings → text, JSON, JUnit XML or SARIF 2.1.0.

Why four formats from one list: people read text, scripts parse the JSON contract
(README "Findings (the JSON contract)"), CI dashboards ingest JUnit, and code-scanning UIs ingest SARIF.  All four are
pure functions of the same :class:`~app.review.pipeline.Review`, so they can never disagree.

Text is one line per finding — ``file:line:col: severity: Kind ns/name: field: message`` —
then a summary line.  Multi-line messages (CEL compiler output with its caret) keep the
one-line promise by showing their line breaks as the two characters ``\\n``; the JSON form
carries the real text.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import orjson

from ..k8s import Finding, Severity
from ..review import Review
from .rules import rule_for

__all__ = ["FORMATS", "Format", "render", "severity_at_least", "tool_version"]

Format = Literal["text", "json", "junit", "sarif"]
FORMATS: tuple[Format, ...] = ("text", "json", "junit", "sarif")
TOOL_URI = "https://github.com/draguard/draguard"
DISTRIBUTION = "draguard"
SRCROOT = "%SRCROOT%"


@functools.cache
def tool_version() -> str:
    """The installed distribution's version (one source: ``pyproject.toml``), read once.

    ``0+unknown`` when draguard runs from a source folder that was never installed, so that a
    report still names a version and nobody mistakes it for a release."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


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
    sarif_root: str | None = None,
) -> str:
    """``sarif_root``: the folder SARIF artifact URIs are relative to (None: names as given)."""
    if fmt == "json":
        return render_json(review, show_mutations=show_mutations)
    if fmt == "junit":
        return render_junit(review, fail_on=fail_on)
    if fmt == "sarif":
        return render_sarif(review, root=sarif_root)
    return render_text(review, show_mutations=show_mutations)


# ---------------------------------------------------------------------------- JSON
def json_document(review: Review, *, show_mutations: bool = False) -> dict[str, Any]:
    summary: dict[str, Any] = dict(review.summary())
    if review.notices:
        summary["notices"] = list(review.notices)
    doc: dict[str, Any] = {
        "findings": [f.to_json() for f in review.findings],
        "summary": summary,
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
    """The JSON contract, exactly as ``json.dumps(doc, indent=2)`` writes it.

    orjson writes the same text ~8x faster (~35 ms of a 10,000-object lint) whenever it is
    ASCII; otherwise (orjson writes UTF-8 where the standard library escapes, and refuses lone
    surrogates and nesting past 255) the standard library writes it, so the bytes never depend on
    which did."""
    doc = json_document(review, show_mutations=show_mutations)
    try:
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = ""
    if not text or not text.isascii():
        text = json.dumps(doc, indent=2)
    return text + "\n"


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
    lines.append(summary_line(review))
    return "\n".join(lines) + "\n"


def summary_line(review: Review) -> str:
    """``16 objects checked: 10 errors, 1 warnings, 2 notes, 3 skipped; <notices>`` — counts that
    are zero past the first three are left out, notices (what the whole run did not check) follow."""
    s = review.summary()
    line = f"{s['objects']} objects checked: {s['errors']} errors, {s['warnings']} warnings"
    if s["notes"]:
        line += f", {s['notes']} notes"
    if s["skipped"]:
        line += f", {s['skipped']} skipped (not DRA objects)"
    return "; ".join([line, *review.notices])


# ---------------------------------------------------------------------------- JUnit
def render_junit(review: Review, *, fail_on: Literal["error", "warning", "never"] = "error") -> str:
    """One testcase per object (and one per file with decode errors); failures carry findings."""
    import xml.etree.ElementTree as ET  # here, not at the top: ~3 ms of every lint that asks for no JUnit

    suite = ET.Element("testsuite", name="draguard")
    if review.notices:  # what the run could not do, as JSON's summary.notices says it: never format-dependent
        props = ET.SubElement(suite, "properties")
        for notice in review.notices:
            ET.SubElement(props, "property", name="notice", value=notice)
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
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    # documents of kinds draguard does not check: a skipped testcase each, so that a dashboard
    # shows what was not looked at instead of a green run on nothing
    for ref in review.skipped:
        ns = f"{ref.namespace}/" if ref.namespace else ""
        case = ET.SubElement(suite, "testcase", classname=ref.kind or "object",
                             name=f"{ns}{ref.name or '(unnamed)'} ({ref.file or 'request'})", time="0")
        ET.SubElement(case, "skipped", message=f"draguard does not check objects of kind {ref.kind or '(none)'}")
    if review.notices:
        ET.SubElement(suite, "system-out").text = "\n".join(f"notice: {n}" for n in review.notices)
    total = len(cases) + len(review.skipped)
    suite.set("tests", str(total))
    suite.set("skipped", str(len(review.skipped)))
    root = ET.Element("testsuites", name="draguard", tests=str(total), failures=str(failures),
                      skipped=str(len(review.skipped)))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------- SARIF
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}

def render_sarif(review: Review, *, root: str | None = None) -> str:
    """SARIF 2.1.0; artifact URIs are relative to ``root`` (with ``%SRCROOT%`` set to it) when
    the file lies under it, as GitHub code scanning wants repository-relative paths."""
    reasons = sorted({f.reason for f in review.findings})
    index = {r: i for i, r in enumerate(reasons)}
    rules = []
    for reason in reasons:
        rule = rule_for(reason)
        rules.append({
            "id": rule.id,
            "name": rule.name,
            "shortDescription": {"text": rule.description},
            "helpUri": rule.help_uri,
        })
    results = [_sarif_result(f, index[f.reason], root) for f in review.findings]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "draguard",
                "version": tool_version(),
                "informationUri": TOOL_URI,
                "rules": rules,
            }
        },
        "results": results,
    }
    if review.notices:  # JSON's summary.notices: what the run could not do (satisfiability not checked…)
        run["invocations"] = [{
            "executionSuccessful": True,
            "toolExecutionNotifications": [{"level": "note", "message": {"text": n}} for n in review.notices],
        }]
    if root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(os.path.abspath(root)).as_uri() + "/"}}
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(doc, indent=2) + "\n"


def artifact_location(file: str, root: str | None) -> dict[str, str]:
    """A SARIF artifactLocation: relative to ``root`` when the file is under it, else absolute.

    Names in angle brackets (``<stdin>``, ``<body>``) are not files and stay as they are,
    percent-encoded like any URI reference.
    """
    if root is None or file.startswith("<"):
        return {"uri": quote(file.replace(os.sep, "/"))}
    absolute = Path(os.path.abspath(file))
    base = Path(os.path.abspath(root))
    if absolute.is_relative_to(base):
        return {"uri": quote(absolute.relative_to(base).as_posix()), "uriBaseId": SRCROOT}
    return {"uri": absolute.as_uri()}


def _sarif_result(f: Finding, rule_index: int, root: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.reason,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": f.message},
    }
    location: dict[str, Any] = {}
    if f.file:
        physical: dict[str, Any] = {"artifactLocation": artifact_location(f.file, root)}
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
