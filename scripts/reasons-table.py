"""Rewrite README.md's "Reasons" table from the reason registry (app/k8s/reasons.py).

Run by ``make reasons`` after adding or changing a reason; tests/report/test_reason_registry.py
fails while the README and the registry disagree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from draguard.report.rules import reasons_table

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN = "<!-- reasons table: generated from app/k8s/reasons.py by `make reasons` -->\n"
END = "<!-- end of reasons table -->"


def rewritten(text: str) -> str:
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        sys.exit("README.md has no reasons-table markers")
    return pattern.sub(lambda _: BEGIN + reasons_table() + END, text, count=1)


if __name__ == "__main__":
    README.write_text(rewritten(README.read_text()))
