"""Decoding keeps positions, splits documents and Lists, and turns garbage into findings."""

from __future__ import annotations

from draguard.k8s.decode import decode_bytes, decode_text

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: gpu
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity:
          requests:
            memory: 10Gi
"""


def test_positions_point_at_values_and_keys() -> None:
    result = decode_text(CLAIM, "claim.yaml")
    assert not result.findings
    (doc,) = result.documents
    path = ["spec", "devices", "requests", 0, "exactly", "capacity", "requests", "memory"]
    assert doc.position_of(path) == (13, 21)
    assert doc.position_of(path, key=True) == (13, 13)
    assert doc.position_of(["spec", "devices", "requests", 0]) == (8, 7)


def test_unknown_path_falls_back_to_nearest_parent() -> None:
    (doc,) = decode_text(CLAIM, "c.yaml").documents
    assert doc.position_of(["spec", "devices", "requests", 0, "exactly", "nope"]) == (10, 9)


def test_multi_document_and_list_items() -> None:
    text = CLAIM + "---\n" + """\
apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: a}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
"""
    docs = decode_text(text, "x.yaml").documents
    assert [d.kind for d in docs] == ["ResourceClaim", "DeviceClass", "ConfigMap"]
    assert docs[1].line == 18
    assert docs[1].position_of(["metadata", "name"]) == (20, 20)
    assert docs[2].relevant is False


def test_yaml_syntax_error_is_a_finding_with_line() -> None:
    result = decode_text("a: [1, 2\nb: 3\n", "bad.yaml")
    (finding,) = result.findings
    assert finding.reason == "DecodeError"
    assert finding.file == "bad.yaml"
    assert finding.line >= 1
    assert "not valid YAML" in finding.message


def test_non_object_documents_and_bad_bytes() -> None:
    assert decode_text("- 1\n- 2\n", "l.yaml").findings[0].reason == "DecodeError"
    assert decode_bytes(b"\xff\xfe\x00garbage", "bin").findings[0].reason == "DecodeError"
    assert decode_text("just a string", "s.yaml").findings[0].message.startswith("document 1 is a str")


def test_timestamps_stay_strings() -> None:
    (doc,) = decode_text("kind: Node\nmetadata:\n  creationTimestamp: 2024-01-01T00:00:00Z\n").documents
    assert doc.obj["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"


def test_json_input_keeps_positions() -> None:
    text = '{\n  "kind": "DeviceClass",\n  "metadata": {"name": "x"}\n}\n'
    (doc,) = decode_text(text, "x.json").documents
    assert doc.position_of(["metadata", "name"]) == (3, 24)


def test_duplicate_keys_are_decode_errors_with_both_positions() -> None:
    text = "apiVersion: v1\nkind: ResourceClaim\nmetadata:\n  name: a\n  name: b\n"
    result = decode_text(text, "dup.yaml")
    (finding,) = result.findings
    assert finding.reason == "DecodeError"
    assert (finding.line, finding.column) == (5, 3)
    assert 'duplicate key "metadata.name" (first at line 4)' in finding.message
    assert result.documents[0].name == "b"


def test_merge_keys_are_not_duplicates() -> None:
    text = "base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n"
    assert decode_text(text, "m.yaml").findings == []


def test_duplicate_keys_in_documents_draguard_skips_are_only_warnings() -> None:
    from draguard.k8s import Severity, decode_text

    text = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: a\n  name: b\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: c\n  name: d\n"
    )
    result = decode_text(text, "mixed.yaml")
    daemonset, deviceclass = sorted(result.findings, key=lambda f: f.line)
    assert daemonset.severity is Severity.WARNING and daemonset.file == "mixed.yaml" and daemonset.line == 5
    assert "in a DaemonSet, which draguard does not check" in daemonset.message
    assert deviceclass.severity is Severity.ERROR and deviceclass.line == 11
