"""DeviceClass validation (``ValidateDeviceClass`` / ``ValidateDeviceClassUpdate``, Kubernetes 1.36).

Why the ``stored`` logic on update: a class whose selectors (or config) are unchanged is not
re-checked, so a class created under older CEL or size rules stays updatable — upstream treats
an unchanged list as already stored.
"""

from __future__ import annotations

from ..k8s import DeviceClass, DeviceClassConfiguration, DeviceClassSpec, FieldError, Path, invalid
from .config import validate_device_configuration
from .device_selectors import validate_selectors
from .helpers import validate_slice
from .meta import validate_object_meta, validate_object_meta_update
from .names import is_qualified_name

__all__ = ["is_extended_resource_name", "validate_device_class", "validate_device_class_update"]

DEVICE_CONFIG_MAX_SIZE = 32


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: domain-prefixed, not ``kubernetes.io/``, not ``requests.``,
    and still a qualified name once prefixed with ``requests.`` (for quota)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def validate_device_class(obj: DeviceClass) -> list[FieldError]:
    """``ValidateDeviceClass``: metadata (cluster-scoped, DNS-subdomain name) and spec."""
    errs = validate_object_meta(obj.metadata, namespaced=False, check_generate_name=False)
    errs.extend(_validate_spec(obj.spec, None, Path.root("spec")))
    return errs


def validate_device_class_update(obj: DeviceClass, old: DeviceClass) -> list[FieldError]:
    """``ValidateDeviceClassUpdate``: metadata, metadata update rules, spec relative to the old one."""
    errs = validate_object_meta(obj.metadata, namespaced=False, check_generate_name=False)
    errs.extend(validate_object_meta_update(obj.metadata, old.metadata))
    errs.extend(_validate_spec(obj.spec, old.spec, Path.root("spec")))
    return errs


def _validate_spec(spec: DeviceClassSpec, old: DeviceClassSpec | None, path: Path) -> list[FieldError]:
    """Selectors (≤ 32, CEL), config (≤ 32, opaque), extendedResourceName."""
    stored = old is not None and old.selectors == spec.selectors
    errs = validate_selectors(spec.selectors, path.child("selectors"), stored)
    config_stored = old is not None and old.config == spec.config

    def check_config(config: DeviceClassConfiguration, p: Path) -> list[FieldError]:
        return validate_device_configuration(config.opaque, p, config_stored)

    errs.extend(validate_slice(spec.config, DEVICE_CONFIG_MAX_SIZE, check_config, path.child("config")))
    if spec.extended_resource_name is not None and not is_extended_resource_name(spec.extended_resource_name):
        errs.append(
            invalid(
                path.child("extendedResourceName"),
                spec.extended_resource_name,
                "must be a valid extended resource name",
            )
        )
    return errs
