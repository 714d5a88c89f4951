"""The DRA rules of pod validation (RULES.md "Pod and pod template"): each rejects and accepts.

Texts are those a real 1.36 API server gives (tests/test_realapi_workloads.py compares the two on
the same manifests); here each rule is pinned on its own, without a server.
"""

from __future__ import annotations

from typing import Any

import yaml
from draguard.k8s import Path, decode_pod_spec
from draguard.validation import validate_pod_spec

BASE = Path.root("spec")


def errors(spec: str | dict[str, Any], base: Path = BASE, annotations: dict[str, str] | None = None) -> list[str]:
    raw = yaml.safe_load(spec) if isinstance(spec, str) else spec
    decoded = decode_pod_spec(raw, base)
    assert decoded.model is not None and not decoded.unknown_fields, decoded
    return [str(e) for e in validate_pod_spec(decoded.model, base, annotations=annotations)]


def with_claims(claims: str, entries: str = "[{name: gpu, resourceClaimTemplateName: t}]") -> str:
    return f"""
containers:
- name: c
  resources:
    claims: {claims}
resourceClaims: {entries}
"""


def test_a_well_formed_pod_has_no_errors() -> None:
    assert errors(with_claims("[{name: gpu, request: a}, {name: gpu, request: b}, {name: nic}]",
                              "[{name: gpu, resourceClaimTemplateName: t}, {name: nic, resourceClaimName: n}]")) == []


def test_entry_names_are_required_unique_dns_labels() -> None:
    got = errors(with_claims("[]", "[{name: '', resourceClaimName: x}, {name: a, resourceClaimName: x},"
                                   " {name: a, resourceClaimName: y}, {name: with.dot, resourceClaimName: x}]"))
    assert got == [
        "spec.resourceClaims[0].name: Required value",
        'spec.resourceClaims[2].name: Duplicate value: "a"',
        'spec.resourceClaims[3].name: Invalid value: "with.dot": must not contain dots',
    ]


def test_exactly_one_source_with_the_entry_printed_as_the_api_server_does() -> None:
    both = errors(with_claims("[]", "[{name: a, resourceClaimName: x, resourceClaimTemplateName: t}]"))
    assert both == ['spec.resourceClaims[0]: Invalid value: {"Name":"a","ResourceClaimName":"x",'
                    '"ResourceClaimTemplateName":"t"}: at most one of `resourceClaimName` or '
                    '`resourceClaimTemplateName` may be specified']
    neither = errors(with_claims("[]", "[{name: a}]"))
    assert neither == ['spec.resourceClaims[0]: Invalid value: {"Name":"a","ResourceClaimName":null,'
                       '"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, '
                       '`resourceClaimTemplateName`']


def test_source_names_are_dns_subdomains() -> None:
    got = errors(with_claims("[]", "[{name: a, resourceClaimName: Bad.Name}, {name: b, resourceClaimTemplateName: ok.name}]"))
    assert len(got) == 1 and got[0].startswith('spec.resourceClaims[0].resourceClaimName: Invalid value: "Bad.Name": '
                                               "a lowercase RFC 1123 subdomain")


def test_container_references_must_name_a_pod_claim() -> None:
    assert errors(with_claims("[{name: nope}]")) == [
        'spec.containers[0].resources.claims[0]: Not found: "nope": must be one of the names in pod.spec.resourceClaims: gpu'
    ]
    assert errors(with_claims("[{name: gpu}]", "[]")) == [
        'spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names in '
        "pod.spec.resourceClaims which is empty"
    ]


def test_container_references_duplicates_and_overlaps() -> None:
    got = errors(with_claims("[{name: gpu, request: a}, {name: gpu, request: a}, {name: gpu},"
                             " {name: gpu, request: Bad_R}, {name: ''}, {name: gpu}]"))
    assert got == [
        'spec.containers[0].resources.claims[1]: Duplicate value: "gpu/a"',
        'spec.containers[0].resources.claims[2]: Duplicate value: "gpu"',
        'spec.containers[0].resources.claims[3]: Duplicate value: "gpu"',
        "spec.containers[0].resources.claims[4]: Required value",
        'spec.containers[0].resources.claims[5]: Duplicate value: "gpu"',
    ]
    assert errors(with_claims("[{name: gpu}, {name: gpu, request: a}]")) == [
        'spec.containers[0].resources.claims[1]: Duplicate value: "gpu"']
    bad_request = errors(with_claims("[{name: gpu, request: Bad_R}]"))
    assert len(bad_request) == 1 and bad_request[0].startswith(
        'spec.containers[0].resources.claims[0].request: Invalid value: "Bad_R"')


