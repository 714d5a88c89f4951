"""ResourceClaims and ResourceClaimTemplates reduced to what allocation and references need.

Why reduce instead of keeping objects: a busy cluster holds tens of thousands of claims, and a
claim object carries managed fields, owner references, device status with driver data, opaque
configuration — none of which the allocator reads.  A claim is reduced on arrival (a file
document, a list item, a watch event) to a :class:`~.cluster.HeldClaim`: its spec (one object
for every claim with the same spec — the claims of one template are alike), the allocation's
results (driver, pool, device, share, consumed capacity, admin access), the allocation's node
selector (also shared between equal ones) and the names of the pods in ``reservedFor``.

Bad input never raises: a claim whose spec does not decode keeps ``spec=None`` (it still exists
for references); an allocation that cannot be read is dropped (its devices are then not known
to be held — a missed "not now" warning, never a false denial).
"""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import ValidationError

from ..k8s import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    NodeSelector,
    Quantity,
    QuantityError,
    ResourceClaimSpec,
    parse_quantity,
    structural_pass,
)
from .cluster import HeldClaim, ObjectKey

__all__ = ["CLAIM_KINDS", "ClaimReducer", "reduce_claim", "reduce_template"]

CLAIM_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate"})

_MAX_INTERNED = 16384
"""Distinct specs and node selectors remembered for sharing (a bounded LRU per reducer): a node
selector per node, so a cluster's worth of nodes."""

_NONE: list[Any] = []
"""The one empty list every reduced result shares for the fields it leaves out (models are frozen)."""
_NO_CAPACITY: dict[str, Quantity] = {}
_RESULT_FIELDS = set(DeviceRequestAllocationResult.model_fields)
_DEVICES_FIELDS = set(DeviceAllocationResult.model_fields)
_ALLOCATION_FIELDS = set(AllocationResult.model_fields)


class _Interned:
    """A bounded map text → decoded value, so equal specs and selectors are one object."""

    def __init__(self) -> None:
        self._values: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> object | None:
        with self._lock:
            got = self._values.get(text)
            if got is not None:
                self._values.move_to_end(text)
            return got

    def put(self, text: str, value: object) -> None:
        with self._lock:
            self._values[text] = value
            while len(self._values) > _MAX_INTERNED:
                self._values.popitem(last=False)


