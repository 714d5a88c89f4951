"""Core ``v1.NodeSelector`` matching against a Node's name and labels.

Why re-implemented here: slices (and devices with ``perDeviceNodeSelection``) say which nodes
can reach them with the same selector type Pods use; the scheduler evaluates it with
``nodeaffinity.NewNodeSelector(...).Match(node)``.  Terms are ORed, requirements inside a term
ANDed, and a term without requirements matches nothing.  A selector that cannot be evaluated
(unknown operator, ``Gt`` with a non-integer) returns ``None`` so that callers can treat it as
"maybe" — draguard must never reject a claim because it could not read a selector.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..k8s import NodeSelector, NodeSelectorRequirement

__all__ = ["match_node_selector"]


def _match_requirement(req: NodeSelectorRequirement, value: str | None) -> bool | None:
    op = req.operator
    if op == "In":
        return value is not None and value in req.values
    if op == "NotIn":
        return value is None or value not in req.values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if len(req.values) != 1:
            return None
        try:
            bound = int(req.values[0])
        except ValueError:
            return None
        if value is None:
            return False
        try:
            actual = int(value)
        except ValueError:
            return False
        return actual > bound if op == "Gt" else actual < bound
    return None


def match_node_selector(selector: NodeSelector, name: str, labels: Mapping[str, str]) -> bool | None:
    """``True``/``False`` when decidable; ``None`` when the selector cannot be evaluated."""
    unknown = False
    for term in selector.node_selector_terms:
        if not term.match_expressions and not term.match_fields:
            continue
        result: bool | None = True
        for req in term.match_expressions:
            got = _match_requirement(req, labels.get(req.key))
            if got is None:
                result = None
            elif not got:
                result = False
                break
        if result is not False:
            for req in term.match_fields:
                if req.key != "metadata.name" or req.operator not in ("In", "NotIn"):
                    result = None
                    continue
                if not _match_requirement(req, name):
                    result = False
                    break
        if result is True:
            return True
        if result is None:
            unknown = True
    return None if unknown else False
