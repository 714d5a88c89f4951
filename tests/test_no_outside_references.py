"""No comment or docstring in the code points at a document outside the repository.

A clone has no ``../shared/``: a reader sent to ``DESIGN.md §4`` or ``allocator.md §F`` finds
nothing.  Code cites the sections of README.md and docs/, ``app/validation/RULES.md`` or a docstring instead,
or says the fact itself.  (Upstream Kubernetes code — ``pkg/...``, Go function names — is fine:
anyone can read it.)
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(
    r"DESIGN(\.md)?\s*§|shared/reference|anchors §|reference note|\b(?!README|RULES)[A-Za-z-]+\.md\s*§"
)


def outside_references(folder: Path) -> list[str]:
    """``path:line: text`` (relative to ``folder``) of each line that cites an outside document."""
    hits = []
    for path in sorted(folder.rglob("*.py")):
        if "data" in path.relative_to(folder).parts or path == Path(__file__).resolve():
            continue  # copies of outside data; this file names what it looks for
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{path.relative_to(folder)}:{number}: {line.strip()}")
    return hits


def test_the_code_cites_only_the_repository() -> None:
    assert outside_references(ROOT / "app") + outside_references(ROOT / "tests") == []


def test_an_outside_reference_is_found(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""See DESIGN.md §4,\nthe README.md §1 that is ours,\nand cel.md §6.4."""\n')
    assert [h.split(": ", 1)[0] for h in outside_references(tmp_path)] == ["m.py:1", "m.py:3"]
