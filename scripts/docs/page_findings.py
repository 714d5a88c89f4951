"""The JSON Schema of the findings output (``draguard lint --format json`` and ``POST /lint``) and
the page that describes it.

Why generated: the closed parts of the contract come from the code — every ``reason`` is a row
of the reason registry (app/k8s/reasons.py), every ``severity`` a member of ``Severity`` — and the
shape is the one ``Finding.to_json`` and ``json_document`` (app/report/render.py) write.  The
schema is published (docs/reference/findings.schema.json) and tests/docs validate the real output
of both doors against it, so a field renamed, dropped or retyped in the code fails there first.
"""

from __future__ import annotations

import json
from typing import Any

from docs_common import banner, cell, code
from draguard.k8s import REASONS, Severity

SCHEMA_ID = "https://github.com/draguard/draguard/blob/main/docs/reference/findings.schema.json"
_COUNT = {"type": "integer", "minimum": 0}


def _finding() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "One statement about one object (in the text output, one line).",
        "additionalProperties": False,
        "required": ["severity", "reason", "kind", "namespace", "name", "field", "message"],
        "properties": {
            "severity": {"enum": [s.value for s in Severity],
                         "description": "`error` fails `lint` (and denies at the webhook only when its reason "
                                        "is in `--deny`); `warning`; `info` (a note)."},
            "reason": {"enum": list(REASONS),
                       "description": "Stable and machine-readable: one row of [Reasons](reasons.md)."},
            "kind": {"type": "string", "description": "The object's kind (the workload's, for a finding on "
                                                      "its pod template); empty when the document has none."},
            "namespace": {"type": "string", "description": "Empty for cluster-scoped objects; `default` for "
                                                           "namespaced objects without one."},
            "name": {"type": "string", "description": "The object's name (empty when it has none)."},
            "field": {"type": "string", "description": "The field path as the API server reports it "
                                                       "(`spec.devices.requests[0]`); empty for the whole object."},
            "message": {"type": "string", "minLength": 1,
                        "description": "The explanation, as the API server or draguard words it (line breaks kept)."},
            "file": {"type": "string", "minLength": 1,
                     "description": "Where the object came from: a path, `<stdin>`, or the `/lint` body's name "
                                    "(`<body>` unless `?file=` names it). Absent when there is no file."},
            "line": {"type": "integer", "minimum": 1, "description": "1-based line of the field (or object)."},
            "column": {"type": "integer", "minimum": 0, "description": "1-based column; present with `line`."},
            "details": {"type": "object", "minProperties": 1,
                        "description": "The figures the finding is about, for machines (e.g. "
                                       "`ReplicasExceedCapacity`: `replicas`, `fit`, `exact`; `CapacityInUse`: "
                                       "`needs`, `available`, `matching`, `free`, `fullyHeld`, `holders`). "
                                       "Absent when there are none; its keys depend on the reason."},
        },
        "dependentRequired": {"line": ["column"], "column": ["line"]},
    }


def _summary() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "What the run looked at; the text output's last line.",
        "additionalProperties": False,
        "required": ["objects", "errors", "warnings", "notes", "skipped"],
        "properties": {
            "objects": {**_COUNT, "description": "Objects checked."},
            "errors": {**_COUNT, "description": "Findings of severity `error`."},
            "warnings": {**_COUNT, "description": "Findings of severity `warning`."},
            "notes": {**_COUNT, "description": "Findings of severity `info`."},
            "skipped": {**_COUNT, "description": "Documents of kinds draguard does not check."},
            "notices": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
                        "description": "What the whole run did not check (`satisfiability was not checked: …`); "
                                       "absent when there is nothing to say."},
        },
    }


