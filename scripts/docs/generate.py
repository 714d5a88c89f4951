"""Write the reference pages of the docs site from the code: ``docs/reference/``.

    python scripts/docs/generate.py            # (re)write docs/reference/ (what `make docs` runs)
    python scripts/docs/generate.py --out DIR  # write them elsewhere (tests compare the two)
    python scripts/docs/generate.py --check    # exit 1 naming the stale pages, write nothing

Why generated: a reference written by hand drifts from the code it describes.  Each page is read
from the one place its facts live — the argument parser (cli.md), the reason registry
(reasons.md), the version tables (gates.md), the chart's values schema (helm-values*.md) — and
the findings JSON Schema is built from the registry and the severities; tests/docs fails while a
committed page differs from what this writes.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import page_cli  # noqa: E402  (modules beside this script: one per page kind)
import page_findings  # noqa: E402
import page_gates  # noqa: E402
import page_helm  # noqa: E402
import page_reasons  # noqa: E402

ROOT = HERE.parents[1]
REFERENCE = ROOT / "docs" / "reference"


def pages() -> dict[str, Callable[[], str]]:
    """File name under docs/reference → the function that renders it."""
    out: dict[str, Callable[[], str]] = {
        "cli.md": page_cli.render,
        "reasons.md": page_reasons.render,
        "gates.md": page_gates.render,
        "findings.md": page_findings.render,
        "findings.schema.json": page_findings.schema_text,
    }
    charts = page_helm.charts()
    for chart in charts:
        name = "helm-values.md" if len(charts) == 1 else f"helm-values-{chart.name}.md"
        out[name] = functools.partial(page_helm.render_chart, chart)
    return out


def render_all() -> dict[str, str]:
    return {name: render() for name, render in pages().items()}


def write(out: Path) -> list[str]:
    """Write every page into ``out``; the names of those whose text changed."""
    out.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in render_all().items():
        target = out / name
        if not target.is_file() or target.read_text() != text:
            target.write_text(text)
            changed.append(name)
    return changed


def stale(out: Path = REFERENCE) -> list[str]:
    """Pages under ``out`` that are missing or differ from what the code renders now."""
    return [name for name, text in render_all().items()
            if not (out / name).is_file() or (out / name).read_text() != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write docs/reference/ from the code")
    parser.add_argument("--out", type=Path, default=REFERENCE, help="folder to write (default docs/reference)")
    parser.add_argument("--check", action="store_true", help="only say which pages are stale (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        names = stale(args.out)
        for name in names:
            print(f"{args.out / name}: stale (run `make docs`)")
        return 1 if names else 0
    for name in write(args.out):
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
