"""``draguard capacity`` output: text with bars, JSON for scripts, SVG for a report.

Why bars: "how full is the GPU fleet" is a question people would rather look at than read; a
bar per class and capacity, and one per pool/node row, shows at a glance where room is left.
The JSON carries the same figures (quantities as Kubernetes strings, fractions as numbers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..satisfy import CapacityUse, ClassUsage, UsageRow

__all__ = ["FitAnswer", "render_capacity"]

_BAR = 20

FitAnswer = Mapping[str, Any]
"""``{"object": "ResourceClaim team-a/x", "assumes": str | None, "replicas": int | None, "now": {"fit": k,
"exact": bool, "bound": "exact" | "at most" | "at least" | "unknown"}, "ever": {...}, "notes": [...]}``
(:func:`app.review.fit.fit_object`)."""


def _bar(use: CapacityUse, width: int = _BAR) -> str:
    filled = round(use.fraction * width)
    if use.used.nanos > 0 and filled == 0:
        filled = 1
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def _devices(row: UsageRow) -> str:
    return f"{row.devices} devices: {row.free} free, {row.shared} shared, {row.dedicated} dedicated"


def _capacity_lines(capacity: Mapping[str, CapacityUse], indent: str) -> list[str]:
    width = max((len(n) for n in capacity), default=0)
    return [
        f"{indent}{name.ljust(width)}  {_bar(use)} {use.used.short()} of {use.total.short()} used ({use.fraction:.0%})"
        for name, use in sorted(capacity.items())
    ]


def _text(usage: Sequence[ClassUsage], summary: Mapping[str, Any], fit: FitAnswer | None) -> str:
    lines: list[str] = []
    for cls in usage:
        lines.append(f"class {cls.name}: {_devices(cls.total)}")
        lines.extend(_capacity_lines(cls.total.capacity, "  "))
        if cls.rows:
            header = ["POOL", "NODE", "DEVICES", "FREE", "SHARED", "DEDICATED", "USED"]
            table = [[r.pool, r.node, str(r.devices), str(r.free), str(r.shared), str(r.dedicated),
                      "  ".join(f"{n} {_bar(u, 10)} {u.fraction:.0%}" for n, u in sorted(r.capacity.items()))
                      or f"devices {_bar(_device_use(r), 10)} {_device_use(r).fraction:.0%}"] for r in cls.rows]
            widths = [max(len(row[i]) for row in [header, *table]) for i in range(len(header) - 1)]
            for row in [header, *table]:
                lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
        lines.append("")
    if not usage:
        lines.append("no DeviceClass in the inventory")
    lines.append(f"allocated claims: {summary.get('allocated_claims', 0)}"
                 + (f" ({summary['unknown_results']} results name devices not in the inventory)"
                    if summary.get("unknown_results") else ""))
    for gap in summary.get("gaps", ()):
        lines.append(f"note: {gap}")
    if fit is not None:
        lines.append("")
        lines.extend(_fit_lines(fit))
    return "\n".join(lines) + "\n"


def _device_use(row: UsageRow) -> CapacityUse:
    from ..k8s import Quantity

    use = CapacityUse()
    use.add(Quantity((row.devices - row.free) * 10**9), Quantity(row.devices * 10**9))
    return use


def _count(answer: Mapping[str, Any]) -> str:
    if answer.get("fit") is None:
        return "unknown"
    bound = answer.get("bound") or ("exact" if answer.get("exact", True) else "at most")
    return f"{answer['fit']}" if bound == "exact" else f"{bound} {answer['fit']}"


def _fit_lines(fit: FitAnswer) -> list[str]:
    out = [f"fit {fit.get('object', '')}: {_count(fit.get('now', {}))} more fit now; "
           f"{_count(fit.get('ever', {}))} with every device free"]
    if fit.get("replicas") is not None:
        out[0] += f" (it asks for {fit['replicas']} replicas)"
    if fit.get("assumes"):
        out.append(f"  assumes {fit['assumes']}")
    out.extend(f"  {n}" for n in fit.get("notes", ()))
    return out


_FONT = 12
_CHAR = 0.62 * _FONT
"""The advance of one character of the SVG's monospace font (0.6 em in DejaVu Sans Mono, Menlo,
Consolas; a little more for safety): widths are computed from the text, so nothing is clipped."""
_SVG_BAR = 200
_GAP = 12


def _svg_width(text: str) -> float:
    return len(text) * _CHAR


def _svg_rows(usage: Sequence[ClassUsage]) -> list[tuple[str, str, CapacityUse | None, str]]:
    """(label, what the bar measures, the use or None for a heading, the figures) — the text
    output's figures, each bar named by what it measures."""
    rows: list[tuple[str, str, CapacityUse | None, str]] = []
    for cls in usage:
        rows.append((f"class {cls.name}: {_devices(cls.total)}", "", None, ""))
        device = _device_use(cls.total)
        rows.append(("  all nodes", "devices in use", device,
                     f"{cls.total.devices - cls.total.free} of {cls.total.devices} ({device.fraction:.0%})"))
        for name, use in sorted(cls.total.capacity.items()):
            rows.append(("", f"{name} used", use, _figures(use)))
        for r in cls.rows:
            where = f"  {r.node}" + (f" (pool {r.pool})" if r.pool and r.pool != r.node else "")
            if not r.capacity:
                use = _device_use(r)
                rows.append((where, "devices in use", use, f"{r.devices - r.free} of {r.devices} ({use.fraction:.0%})"))
            for i, (name, use) in enumerate(sorted(r.capacity.items())):
                rows.append((where if i == 0 else "", f"{name} used", use, _figures(use)))
    return rows


