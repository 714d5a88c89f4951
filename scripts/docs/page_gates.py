"""The "Feature gates" reference page: the DRA gates of every Kubernetes version draguard can
answer for, from the version tables of app/k8s/features.py (stage, default, locked, removed,
dependencies), the fields each gate drops when off (app/k8s/gated.py) and the resource.k8s.io
versions each minor serves (app/k8s/versions.py)."""

from __future__ import annotations

from docs_common import banner, cell, code
from draguard.k8s import features
from draguard.k8s.features import DEFAULT_VERSION, DRA_GATES, SUPPORTED_VERSIONS, Target
from draguard.k8s.gated import gated_groups
from draguard.k8s.versions import served_versions

KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")

INTRO = f"""\
# Feature gates per Kubernetes version

What draguard answers depends on the **target**: `--kubernetes-version` (default **{DEFAULT_VERSION}**)
and `--feature-gates Name=true,...` on top of that version's defaults, as kube-apiserver takes them.
This page is read from draguard's version tables; how they were checked, and what else differs
between versions, is in [Kubernetes versions and feature gates](../guides/versions.md).

A cell reads *stage, default*: `on`/`off` is the gate's default at that version, **locked** means
kube-apiserver refuses the other value, *—* that the gate does not exist there yet, *removed* that
it is gone from kube-apiserver (always on; naming it is "unrecognized feature gate").

"""


def _cell(gate: str, version: str) -> str:
    state = Target(version).state(gate)
    if state is None:
        return "removed (on)" if Target(version).enabled(gate) else "—"
    text = f"{state.stage}, {'on' if state.default else 'off'}"
    return f"**{text}, locked**" if state.locked else text


def _dependencies() -> dict[str, tuple[str, ...]]:
    # kube-apiserver's start-up check, kept beside the table (scripts/gate-table.py reads it too)
    table: dict[str, tuple[str, ...]] = getattr(features, "_DEPENDENCIES", {})
    return table


def _dropped() -> dict[str, list[str]]:
    """gate -> ``Kind: field`` texts of what the API server drops while the gate is off."""
    out: dict[str, list[str]] = {}
    for kind in KINDS:
        for group in gated_groups(kind):
            for gate in group.gates:
                for pattern in group.patterns:
                    out.setdefault(gate, []).append(f"{kind} `{'.'.join(pattern)}`")
    return out


def render() -> str:
    header = " | ".join(f"{v} (default)" if v == DEFAULT_VERSION else v for v in SUPPORTED_VERSIONS)
    lines = [banner("app/k8s/features.py, app/k8s/gated.py and app/k8s/versions.py") + INTRO.rstrip("\n"), ""]
    lines += ["## Gates", "", f"| gate | {header} |", "|---|" + "---|" * len(SUPPORTED_VERSIONS)]
    for gate in DRA_GATES:
        lines.append(f"| {code(gate)} | " + " | ".join(_cell(gate, v) for v in SUPPORTED_VERSIONS) + " |")
    lines += ["", "## Dependencies", "",
              "A gate that is on needs these on too; kube-apiserver refuses to start otherwise, and so does draguard.", "",
              "| gate | needs |", "|---|---|"]
    for gate, needs in sorted(_dependencies().items()):
        lines.append(f"| {code(gate)} | {', '.join(code(n) for n in needs)} |")
    lines += ["", "## Fields dropped while a gate is off", "",
              "With the gate off the API server still decodes these fields, then drops them before validation "
              "(`FieldDropped`, a warning, names the field, the gate and the version). `[]` is every list item, "
              "`{}` every map value.", "", "| gate | fields |", "|---|---|"]
    for gate, fields in sorted(_dropped().items()):
        lines.append(f"| {code(gate)} | {cell('; '.join(fields))} |")
    lines += ["", "## Served API versions", "",
              "The `resource.k8s.io` versions each Kubernetes minor serves, newest first; an object in another "
              "version is a `DecodeError` that names these.", "",
              "| kind | " + " | ".join(SUPPORTED_VERSIONS) + " |", "|---|" + "---|" * len(SUPPORTED_VERSIONS)]
    for kind in KINDS:
        row = [", ".join(code(api.split("/", 1)[1]) for api in served_versions(kind, v)) for v in SUPPORTED_VERSIONS]
        lines.append(f"| {kind} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
