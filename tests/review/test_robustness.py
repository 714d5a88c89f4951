"""Bad input never crashes the pipeline: random bytes, random JSON in every field.

Property tests over the whole door used by the CLI and the lint endpoint: whatever the
document holds, ``review_documents`` returns findings and never raises.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from draguard.inventory import build_inventory
from draguard.k8s.decode import decode_bytes, decode_text
from draguard.k8s.finding import Finding
from draguard.review.pipeline import ReviewOptions, review_admission, review_documents
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

INVENTORY_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "n1-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "gpu-0",
                    "allowMultipleAllocations": True,
                    "attributes": {"model": {"string": "a100"}},
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {"default": "5Gi", "validRange": {"min": "5Gi", "step": "5Gi"}},
                        }
                    },
                }
            ],
        },
    },
]
INVENTORY = build_inventory(INVENTORY_OBJECTS)

CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {
                        "deviceClassName": "gpu.example.com",
                        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}],
                        "capacity": {"requests": {"memory": "10Gi"}},
                        "count": 1,
                    },
                }
            ],
            "constraints": [{"requests": ["gpu"], "distinctAttribute": "gpu.example.com/model"}],
        }
    },
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _replace(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(obj)
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


def _review(obj: Any) -> list[Finding]:
    text = json.dumps(obj)
    decoded = decode_text(text, "fuzz.json")
    review = review_documents(
        decoded.documents,
        inventory=INVENTORY,
        inventory_objects=INVENTORY_OBJECTS,
        options=ReviewOptions(show_mutations=True, deadline_seconds=2.0),
        decode_findings=decoded.findings,
    )
    return review.findings


TARGETS = [CLAIM, *INVENTORY_OBJECTS]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(TARGETS) - 1), st.data(), json_values)
def test_any_value_in_any_field_gives_findings_not_exceptions(which: int, data: st.DataObject, value: Any) -> None:
    target = TARGETS[which]
    path = data.draw(st.sampled_from(_paths(target)))
    findings = _review(_replace(target, path, value))
    assert all(isinstance(f, Finding) for f in findings)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    result = decode_bytes(data, "random")
    review = review_documents(result.documents, inventory=INVENTORY, decode_findings=result.findings)
    assert isinstance(review.findings, list)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]), st.data(), json_values)
def test_admission_door_never_raises(operation: str, data: st.DataObject, value: Any) -> None:
    path = data.draw(st.sampled_from(_paths(CLAIM)))
    obj = _replace(CLAIM, path, value)
    review = review_admission(
        kind="ResourceClaim",
        operation=operation,
        obj=obj if isinstance(obj, dict) else {"kind": "ResourceClaim"},
        old_obj=CLAIM,
        namespace="default",
        inventory=INVENTORY,
        inventory_problem=None,
        options=ReviewOptions(admission=True, deadline_seconds=1.0),
    )
    assert isinstance(review.findings, list)