def _figures(use: CapacityUse) -> str:
    return f"{use.used.short()} of {use.total.short()} ({use.fraction:.0%})"


def _svg(usage: Sequence[ClassUsage]) -> str:
    """Bars for a report: a heading per class (the text's class line), then one bar per figure —
    devices in use, each capacity used — labelled with what it measures and the text's figures.
    Every width comes from the text it holds (monospace), so nothing is clipped at the edge."""
    from html import escape  # here, not at the top: only the SVG needs it, and every lint imports this module

    rows = _svg_rows(usage)
    title = "draguard capacity: used of total, per DeviceClass"
    bars = [r for r in rows if r[2] is not None]
    label_w = max((_svg_width(r[0]) for r in bars), default=0.0)
    what_w = max((_svg_width(r[1]) for r in bars), default=0.0)
    bar_x = 10 + label_w + _GAP + what_w + _GAP
    note_x = bar_x + _SVG_BAR + _GAP
    right = max([10 + _svg_width(title)] + [10 + _svg_width(r[0]) for r in rows if r[2] is None]
                + [note_x + _svg_width(r[3]) for r in bars])
    width = int(right + 10.999)
    height = 30 + 24 * len(rows) + 6
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
           f'font-size="{_FONT}">',
           f'<text x="10" y="18" font-weight="bold">{escape(title)}</text>']
    for n, (label, what, use, figures) in enumerate(rows):
        y = 30 + 24 * n
        if use is None:
            out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{escape(label)}</text>')
            continue
        if label.strip():
            out.append(f'<text x="10" y="{y + 14}" xml:space="preserve">{escape(label)}</text>')
        out.append(f'<text x="{10 + label_w + _GAP:.0f}" y="{y + 14}" fill="#374151">{escape(what)}</text>')
        out.append(f'<rect x="{bar_x:.0f}" y="{y + 3}" width="{_SVG_BAR}" height="14" fill="#e5e7eb"/>')
        out.append(f'<rect x="{bar_x:.0f}" y="{y + 3}" width="{round(_SVG_BAR * use.fraction)}" height="14" fill="#2563eb">'
                   f"<title>{escape(what)}: {escape(figures)}</title></rect>")
        out.append(f'<text x="{note_x:.0f}" y="{y + 14}">{escape(figures)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_capacity(usage: Sequence[ClassUsage], fmt: str, *, summary: Mapping[str, Any], fit: FitAnswer | None = None) -> str:
    """``fmt`` is ``text``, ``json`` or ``svg``."""
    if fmt == "json":
        doc: dict[str, Any] = {"classes": [c.as_json() for c in usage], "summary": dict(summary)}
        if fit is not None:
            doc["fit"] = dict(fit)
        return json.dumps(doc, indent=2) + "\n"
    if fmt == "svg":
        return _svg(usage)
    return _text(usage, summary, fit)