class ClaimReducer:
    """Reduces raw claims and templates, sharing equal specs and node selectors between them."""

    def __init__(self) -> None:
        self._specs = _Interned()
        self._selectors = _Interned()

    def spec(self, api_version: Any, kind: str, raw_spec: Any) -> ResourceClaimSpec | None:
        """The v1 spec of a claim (``kind`` ResourceClaim) or of a template's claim, decoded as the
        API server would (any served version), or None when it does not decode."""
        if not isinstance(raw_spec, Mapping) or not isinstance(api_version, str):
            return None
        text = _canonical(raw_spec)
        if text is None:
            return None
        text = api_version + "\x00" + text
        got = self._specs.get(text)
        if isinstance(got, ResourceClaimSpec):
            return got
        obj = {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": "x"}, "spec": dict(raw_spec)}
        try:
            model = structural_pass("ResourceClaim", obj).model
        except (ValidationError, ValueError, TypeError, AttributeError, RecursionError):
            return None
        spec = getattr(model, "spec", None)
        if not isinstance(spec, ResourceClaimSpec):
            return None
        self._specs.put(text, spec)
        return spec

    def node_selector(self, raw: Any) -> NodeSelector | None:
        if not isinstance(raw, Mapping):
            return None
        text = _canonical(raw)
        if text is None:
            return None
        got = self._selectors.get(text)
        if isinstance(got, NodeSelector):
            return got
        try:
            selector = NodeSelector.model_validate(dict(raw))
        except (ValidationError, ValueError, TypeError):
            return None
        self._selectors.put(text, selector)
        return selector

    def allocation(self, raw: Any) -> AllocationResult | None:
        """The parts of ``status.allocation`` the allocator reads (results and node selector);
        opaque configuration and binding conditions are left out."""
        if not isinstance(raw, Mapping):
            return None
        devices = raw.get("devices")
        results_raw = devices.get("results") if isinstance(devices, Mapping) else None
        results: list[DeviceRequestAllocationResult] = []
        for item in results_raw if isinstance(results_raw, list) else ():
            result = _result(item)
            if result is None:
                return None
            results.append(result)
        selector = self.node_selector(raw.get("nodeSelector")) if raw.get("nodeSelector") is not None else None
        # every field given (no default factories run) and one shared fields-set: construction
        # is cheap and each result costs its values only
        return AllocationResult.model_construct(
            _ALLOCATION_FIELDS,
            devices=DeviceAllocationResult.model_construct(_DEVICES_FIELDS, results=results, config=_NONE),
            node_selector=selector, allocation_timestamp=None,
        )

    def claim(self, raw: Mapping[str, Any]) -> HeldClaim | None:
        """A ResourceClaim as the cluster holds it, or None without a namespace and name."""
        key = _key(raw)
        if key is None:
            return None
        meta = raw.get("metadata")
        assert isinstance(meta, Mapping)
        status = raw.get("status")
        status = status if isinstance(status, Mapping) else {}
        allocation = self.allocation(status.get("allocation")) if status.get("allocation") is not None else None
        reserved = status.get("reservedFor")
        pods = tuple(  # not interned: pod names come and go without end (see _key)
            r["name"]
            for r in (reserved if isinstance(reserved, list) else ())
            if isinstance(r, Mapping) and r.get("resource") == "pods" and isinstance(r.get("name"), str)
        )
        uid = meta.get("uid")
        return HeldClaim(
            namespace=key[0], name=key[1], uid=uid if isinstance(uid, str) else "",
            spec=self.spec(raw.get("apiVersion"), "ResourceClaim", raw.get("spec")),
            allocation=allocation, reserved_for=pods, deleting=bool(meta.get("deletionTimestamp")),
        )

    def template(self, raw: Mapping[str, Any]) -> tuple[ObjectKey, ResourceClaimSpec | None] | None:
        """A ResourceClaimTemplate's key and the spec of the claims it makes (None: unreadable)."""
        key = _key(raw)
        if key is None:
            return None
        outer = raw.get("spec")
        inner = outer.get("spec") if isinstance(outer, Mapping) else None
        return key, self.spec(raw.get("apiVersion"), "ResourceClaim", inner if inner is not None else {})


_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
"""Sorted keys; dates, dataclasses and subclasses of the JSON types refused (the standard library
encodes none of the first two, and encodes subclasses its own way): those take the slow road."""


def _canonical(raw: Any) -> str | None:
    """One text per content of a decoded JSON value (the key its decoded model is shared by), or
    None when the value is not JSON (the standard library cannot encode it).

    Two roads, marked so that they never meet: orjson's sorted text (``o``; ~10x the standard
    library's speed, and every claim event of the watch passes here, on the event loop), and the
    standard library's (``j``) for what orjson refuses or encodes losing something — ``NaN`` and
    infinities (orjson writes ``null`` for them, so any text with ``null`` in it takes this road),
    integers beyond 64 bits, and what the options above send back."""
    try:
        fast = orjson.dumps(raw, option=_ORJSON_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        fast = None
    if fast is not None and b"null" not in fast:
        return "o" + fast.decode()
    try:
        return "j" + json.dumps(raw, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def _key(raw: Mapping[str, Any]) -> ObjectKey | None:
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    ns, name = meta.get("namespace"), meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    # The namespace is interned (few distinct values, shared by every claim in it); the name is
    # not: claim names are unique and never come back under churn, and interning buys nothing for
    # a value held once.  On CPython 3.12 every interned string is immortal (3.11 and 3.13+ drop
    # it with its last reference), so interning names kept every claim name ever seen: ~90 bytes
    # per claim for the life of the process (tests/server/test_churn_memory.py).
    return (sys.intern(ns) if isinstance(ns, str) and ns else "default", name)


def _result(item: Any) -> DeviceRequestAllocationResult | None:
    if not isinstance(item, Mapping):
        return None
    driver, pool, device = item.get("driver"), item.get("pool"), item.get("device")
    if not (isinstance(driver, str) and isinstance(pool, str) and isinstance(device, str)):
        return None
    request = item.get("request")
    share = item.get("shareID")
    consumed: dict[str, Quantity] = _NO_CAPACITY
    raw_consumed = item.get("consumedCapacity")
    if raw_consumed:
        consumed = {}
    for name, value in (raw_consumed.items() if isinstance(raw_consumed, Mapping) else ()):
        try:
            consumed[sys.intern(str(name))] = value if isinstance(value, Quantity) else parse_quantity(str(value))
        except QuantityError:
            return None
    return DeviceRequestAllocationResult.model_construct(
        _RESULT_FIELDS, tolerations=_NONE, binding_conditions=_NONE, binding_failure_conditions=_NONE,
        request=sys.intern(request) if isinstance(request, str) else "",
        driver=sys.intern(driver), pool=sys.intern(pool), device=sys.intern(device),
        admin_access=item.get("adminAccess") is True or None,
        share_id=share if isinstance(share, str) and share else None,
        consumed_capacity=consumed,
    )


_DEFAULT = ClaimReducer()


def reduce_claim(raw: Mapping[str, Any]) -> HeldClaim | None:
    """:meth:`ClaimReducer.claim` with a process-wide reducer."""
    return _DEFAULT.claim(raw)


def reduce_template(raw: Mapping[str, Any]) -> tuple[ObjectKey, ResourceClaimSpec | None] | None:
    """:meth:`ClaimReducer.template` with a process-wide reducer."""
    return _DEFAULT.template(raw)
