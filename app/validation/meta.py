"""Object metadata: names, namespaces, labels, annotations, template metadata, update rules.

Why: ``metadata`` errors come first in every Kubernetes answer (``ValidateObjectMeta`` runs
before the spec rules), and object names are the most frequent mistake in hand-written
manifests.  draguard checks what the API server checks on the object as sent:

* ``name`` (or ``generateName`` as a prefix) must be a DNS-1123 subdomain (all four DRA kinds);
* ``namespace``, when set on a namespaced kind, must be a DNS-1123 label; a missing namespace
  is filled from the request (kubectl's current namespace), and a namespace on a cluster-scoped
  kind is silently dropped by the API server, so neither is an error;
* label keys/values and annotation keys, reported at ``metadata.labels`` /
  ``metadata.annotations`` (no key in the path, as upstream), annotations ≤ 256 KiB in total.
"""

from __future__ import annotations

from app.k8s import FieldError, ObjectMeta, Path, forbidden, invalid, required, too_long
from app.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

__all__ = [
    "TOTAL_ANNOTATION_SIZE_LIMIT",
    "validate_annotations",
    "validate_labels",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_template_object_meta",
]

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: a generateName prefix may end in ``-``."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def validate_labels(labels: dict[str, str], path: Path) -> list[FieldError]:
    """``ValidateLabels``: keys are qualified names, values label values."""
    errs: list[FieldError] = []
    for key, value in labels.items():
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key))
        errs.extend(invalid(path, value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_annotations(annotations: dict[str, str], path: Path) -> list[FieldError]:
    """``ValidateAnnotations``: keys are (lower-cased) qualified names; 256 KiB in total."""
    errs: list[FieldError] = []
    total = 0
    for key, value in annotations.items():
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
        total += len(key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def validate_object_meta(meta: ObjectMeta, namespaced: bool, path: Path | None = None) -> list[FieldError]:
    """``ValidateObjectMeta`` with ``NameIsDNSSubdomain`` (the name rule of all four DRA kinds)."""
    path = path or Path.root("metadata")
    errs: list[FieldError] = []
    name = meta.name or ""
    generate_name = meta.generate_name or ""
    if generate_name:
        errs.extend(
            invalid(path.child("generateName"), generate_name, msg)
            for msg in is_dns1123_subdomain(_mask_trailing_dash(generate_name))
        )
    if name:
        errs.extend(invalid(path.child("name"), name, msg) for msg in is_dns1123_subdomain(name))
    elif not generate_name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    if namespaced and meta.namespace:
        errs.extend(
            invalid(path.child("namespace"), meta.namespace, msg) for msg in is_dns1123_label(meta.namespace)
        )
    if meta.generation is not None and meta.generation < 0:
        errs.append(invalid(path.child("generation"), meta.generation, "must be greater than or equal to 0"))
    errs.extend(validate_labels(meta.labels, path.child("labels")))
    errs.extend(validate_annotations(meta.annotations, path.child("annotations")))
    return errs


# ObjectMeta fields in Go struct order (JSON names) → model attribute names.
_TEMPLATE_META_FIELDS = (
    ("name", "name"),
    ("generateName", "generate_name"),
    ("namespace", "namespace"),
    ("selfLink", "self_link"),
    ("uid", "uid"),
    ("resourceVersion", "resource_version"),
    ("generation", "generation"),
    ("creationTimestamp", "creation_timestamp"),
    ("deletionTimestamp", "deletion_timestamp"),
    ("deletionGracePeriodSeconds", "deletion_grace_period_seconds"),
    ("ownerReferences", "owner_references"),
    ("finalizers", "finalizers"),
    ("managedFields", "managed_fields"),
)


def validate_template_object_meta(meta: ObjectMeta, path: Path) -> list[FieldError]:
    """``ValidateTemplateObjectMeta``: a claim template's metadata may only carry labels and annotations."""
    errs = validate_annotations(meta.annotations, path.child("annotations"))
    errs.extend(validate_labels(meta.labels, path.child("labels")))
    for json_name, attr in _TEMPLATE_META_FIELDS:
        if getattr(meta, attr):
            errs.append(forbidden(path.child(json_name), "cannot be set"))
    return errs


def validate_object_meta_update(
    new: ObjectMeta, old: ObjectMeta, path: Path | None = None
) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: name, namespace and uid never change."""
    path = path or Path.root("metadata")
    errs: list[FieldError] = []
    if (new.name or "") != (old.name or ""):
        errs.append(invalid(path.child("name"), new.name or "", "field is immutable"))
    if (new.namespace or "") != (old.namespace or "") and new.namespace and old.namespace:
        errs.append(invalid(path.child("namespace"), new.namespace, "field is immutable"))
    if new.uid and old.uid and new.uid != old.uid:
        errs.append(invalid(path.child("uid"), new.uid, "field is immutable"))
    return errs
