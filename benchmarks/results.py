"""benchmarks/RESULTS.md: each script owns one section between its own markers and rewrites only that."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(start: str, end: str, section: str) -> None:
    """Put ``section`` (which begins with ``start`` and ends with ``end``) in place of the old one,
    or append it; the rest of RESULTS.md — other scripts' sections and prose — stays as it is."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if start in text and end in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)
