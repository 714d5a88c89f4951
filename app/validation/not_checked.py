"""The cheap checks of kinds draguard recognises but does not validate in depth.

Why: ``resource.k8s.io/v1alpha3`` ResourcePoolStatusRequest (KEP-5677) and ``scheduling.k8s.io``
Workload/PodGroup sit beside DRA manifests; calling them an unknown kind would be wrong, and
validating them fully is a project of its own (where the target serves Workload/PodGroup, a lint run
reads the fields gangs need and checks those: :mod:`app.k8s.podgroup`).  Only what is
certain and cheap is checked: a ResourcePoolStatusRequest's metadata (``ValidateResourcePoolStatusRequest``
in 1.36–1.38 is exactly ``ValidateObjectMeta``, cluster-scoped, DNS-subdomain name; its spec rules
are declarative and not mirrored).  Everything else is reported as not checked (skipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..k8s import FieldError, ObjectMeta
from .meta import validate_object_meta

__all__ = ["validate_not_checked_kind"]


def validate_not_checked_kind(kind: str, obj: Mapping[str, Any]) -> list[FieldError] | None:
    """Field errors of the cheap checks, or None when nothing about the object is checked."""
    api_version = obj.get("apiVersion")
    if kind != "ResourcePoolStatusRequest" or not isinstance(api_version, str):
        return None
    if not api_version.startswith("resource.k8s.io/"):
        return None
    meta = obj.get("metadata")
    try:
        model = ObjectMeta.model_validate(meta if isinstance(meta, dict) else {})
    except ValidationError:
        return None  # a malformed metadata: not this module's business (nothing is claimed)
    return validate_object_meta(model, namespaced=False, check_generate_name=False)
