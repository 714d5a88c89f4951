"""The "Reasons" reference page: every reason a finding can carry, from the reason registry
(app/k8s/reasons.py, rendered by ``reasons_table`` so the SARIF rules' anchors are the same)."""

from __future__ import annotations

from docs_common import banner
from draguard.k8s import REASONS
from draguard.report.rules import reasons_table

INTRO = """\
# Reasons

Each `reason` a finding can carry; SARIF rules link here by anchor. The *family* says what kind of
statement it is: `parity` the API server's own verdict, `decode` reading the document, `inventory`
one claim against the inventory, `workload` pods and their replicas, `lint` draguard's own policies
(errors with `--strict`; the only reasons besides proofs that `--deny` accepts), `review` the
review's own limits. The severity is the default one. How findings are written out is in
[Findings](findings.md) and [the findings guide](../guides/findings.md).

"""


def render() -> str:
    return banner("app/k8s/reasons.py") + INTRO + reasons_table()


def readme_index() -> str:
    """README.md's short index of the reasons: one line per family, each name carrying the anchor
    SARIF ``helpUri``s point at (``README.md#reason-…``, app/report/rules.py) and linking to its
    row on the reference page."""
    families: dict[str, list[str]] = {}
    for info in REASONS.values():
        families.setdefault(str(info.family), []).append(
            f'<a id="{info.anchor}"></a>[`{info.reason}`](docs/reference/reasons.md#{info.anchor})')
    return "".join(f"- **{family}**: {', '.join(names)}\n" for family, names in families.items())