def test_init_and_ephemeral_containers_and_pod_level_claims() -> None:
    spec = """
initContainers: [{name: i, restartPolicy: Always, resources: {claims: [{name: nope}]}}]
ephemeralContainers: [{name: e, resources: {limits: {cpu: "1"}}}]
resources: {claims: [{name: gpu}]}
containers: [{name: c}]
resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]
"""
    assert errors(spec) == [
        'spec.initContainers[0].resources.claims[0]: Not found: "nope": must be one of the names in '
        "pod.spec.resourceClaims: gpu",
        "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
        "spec.resources.claims: Forbidden: claims may not be set for Resources at pod-level",
    ]


def test_extended_resources_whole_with_equal_limits_and_implicit_names_qualified() -> None:
    spec = """
containers:
- {name: c, resources: {requests: {example.com/gpu: 1, deviceclass.resource.kubernetes.io/gpu.example.com: 1}}}
- {name: d, resources: {limits: {example.com/gpu: 2}, requests: {example.com/gpu: 1}}}
- {name: e, resources: {limits: {example.com/gpu: 500m, deviceclass.resource.kubernetes.io/gpu.example.com: 500m}}}
"""
    assert errors(spec) == [
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
        'spec.containers[1].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
        'spec.containers[2].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer',
        'spec.containers[2].resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer',
    ]
    bad = errors("containers: [{name: c, resources: {limits: {deviceclass.resource.kubernetes.io/Bad_Class-: 1}}}]")
    assert [e.split(":")[0] for e in bad] == [
        "spec.containers[0].resources.limits[deviceclass.resource.kubernetes.io/Bad_Class-]",
        "spec.containers[0].resources.requests[deviceclass.resource.kubernetes.io/Bad_Class-]",
    ]
    assert errors("containers: [{name: c, resources: {limits: {example.com/gpu: 1, cpu: 500m}}}]") == []


def test_required_node_affinity_is_validated() -> None:
    spec = """
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
  {matchExpressions: [{key: zone, operator: In}]}]}}}
containers: [{name: c}]
"""
    assert errors(spec) == [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    ]


def test_static_pods_may_not_use_claims_and_templates_are_never_static() -> None:
    spec = with_claims("[]")
    assert errors(spec, annotations={"kubernetes.io/config.mirror": "x"}) == [
        "[]: Forbidden: static pods do not support resource claims"]
    assert errors(spec, annotations={}) == []


def test_template_paths_are_prefixed() -> None:
    got = errors(with_claims("[{name: x}]"), base=Path.root("spec", "jobTemplate", "spec", "template", "spec"))
    assert got[0].startswith('spec.jobTemplate.spec.template.spec.containers[0].resources.claims[0]: Not found: "x"')


def test_only_the_dra_parts_are_strict() -> None:
    raw = yaml.safe_load("""
volumes: [{name: v, emptyDir: {}}]
containers: [{name: c, image: x, ports: [{containerPort: 80}], resources: {claims: [{name: gpu, reqest: a}]}}]
resourceClaims: [{name: gpu, resourceClaimTemplate: t}]
""")
    decoded = decode_pod_spec(raw, BASE)
    assert [str(p) for p in decoded.unknown_fields] == [
        "spec.containers[0].resources.claims[0].reqest", "spec.resourceClaims[0].resourceClaimTemplate"]
    assert decoded.model is not None  # decoded again without them
    wrong = decode_pod_spec({"containers": "x"}, BASE)
    assert wrong.model is None and [str(e) for e in wrong.type_errors] == [
        'spec.containers: Invalid value: "x": must be of type array']
