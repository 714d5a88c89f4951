"""Core ``NodeSelector`` validation as used by ResourceSlices and allocation results.

Why: a ResourceSlice's ``nodeSelector`` (and a device's, with per-device node selection) goes
through ``corevalidation.ValidateNodeSelector`` with invalid label values *not* allowed; the
texts are those of ``pkg/apis/core/validation``.
"""

from __future__ import annotations

from ..k8s import (
    FieldError,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Path,
    forbidden,
    invalid,
    required,
)
from .names import is_dns1123_subdomain, is_valid_label_value, validate_label_name

__all__ = ["validate_node_selector"]


def validate_node_selector(selector: NodeSelector, path: Path) -> list[FieldError]:
    """``ValidateNodeSelector``: at least one term; each term's expressions and fields."""
    terms_path = path.child("nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(selector.node_selector_terms):
        errs.extend(_validate_term(term, terms_path.index(i)))
    return errs


def _validate_term(term: NodeSelectorTerm, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(term.match_expressions):
        errs.extend(_validate_requirement(req, path.child("matchExpressions").index(j)))
    for j, req in enumerate(term.match_fields):
        errs.extend(_validate_field_requirement(req, path.child("matchFields").index(j)))
    return errs


def _validate_requirement(req: NodeSelectorRequirement, path: Path) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement``: operator/values pairing, key and value formats."""
    errs: list[FieldError] = []
    op = req.operator
    if op in ("In", "NotIn"):
        if not req.values:
            errs.append(
                required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif op in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(
                forbidden(
                    path.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
    elif op in ("Gt", "Lt"):
        if len(req.values) != 1:
            errs.append(
                required(
                    path.child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"
                )
            )
    else:
        errs.append(invalid(path.child("operator"), op, "not a valid selector operator"))
    errs.extend(validate_label_name(req.key, path.child("key")))
    for i, value in enumerate(req.values):
        errs.extend(invalid(path.child("values").index(i), value, msg) for msg in is_valid_label_value(value))
    return errs


def _validate_field_requirement(req: NodeSelectorRequirement, path: Path) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` with In/NotIn and one value."""
    errs: list[FieldError] = []
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.append(
                required(
                    path.child("values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(path.child("operator"), req.operator, "not a valid selector operator"))
    if req.key != "metadata.name":
        errs.append(invalid(path.child("key"), req.key, "not a valid field selector key"))
    else:
        for i, value in enumerate(req.values):
            errs.extend(
                invalid(path.child("values").index(i), value, msg) for msg in is_dns1123_subdomain(value)
            )
    return errs
