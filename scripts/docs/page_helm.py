"""The Helm values reference page: every key of charts/<chart>/values.schema.json with its type,
what the schema allows and the chart's default from values.yaml — the schema is what Helm
enforces, so the page cannot promise a value the chart refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from docs_common import GITHUB, banner, cell, code

ROOT = Path(__file__).resolve().parents[2]
_MISSING = object()


def _type(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "any")
    text = " or ".join(kind) if isinstance(kind, list) else str(kind)
    if "items" in schema and isinstance(schema["items"], dict) and "type" in schema["items"]:
        text += f" of {_type(schema['items'])}"
    return text


def _allowed(schema: dict[str, Any]) -> str:
    parts = []
    if "enum" in schema:
        parts.append("one of " + ", ".join(code(json.dumps(v)) for v in schema["enum"]))
    for key, word in (("minimum", "≥"), ("maximum", "≤"), ("exclusiveMinimum", ">")):
        if key in schema:
            parts.append(f"{word} {schema[key]}")
    for key, word in (("minLength", "length ≥"), ("maxLength", "length ≤"), ("minItems", "items ≥")):
        if key in schema:
            parts.append(f"{word} {schema[key]}")
    if "pattern" in schema:
        parts.append("matches " + code(schema["pattern"]))
    if schema.get("uniqueItems"):
        parts.append("unique items")
    items = schema.get("items")
    if isinstance(items, dict) and (inner := _allowed(items)):
        parts.append("each item " + inner)
    if schema.get("type") == "object" and schema.get("additionalProperties") is False and "properties" not in schema:
        parts.append("no keys")
    return "; ".join(parts)


def _default(values: Any, path: list[str]) -> str:
    node: Any = values
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return ""
        node = node[key]
    if isinstance(node, dict) and node:
        return ""
    return code(json.dumps(node))


def _rows(schema: dict[str, Any], values: Any, path: list[str], required: bool) -> list[str]:
    rows = []
    props = schema.get("properties")
    if path and not (isinstance(props, dict) and props):
        req = "" if required else " (optional)"
        rows.append(f"| {code('.'.join(path))} | {_type(schema)}{req} | {_default(values, path)} | "
                    f"{cell(_allowed(schema))} | {cell(schema.get('description', ''))} |")
    if isinstance(props, dict):
        needed = set(schema.get("required", []))
        for key, sub in props.items():
            rows += _rows(sub, values, [*path, key], key in needed)
    return rows


def render_chart(chart: Path) -> str:
    schema = json.loads((chart / "values.schema.json").read_text())
    values = yaml.safe_load((chart / "values.yaml").read_text())
    rel = chart.relative_to(ROOT)
    lines = [
        banner(f"{rel}/values.schema.json and values.yaml").rstrip("\n"),
        f"# Helm values: {chart.name}",
        "",
        f"Every value of [`{rel}`]({GITHUB}{rel}) that "
        f"[`values.schema.json`]({GITHUB}{rel}/values.schema.json) allows, with the default from "
        f"[`values.yaml`]({GITHUB}{rel}/values.yaml). Helm refuses an unknown key or a value outside "
        "*allowed* before it renders anything. What each choice does, and its kustomize equivalent, is in "
        "[the Helm guide](../guides/helm.md).",
        "",
        "| value | type | default | allowed | meaning |",
        "|---|---|---|---|---|",
        *_rows(schema, values, [], True),
    ]
    return "\n".join(lines) + "\n"


def charts() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "charts").glob("*/values.schema.json"))
