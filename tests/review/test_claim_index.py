"""The claims and templates a pod's references resolve against (``ClaimIndex``): the files' objects
win over the cluster's, a cluster object is found without the cluster being copied, and a name in
neither is absent."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from draguard.inventory import ClusterState
from draguard.inventory.cluster import HeldClaim
from draguard.k8s.models import ResourceClaimSpec
from draguard.review.workloads import ClaimIndex, KnownClaim

SPEC = ResourceClaimSpec.model_validate({"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}})
OTHER = ResourceClaimSpec.model_validate({"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic"}}]}})


class _LookupOnly(Mapping[Any, Any]):
    """Cluster objects that may be looked up but not walked: walking 50,000 of them per review is
    what the index must not do."""

    def __init__(self, data: dict[Any, Any]) -> None:
        self._data = data

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("the cluster's claims were walked")

    def __len__(self) -> int:
        raise AssertionError("the cluster's claims were counted")


def _cluster(claims: Mapping[Any, Any], templates: Mapping[Any, Any]) -> ClusterState:
    return ClusterState(claims=claims, templates=templates, known=True)


def test_a_pod_reference_is_resolved_in_the_cluster_without_walking_it() -> None:
    held = HeldClaim("ns", "shared", spec=SPEC)
    cluster = _cluster(_LookupOnly({("ns", "shared"): held}), _LookupOnly({("ns", "tpl"): OTHER}))
    index = ClaimIndex.build({}, {}, cluster, lint=False)
    assert index.claims.get(("ns", "shared")) == KnownClaim(SPEC, None)
    assert index.templates.get(("ns", "tpl")) == KnownClaim(OTHER)
    assert index.claims.get(("other", "shared")) is None  # another namespace's name is not this one
    assert index.templates.get(("ns", "shared")) is None  # a claim is not a template
    assert index.complete and index.scope == "the cluster"


def test_the_files_win_over_the_cluster_and_both_are_listed_once() -> None:
    cluster = _cluster({("ns", "a"): HeldClaim("ns", "a", spec=SPEC), ("ns", "b"): HeldClaim("ns", "b", spec=SPEC)}, {})
    mine = KnownClaim(OTHER)
    index = ClaimIndex.build({("ns", "a"): mine, ("ns", "c"): mine}, {}, cluster, lint=True)
    assert index.claims.get(("ns", "a")) is mine
    assert index.claims.get(("ns", "b")) == KnownClaim(SPEC, None)
    assert sorted(index.claims) == [("ns", "a"), ("ns", "b"), ("ns", "c")] and len(index.claims) == 3
    assert index.scope == "the linted files or the inventory"
