"""Write the reasons from the reason registry (app/k8s/reasons.py): the reference page
docs/reference/reasons.md (the full table) and README.md's short index of them.

Run by ``make reasons`` after adding or changing a reason (``make docs`` writes the page too);
tests/test_reason_registry.py fails while README, page and registry disagree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "docs"))

from page_reasons import readme_index, render  # noqa: E402  (scripts/docs/page_reasons.py)

README = ROOT / "README.md"
PAGE = ROOT / "docs" / "reference" / "reasons.md"
BEGIN = "<!-- reasons index: generated from app/k8s/reasons.py by `make reasons` -->\n"
END = "<!-- end of reasons index -->"


def rewritten(text: str) -> str:
    """``text`` (the README) with the index between the markers rendered from the registry."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        sys.exit("README.md has no reasons-index markers")
    return pattern.sub(lambda _: BEGIN + readme_index() + END, text, count=1)


if __name__ == "__main__":
    README.write_text(rewritten(README.read_text()))
    PAGE.write_text(render())