def _mutation() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The JSONPatch the mutating webhook would apply to one object (`--show-mutations`).",
        "additionalProperties": False,
        "required": ["kind", "namespace", "name", "file", "patch", "description"],
        "properties": {
            "kind": {"type": "string"},
            "namespace": {"type": "string"},
            "name": {"type": "string"},
            "file": {"type": "string", "description": "Where the object came from (empty when nowhere)."},
            "patch": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/operation"},
                      "description": "RFC 6902 operations, in order."},
            "description": {"type": "array", "items": {"type": "string"},
                            "description": "What each filled-in value is, in words."},
        },
    }


def _operation() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "One JSONPatch operation.",
        "required": ["op", "path"],
        "properties": {
            "op": {"enum": ["add", "remove", "replace", "move", "copy", "test"]},
            "path": {"type": "string", "pattern": "^(/[^/]*)*$"},
            "value": {},
            "from": {"type": "string"},
        },
        "additionalProperties": False,
    }


def schema() -> dict[str, Any]:
    """The findings document's JSON Schema (draft 2020-12)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "draguard findings",
        "description": "What `draguard lint --format json` prints and `POST /lint` answers.",
        "type": "object",
        "additionalProperties": False,
        "required": ["findings", "summary"],
        "properties": {
            "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"},
                         "description": "Every finding, in file order."},
            "summary": {"$ref": "#/$defs/summary"},
            "mutations": {"type": "array", "items": {"$ref": "#/$defs/mutation"},
                          "description": "Only with `--show-mutations`: the patches the mutating webhook would apply."},
        },
        "$defs": {"finding": _finding(), "summary": _summary(), "mutation": _mutation(), "operation": _operation()},
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def _type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        values = prop["enum"]
        if len(values) > 6:
            return f"string, one of {len(values)} reasons"
        return " \\| ".join(code(v) for v in values)
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name})"
    kind = str(prop.get("type", "any"))
    items = prop.get("items")
    if kind == "array" and isinstance(items, dict):
        return f"array of {_type(items)}"
    return kind


def _table(definition: dict[str, Any]) -> list[str]:
    required = set(definition.get("required", []))
    rows = ["| field | type | required | meaning |", "|---|---|---|---|"]
    for name, prop in definition["properties"].items():
        rows.append(f"| {code(name)} | {_type(prop)} | {'yes' if name in required else 'no'} | "
                    f"{cell(prop.get('description', ''))} |")
    return rows


EXAMPLE = {
    "findings": [{
        "severity": "error", "reason": "Unsatisfiable", "kind": "ResourceClaim", "namespace": "default",
        "name": "llm-50gi", "field": "spec.devices.requests[0]",
        "message": 'request "gpu": no device of class shared-gpu.example.com offers memory 50Gi '
                   "(largest: 40Gi on worker-a1/gpu-0, pool worker-a1)",
        "file": "examples/claims/bad/10-unsatisfiable-50gi.yaml", "line": 10, "column": 7,
    }],
    "summary": {"objects": 1, "errors": 1, "warnings": 0, "notes": 0, "skipped": 0},
}


def render() -> str:
    doc = schema()
    defs = doc["$defs"]
    lines = [
        banner("scripts/docs/page_findings.py (the reason registry, Severity, app/report/render.py)").rstrip("\n"),
        "# Findings: the JSON output",
        "",
        "`draguard lint --format json` prints, and `POST /lint` answers, one JSON document that "
        "[findings.schema.json](findings.schema.json) (JSON Schema draft 2020-12) describes exactly: "
        "objects are closed (a field not listed here is an error), `reason` is one of the registered "
        "[reasons](reasons.md), `severity` one of three. The test suite validates the real output of "
        "both doors against it. How the text, JUnit and SARIF forms relate is in "
        "[the findings guide](../guides/findings.md).",
        "",
        "```json",
        json.dumps(EXAMPLE, indent=2),
        "```",
        "",
        "## The document",
        "",
        *_table(doc),
        "",
    ]
    for name in ("finding", "summary", "mutation", "operation"):
        lines += [f"## {name}", "", cell(defs[name].get("description", "")), "", *_table(defs[name]), ""]
        if name == "finding":
            lines += ["`line` and `column` come together or not at all.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
