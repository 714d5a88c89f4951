"""API-server parity for the DRA parts of a PodSpec (``pkg/apis/core/validation``, Kubernetes 1.36).

Why only these parts: draguard reviews a pod for what DRA makes of it — its claims, the
containers' references to them, the extended resources a DeviceClass may back, and the required
node affinity that decides where it may run.  The API server validates every other field of a
pod too (images, ports, probes…); draguard reports none of those, so it can never raise an
error on a pod the API server accepts because of a rule it half-knows.

The same rules run on a Pod and on every pod template (``ValidatePodTemplateSpec``); ``base`` is
the path of the pod spec (``spec`` for a Pod, ``spec.template.spec`` for a Deployment), so the
paths are Kubernetes' own.  The static-pod rule needs pod metadata, which templates do not pass.
Rows and texts: RULES.md "Pod and pod template".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..k8s import (
    Container,
    ContainerClaimRef,
    FieldError,
    Path,
    PodResourceClaim,
    PodSpec,
    Quantity,
    duplicate,
    forbidden,
    invalid,
    not_found,
    required,
)
from .names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from .node_selectors import validate_node_selector

__all__ = [
    "IMPLICIT_EXTENDED_PREFIX",
    "MIRROR_POD_ANNOTATION",
    "effective_requests",
    "is_extended_resource",
    "validate_pod_spec",
]

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
IMPLICIT_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"
"""``resource.ResourceDeviceClassPrefix``: a container may ask for a DeviceClass by this name."""


_EMPTY_NAME = Path().key("")
"""``field.NewPath("")``, which the API server renders as ``[]`` (the static-pod error's path)."""


def is_native_resource(name: str) -> bool:
    """``helper.IsNativeResource``: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """``helper.IsExtendedResourceName``: not native and not a quota ``requests.`` name."""
    return not is_native_resource(name) and not name.startswith("requests.")


def effective_requests(container: Container) -> dict[str, Quantity]:
    """The container's requests after defaulting: a limit without a request is also the request."""
    res = container.resources
    if res is None:
        return {}
    return {**res.limits, **res.requests}


def validate_pod_spec(
    spec: PodSpec,
    base: Path,
    *,
    annotations: Mapping[str, str] | None = None,
) -> list[FieldError]:
    """The DRA rules of ``ValidatePodSpec`` for the pod spec at ``base``.

    ``annotations`` are the Pod's own (None for a template): a mirror (static) pod may not use
    resource claims at all.
    """
    errs: list[FieldError] = []
    mirror = annotations is not None and MIRROR_POD_ANNOTATION in annotations
    claims_path = base.child("resourceClaims")
    seen: set[str] = set()
    for i, claim in enumerate(spec.resource_claims):
        if mirror:
            errs.append(forbidden(_EMPTY_NAME, "static pods do not support resource claims"))
            continue
        errs.extend(_pod_claim(claim, claims_path.index(i), seen))
    names = {c.name for c in spec.resource_claims if c.name}
    for field_name, containers in (
        ("containers", spec.containers),
        ("initContainers", spec.init_containers),
        ("ephemeralContainers", spec.ephemeral_containers),
    ):
        for i, container in enumerate(containers):
            cpath = base.child(field_name).index(i)
            if field_name == "ephemeralContainers" and container.resources is not None and _set(container):
                errs.append(forbidden(cpath.child("resources"), "cannot be set for an Ephemeral Container"))
            errs.extend(_container_resources(container, cpath.child("resources"), names))
    if spec.resources is not None and spec.resources.claims:
        claims = base.child("resources", "claims")
        errs.append(forbidden(claims, "claims may not be set for Resources at pod-level"))
        errs.extend(_container_claims(spec.resources.claims, names, claims))
    affinity = spec.required_affinity
    if affinity is not None:
        errs.extend(validate_node_selector(
            affinity, base.child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")))
    return errs


def _set(container: Container) -> bool:
    res = container.resources
    return res is not None and bool(res.limits or res.requests or res.claims)


def _pod_claim(claim: PodResourceClaim, path: Path, seen: set[str]) -> list[FieldError]:
    """``validatePodResourceClaim``: a DNS-label name, unique, and exactly one source."""
    errs: list[FieldError] = []
    name_path = path.child("name")
    if not claim.name:
        errs.append(required(name_path))
    elif claim.name in seen:
        errs.append(duplicate(name_path, claim.name))
    else:
        problems = is_dns1123_label(claim.name)
        errs.extend(invalid(name_path, claim.name, msg) for msg in problems)
        if not problems:
            seen.add(claim.name)
    by_name, by_template = claim.resource_claim_name, claim.resource_claim_template_name
    if by_name is not None and by_template is not None:
        errs.append(invalid(path, _entry_value(claim),
                            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
    if by_name is None and by_template is None:
        errs.append(invalid(path, _entry_value(claim),
                            "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
    if by_name is not None:
        errs.extend(invalid(path.child("resourceClaimName"), by_name, m) for m in is_dns1123_subdomain(by_name))
    if by_template is not None:
        errs.extend(invalid(path.child("resourceClaimTemplateName"), by_template, m)
                    for m in is_dns1123_subdomain(by_template))
    return errs


def _entry_value(claim: PodResourceClaim) -> dict[str, str | None]:
    """The entry as the API server prints it: its internal Go struct as JSON (Go field names)."""
    return {
        "Name": claim.name,
        "ResourceClaimName": claim.resource_claim_name,
        "ResourceClaimTemplateName": claim.resource_claim_template_name,
    }


def _container_resources(container: Container, path: Path, names: set[str]) -> list[FieldError]:
    res = container.resources
    if res is None:
        return []
    errs = _extended_resources(res.limits, {**res.limits, **res.requests}, path)
    errs.extend(_container_claims(res.claims, names, path.child("claims")))
    return errs


def _extended_resources(
    limits: Mapping[str, Quantity], requests: Mapping[str, Quantity], path: Path
) -> list[FieldError]:
    """The rules of ``ValidateContainerResourceRequirements`` that DRA-backed resources meet.

    Implicit DeviceClass names must be qualified names; explicit extended names (what
    ``extendedResourceName`` maps) count whole devices, need a limit and a request equal to it.
    ``requests`` are the defaulted ones (a limit alone is also the request).
    """
    errs: list[FieldError] = []
    for kind, table in (("limits", limits), ("requests", requests)):
        for name, quantity in table.items():
            here = path.child(kind).key(name)
            if name.startswith(IMPLICIT_EXTENDED_PREFIX):
                errs.extend(invalid(here, name, msg) for msg in is_qualified_name(name))
            elif is_extended_resource(name) and quantity.milli_value() % 1000 != 0:
                errs.append(invalid(here, str(quantity), "must be an integer"))
    for name, quantity in requests.items():
        if not is_extended_resource(name):
            continue
        limit = limits.get(name)
        if limit is None:
            errs.append(required(path.child("limits"), "Limit must be set for non overcommitable resources"))
        elif quantity.cmp(limit) != 0:
            errs.append(invalid(path.child("requests"), str(quantity), f"must be equal to {name} limit of {limit}"))
    return errs


def _container_claims(claims: Sequence[ContainerClaimRef], pod_names: set[str], path: Path) -> list[FieldError]:
    """``validateResourceClaimNames``: each a pod claim, no entry repeated or overlapping."""
    errs: list[FieldError] = []
    used: list[str] = []  # "name" for a whole claim, "name/request" for one request
    for j, claim in enumerate(claims):
        here = path.index(j)
        name = claim.name
        if not name:
            errs.append(required(here))
            continue
        if name in used:
            errs.append(duplicate(here, name))  # every request of that claim is referenced already
        else:
            key = name
            if claim.request:
                errs.extend(invalid(here.child("request"), claim.request, m) for m in is_dns1123_label(claim.request))
                key = f"{name}/{claim.request}"
            if key in used:
                errs.append(duplicate(here, key))
            elif not claim.request:
                errs.extend(duplicate(here, name) for k in used if "/" in k and k.split("/", 1)[0] == name)
            if key not in used:  # a set, in insertion order
                used.append(key)
        if name not in pod_names:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += f": {', '.join(sorted(pod_names))}" if pod_names else " which is empty"
            errs.append(_not_found(here, name, detail))
    return errs


def _not_found(path: Path, value: str, detail: str) -> FieldError:
    err = not_found(path, value)
    return FieldError(err.type, err.path, err.value, detail)
