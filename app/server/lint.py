"""``POST /lint``: manifests in, the findings report out — the lint door over HTTP.

Why it shares everything with ``draguard lint``: the same decoding, the same pipeline and the
same renderers, so a CI job calling the endpoint and one running the CLI get the same report.
The server's current inventory (static or live) stands in for ``--inventory``; inventory
objects in the body are merged into it by the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..inventory import InventorySource
from ..k8s import FeatureGateError, decode_bytes, describe, parse_target
from ..report import FORMATS, Format, render
from ..review import ReviewOptions, review_documents

__all__ = ["BODY_NAME", "LintResult", "lint_bytes", "options_for_query", "parse_format"]

BODY_NAME = "<body>"
"""The file name findings carry when ``/lint?file=`` names none: positions are always given
when the body has lines, and a name in angle brackets cannot be mistaken for a real path."""

MEDIA_TYPES: dict[str, str] = {
    "json": "application/json",
    "text": "text/plain; charset=utf-8",
    "junit": "application/xml",
    "sarif": "application/sarif+json",
}


@dataclass(frozen=True)
class LintResult:
    """What ``/lint`` answers: the rendered body, its media type and the counts for the response headers."""

    body: str
    media_type: str
    errors: int
    warnings: int
    objects: int


def parse_format(value: str | None) -> Format:
    """``?format=`` (default json); raises ValueError naming the allowed values."""
    fmt = (value or "json").lower()
    for known in FORMATS:
        if fmt == known:
            return known
    raise ValueError(f"unknown format {describe(value)}: use one of {', '.join(FORMATS)}")


def options_for_query(options: ReviewOptions, params: Mapping[str, str]) -> ReviewOptions:
    """``?kubernetes-version=&feature-gates=`` override the server's target for one request.

    A version alone keeps the server's gate settings (re-checked at that version); gates alone
    keep the server's version.  Raises ValueError naming the bad parameter (the route says 400).
    """
    version = params.get("kubernetes-version")
    gates = params.get("feature-gates")
    if version is None and gates is None:
        return options
    current = options.target
    try:
        target = parse_target(version or current.version, gates if gates is not None else current.gates_text())
    except FeatureGateError as exc:
        raise ValueError(f"query parameter {exc.parameter}: {exc}") from exc
    return replace(options, target=target)


def lint_bytes(
    body: bytes, fmt: Format, inventory: InventorySource, options: ReviewOptions, *, source: str = ""
) -> LintResult:
    """Decode ``body`` (YAML or JSON, many documents) and review it against ``inventory``.

    ``source`` names the body in findings (``?file=``); empty means :data:`BODY_NAME`.
    """
    decoded = decode_bytes(body, source=source or BODY_NAME)
    snapshot = inventory.snapshot()
    for_target = getattr(inventory, "snapshot_for", None)
    if snapshot is not None and for_target is not None:  # files: stored as the asked target stores them
        snapshot = for_target(options.target)
    review = review_documents(
        decoded.documents,
        inventory=snapshot,
        inventory_objects=inventory.objects() if snapshot is not None else (),
        inventory_problem=inventory.problem(),
        options=options,
        decode_findings=decoded.findings,
    )
    summary = review.summary()
    return LintResult(render(review, fmt), MEDIA_TYPES[fmt], summary["errors"], summary["warnings"],
                      summary["objects"])
