"""Finding reasons as report rules: SARIF rules and the README's "Reasons" table.

Why from the registry: SARIF consumers (GitHub code scanning) show a rule's ``name`` next to its
``id`` and link its ``helpUri``; a name equal to the id says nothing, and a link to the top of a
page makes people search.  Each rule is one row of :data:`app.k8s.REASONS`, linked to the
anchor ``reason-<id in lower case>`` of its row in README.md's "Reasons" table, which
:func:`reasons_table` renders from the same rows (a test keeps README, registry and emitted
reasons in step; ``make reasons`` rewrites the table).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..k8s import REASONS, ReasonInfo, reason_anchor

__all__ = ["DOCS_URI", "RULES", "Rule", "reasons_table", "rule_for"]

DOCS_URI = "https://github.com/draguard/draguard/blob/main/docs/reference/reasons.md"


@dataclass(frozen=True)
class Rule:
    """One finding reason as a SARIF rule: id, short name, description and its README anchor."""

    id: str
    name: str
    description: str

    @property
    def help_uri(self) -> str:
        return f"{DOCS_URI}#{reason_anchor(self.id)}"


def _rule(info: ReasonInfo) -> Rule:
    return Rule(info.reason, info.sarif_name, info.description)


RULES: dict[str, Rule] = {reason: _rule(info) for reason, info in REASONS.items()}


def rule_for(reason: str) -> Rule:
    """The rule of ``reason``; a string that is no registered reason still gets a distinct name."""
    known = RULES.get(reason)
    return known if known is not None else Rule(reason, f"{reason}Finding", reason)


def reasons_table() -> str:
    """The README's "Reasons" table, one row per registered reason, in registry order."""
    lines = [
        "| reason | family | severity | SARIF rule name | meaning |",
        "|---|---|---|---|---|",
    ]
    for info in REASONS.values():
        lines.append(
            f'| <a id="{info.anchor}"></a>`{info.reason}` | {info.family} | {info.severity.value} '
            f"| {info.sarif_name} | {info.description} |"
        )
    return "\n".join(lines) + "\n"
