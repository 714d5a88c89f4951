"""Coverage-guided fuzzing of decode → validation → CEL → satisfiability with atheris (libFuzzer).

Run by ``make fuzz`` after the generated-input run, when atheris installs (it ships wheels for
Linux and CPython ≤ 3.11).  Any exception that escapes ``decode_bytes`` or ``review_documents``
is a crash: libFuzzer stops and writes the input to ``crash-*`` for a regression test.

    python tests/fuzz/atheris_target.py -runs=20000 .fuzz/corpus examples/claims/good
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

with atheris.instrument_imports(include=["draguard"]):
    from draguard.inventory import StaticInventory
    from draguard.k8s.decode import decode_bytes
    from draguard.report.render import render
    from draguard.review.pipeline import ReviewOptions, review_documents

ROOT = Path(__file__).resolve().parents[2]
_snapshot = StaticInventory([str(ROOT / "examples" / "inventory")]).snapshot()
_OPTIONS = ReviewOptions(show_mutations=True)


def one_input(data: bytes) -> None:
    decoded = decode_bytes(data, source="fuzz.yaml")
    review = review_documents(decoded.documents, inventory=_snapshot, options=_OPTIONS,
                              decode_findings=decoded.findings)
    render(review, "json")
    render(review, "text")


def main() -> None:
    for folder in sys.argv[1:]:
        if not folder.startswith("-"):
            Path(folder).mkdir(parents=True, exist_ok=True)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
