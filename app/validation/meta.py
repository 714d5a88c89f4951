"""Object metadata: names, namespaces, labels, annotations, template metadata, update rules.

Why: ``metadata`` errors come first in every Kubernetes answer (``ValidateObjectMeta`` runs
before the spec rules), and object names are the most frequent mistake in hand-written
manifests.  draguard checks what the API server checks on the object as sent:

* ``name`` (or ``generateName`` as a prefix) must be a DNS-1123 subdomain (all four DRA kinds);
* ``namespace``, when set on a namespaced kind, must be a DNS-1123 label; a missing namespace
  is filled from the request (kubectl's current namespace), and a namespace on a cluster-scoped
  kind is silently dropped by the API server, so neither is an error;
* label keys/values and annotation keys, reported at ``metadata.labels`` /
  ``metadata.annotations`` (no key in the path, as upstream), annotations ≤ 256 KiB in total;
* ``ownerReferences`` (apiVersion with a version, kind, name, uid non-empty; no Event owner; one
  controller at most) and ``finalizers`` (qualified names, not both ``orphan`` and
  ``foregroundDeletion``, standard or domain-qualified), at the paths a 1.36 API server reports:
  ``metadata.ownerReferences.uid`` and ``metadata.finalizers`` carry no index (upstream passes
  the list's path to every item), only the "fully qualified" rule does;
* with only ``generateName``, the API server first generates the name (``generateName`` cut to
  58 characters plus 5 random ones) and validates that as ``metadata.name``; draguard shows the
  random part as ``xxxxx``.  DeviceClass does not validate ``generateName`` itself, the other
  kinds do.

``managedFields``, ``resourceVersion``, ``uid``, ``creationTimestamp`` and the like are reset by
the API server on create and never rejected there (checked on a real 1.36 API server).
"""

from __future__ import annotations

from typing import Any

from ..k8s import FieldError, ObjectMeta, Path, forbidden, invalid, required, too_long
from .names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

__all__ = [
    "TOTAL_ANNOTATION_SIZE_LIMIT",
    "generated_name",
    "valid_object_names",
    "validate_annotations",
    "validate_finalizers",
    "validate_labels",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
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


GENERATED_NAME_BASE_LENGTH = 63 - 5  # names.SimpleNameGenerator: maxGeneratedNameLength
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_BANNED_OWNERS = {("", "Event")}  # BannedOwners: core/v1 Event


def generated_name(generate_name: str) -> str:
    """The name the API server would generate, its 5 random characters shown as ``xxxxx``."""
    return generate_name[:GENERATED_NAME_BASE_LENGTH] + "xxxxx"


def valid_object_names(name: str, generate_name: str) -> tuple[bool, bool]:
    """Whether :func:`validate_object_meta` finds nothing in ``name``, and nothing in ``generateName``
    beside it: (a non-empty valid name, a non-empty valid generateName while the name is one).

    Why: such names are alike to every rule (none reads them otherwise), so the webhook's answer
    memo may key objects that differ only in them — a Deployment's replica Pods, the claims made
    from one template — without them (``app/server/answers.py``).
    """
    name_ok = bool(name) and not is_dns1123_subdomain(name)
    generate_ok = name_ok and bool(generate_name) and not is_dns1123_subdomain(_mask_trailing_dash(generate_name))
    return name_ok, generate_ok


def validate_object_meta(
    meta: ObjectMeta, namespaced: bool, path: Path | None = None, *, check_generate_name: bool = True
) -> list[FieldError]:
    """``ValidateObjectMeta`` with ``NameIsDNSSubdomain`` (the name rule of all four DRA kinds)."""
    path = path or Path.root("metadata")
    errs: list[FieldError] = []
    name = meta.name or ""
    generate_name = meta.generate_name or ""
    if generate_name and check_generate_name:
        errs.extend(
            invalid(path.child("generateName"), generate_name, msg)
            for msg in is_dns1123_subdomain(_mask_trailing_dash(generate_name))
        )
    if not name and generate_name:
        name = generated_name(generate_name)
    if name:
        errs.extend(invalid(path.child("name"), name, msg) for msg in is_dns1123_subdomain(name))
    else:
        errs.append(required(path.child("name"), "name or generateName is required"))
    if namespaced and meta.namespace:
        errs.extend(
            invalid(path.child("namespace"), meta.namespace, msg) for msg in is_dns1123_label(meta.namespace)
        )
    if meta.generation is not None and meta.generation < 0:
        errs.append(invalid(path.child("generation"), meta.generation, "must be greater than or equal to 0"))
    # each of these finds nothing in an empty collection: its path is made only for one that is not
    if meta.labels:
        errs.extend(validate_labels(meta.labels, path.child("labels")))
    if meta.annotations:
        errs.extend(validate_annotations(meta.annotations, path.child("annotations")))
    if meta.owner_references:
        errs.extend(validate_owner_references(meta.owner_references, path.child("ownerReferences")))
    if meta.finalizers:
        errs.extend(validate_finalizers(meta.finalizers, path.child("finalizers")))
    return errs


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _owner_json(ref: dict[str, Any]) -> dict[str, Any]:
    """An OwnerReference as Go marshals it: struct order, optional pointers only when set."""
    out: dict[str, Any] = {k: _text(ref.get(k)) for k in ("apiVersion", "kind", "name", "uid")}
    for key in ("controller", "blockOwnerDeletion"):
        if ref.get(key) is not None:
            out[key] = ref[key]
    return out


def _group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: ``v1`` → ("", "v1"), ``apps/v1`` → ("apps", "v1"), else None."""
    if api_version in ("", "/"):
        return ("", "")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    if len(parts) == 2:
        return (parts[0], parts[1])
    return None


def validate_owner_references(refs: list[dict[str, Any]], path: Path) -> list[FieldError]:
    """``ValidateOwnerReferences``: every reference complete, no Event owner, one controller."""
    errs: list[FieldError] = []
    controllers: list[str] = []
    for ref in refs:
        api_version, kind = _text(ref.get("apiVersion")), _text(ref.get("kind"))
        group, version = _group_version(api_version) or ("", "")
        if not version:
            errs.append(invalid(path.child("apiVersion"), api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(path.child("kind"), kind, "must not be empty"))
        for key in ("name", "uid"):
            if not _text(ref.get(key)):
                errs.append(invalid(path.child(key), _text(ref.get(key)), "must not be empty"))
        if (group, kind) in _BANNED_OWNERS and version == "v1":
            errs.append(invalid(path, _owner_json(ref), f"{group}/{version}, Kind={kind} is disallowed from being an owner"))
        if ref.get("controller") is True:
            controllers.append(f"{kind}/{_text(ref.get('name'))}")
    if len(controllers) > 1:
        errs.append(
            invalid(
                path,
                [_owner_json(r) for r in refs],
                'Only one reference can have Controller set to true. Found "true" in references for '
                + " and ".join(controllers),
            )
        )
    return errs


def validate_finalizers(finalizers: list[str], path: Path) -> list[FieldError]:
    """``ValidateFinalizers`` and the API server's "fully qualified" rule for finalizer names."""
    errs: list[FieldError] = []
    for finalizer in finalizers:
        errs.extend(invalid(path, finalizer, msg) for msg in is_qualified_name(finalizer))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set"))
    for i, finalizer in enumerate(finalizers):
        if "/" not in finalizer and finalizer not in STANDARD_FINALIZERS:
            errs.append(
                invalid(path.index(i), finalizer, "name is neither a standard finalizer name nor is it fully qualified")
            )
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
