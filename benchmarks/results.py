"""benchmarks/RESULTS.md: each script owns one section between its own markers and rewrites only that.

``make bench`` also keeps the raw output of its whole run: ``python benchmarks/results.py record
FOLDER`` puts every ``FOLDER/bench_*.txt`` (one per script, written by the Makefile) into the
``make-bench`` section, with when it ran and how loaded the machine was.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
BENCH_START, BENCH_END = "<!-- make-bench:start -->", "<!-- make-bench:end -->"


def write_section(start: str, end: str, section: str) -> None:
    """Put ``section`` (which begins with ``start`` and ends with ``end``) in place of the old one,
    or append it; the rest of RESULTS.md — other scripts' sections and prose — stays as it is."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if start in text and end in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)


def record(folder: Path) -> None:
    """The ``make-bench`` section from the outputs of one ``make bench`` run."""
    parts = [BENCH_START, "## Raw output of the last `make bench`", ""]
    stamp = folder / "started"
    if stamp.exists():
        parts.append(f"Started {stamp.read_text().strip()}; finished {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; "
                     f"load average at the end: {Path('/proc/loadavg').read_text().split()[0]} "
                     "(2 cores shared with other engineers' test suites).")
    for out in sorted(folder.glob("bench_*.txt")):
        parts += ["", f"`python benchmarks/{out.stem}.py`:", "", "```", out.read_text().rstrip(), "```"]
    parts.append(BENCH_END)
    write_section(BENCH_START, BENCH_END, "\n".join(parts))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
    else:
        raise SystemExit("usage: python benchmarks/results.py record FOLDER")
