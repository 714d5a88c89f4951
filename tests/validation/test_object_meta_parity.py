"""ObjectMeta rules at API-server parity: owner references, finalizers, generated names.

Every rendered line below is what a real kube-apiserver 1.36.2 answered for the same object
(dry-run, strict field validation); note the paths without an index, as upstream reports them.
"""

from __future__ import annotations

from typing import Any

from .support import check, lines

CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "spec": {}}
CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
}


def with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {**obj, "metadata": meta}


def test_owner_reference_without_uid() -> None:
    obj = with_meta(CLAIM, name="c", ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": ""}])
    assert lines(check(obj)) == ['metadata.ownerReferences.uid: Invalid value: "": must not be empty']


def test_owner_references_every_rule() -> None:
    refs = [
        {"apiVersion": "", "kind": "", "name": "", "uid": ""},
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"},
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "2", "controller": True},
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d2", "uid": "3", "controller": True},
    ]
    assert lines(check(with_meta(CLASS, name="c", ownerReferences=refs))) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"1"}: '
        "/v1, Kind=Event is disallowed from being an owner",
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"","kind":"","name":"","uid":""},'
        '{"apiVersion":"v1","kind":"Event","name":"e","uid":"1"},'
        '{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"2","controller":true},'
        '{"apiVersion":"apps/v1","kind":"Deployment","name":"d2","uid":"3","controller":true}]: '
        'Only one reference can have Controller set to true. Found "true" in references for '
        "Deployment/d and Deployment/d2",
    ]


def test_owner_reference_versions() -> None:
    refs = [{"apiVersion": v, "kind": "D", "name": "n", "uid": "1"} for v in ("apps/", "a/b/c", "apps/v1", "v1")]
    assert lines(check(with_meta(CLASS, name="c", ownerReferences=refs))) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty',
    ]


def test_finalizers() -> None:
    finalizers = ["bad finalizer!", "orphan", "foregroundDeletion", "example.com/ok", "plain"]
    assert lines(check(with_meta(CLASS, name="c", finalizers=finalizers))) == [
        "metadata.finalizers: Invalid value: \"bad finalizer!\": name part must consist of alphanumeric characters, "
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'metadata.finalizers: Invalid value: ["bad finalizer!","orphan","foregroundDeletion","example.com/ok","plain"]: '
        "finalizer orphan and foregroundDeletion cannot be both set",
        'metadata.finalizers[0]: Invalid value: "bad finalizer!": name is neither a standard finalizer name '
        "nor is it fully qualified",
        'metadata.finalizers[4]: Invalid value: "plain": name is neither a standard finalizer name nor is it '
        "fully qualified",
    ]
    assert lines(check(with_meta(CLASS, name="c", finalizers=["kubernetes", "example.com/x", "orphan"]))) == []


def test_generated_names_are_validated_as_the_name() -> None:
    claim = lines(check(with_meta(CLAIM, generateName="Bad_")))
    assert [line.split(":")[0] for line in claim] == ["metadata.generateName", "metadata.name"]
    assert 'metadata.name: Invalid value: "Bad_xxxxx"' in claim[1]
    # DeviceClass validates the generated name only; a long prefix is cut to 58 characters first
    assert [line.split(":")[0] for line in lines(check(with_meta(CLASS, generateName="Bad_")))] == ["metadata.name"]
    assert lines(check(with_meta(CLAIM, generateName="a" * 80 + "-"))) == []
    # with a name, a claim still validates generateName; a class ignores it
    assert [line.split(":")[0] for line in lines(check(with_meta(CLAIM, name="ok", generateName="Bad_")))] == [
        "metadata.generateName"
    ]
    assert lines(check(with_meta(CLASS, name="ok", generateName="Bad_"))) == []


def test_fields_the_api_server_resets_on_create_are_not_errors() -> None:
    meta = {
        "name": "c", "resourceVersion": "123", "uid": "abc", "creationTimestamp": "2020-01-01T00:00:00Z",
        "selfLink": "/x", "deletionGracePeriodSeconds": 30,
        "managedFields": [{"manager": "x", "operation": "Bogus", "fieldsType": "FieldsV2"}],
    }
    assert lines(check(with_meta(CLASS, **meta))) == []
