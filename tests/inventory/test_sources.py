"""Inventory sources: reading files, folders and stdin, and the one bad-document policy.

The policy (app/inventory/sources.py, docs/guides/choices.md): a bad document in an
inventory file is a DecodeError finding, the rest of the inventory is used, and no claim is
called Unsatisfiable against it — lint and serve alike (the serve door is tested in
tests/server/test_inventory_policy.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from draguard.cli import main
from draguard.inventory import InputError, NoInventory, StaticInventory, load_paths, open_inventory

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
"""

INVENTORY = Path(__file__).resolve().parents[1] / "server" / "data" / "inventory.yaml"

CLAIM_50GI = CLAIM.replace("  name: c\n", "  name: llm-50gi\n") + (
    "        capacity:\n          requests:\n            memory: 50Gi\n"
)

BAD_DOCUMENT = "apiVersion: v1\nkind: [unclosed\n"


def test_folders_walk_recursively(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.yaml").write_text(CLAIM)
    (tmp_path / "two.json").write_text('{"kind": "DeviceClass", "metadata": {"name": "x"}}')
    (tmp_path / "notes.txt").write_text("not a manifest")
    docs = load_paths([str(tmp_path)]).documents
    assert sorted(d.kind for d in docs) == ["DeviceClass", "ResourceClaim"]


def test_missing_path_raises_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_paths([str(tmp_path / "missing.yaml")])


def test_stdin_dash() -> None:
    docs = load_paths(["-"], stdin_text=CLAIM).documents
    assert docs[0].source == "<stdin>"


def test_static_inventory_of_good_files_has_no_problem() -> None:
    source = StaticInventory([str(INVENTORY)])
    assert source.problem() is None and source.findings() == []
    assert sorted(o["kind"] for o in source.objects()) == ["DeviceClass", "Node", "ResourceSlice"]
    snapshot = source.snapshot()
    assert snapshot is not None and snapshot.device_count == 1


def test_bad_document_is_a_finding_the_rest_is_used_and_the_source_says_so(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(INVENTORY.read_text())
    (tmp_path / "zz-bad.yaml").write_text(BAD_DOCUMENT)
    source = StaticInventory([str(tmp_path)])
    (finding,) = source.findings()
    assert finding.reason == "DecodeError" and finding.file.endswith("zz-bad.yaml") and finding.line > 0
    assert len(source.objects()) == 3
    problem = source.problem()
    assert problem is not None and f"zz-bad.yaml:{finding.line}" in problem
    assert source.status()["bad_documents"] == 1


def test_inventory_from_stdin() -> None:
    source = StaticInventory(["-"], stdin_text=INVENTORY.read_text())
    assert source.problem() is None and len(source.objects()) == 3


def test_open_inventory_picks_the_source(tmp_path: Path) -> None:
    assert isinstance(open_inventory([]), NoInventory)
    assert isinstance(open_inventory([str(INVENTORY)]), StaticInventory)
    with pytest.raises(InputError, match="no such file"):
        open_inventory([str(tmp_path / "missing")])


def _lint_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, object]]]:
    status = main(["lint", "--format", "json", *argv])
    return status, json.loads(capsys.readouterr().out)["findings"]


def test_lint_door_proves_unsatisfiable_against_a_sound_inventory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "claim.yaml").write_text(CLAIM_50GI)
    status, findings = _lint_json(capsys, str(tmp_path / "claim.yaml"), "--inventory", str(INVENTORY))
    assert status == 1
    assert [f["reason"] for f in findings] == ["Unsatisfiable"]


def test_lint_door_reports_a_bad_inventory_document_and_never_rejects_against_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "good.yaml").write_text(INVENTORY.read_text())
    (inventory / "zz-bad.yaml").write_text(BAD_DOCUMENT)
    (tmp_path / "claim.yaml").write_text(CLAIM_50GI)
    status, findings = _lint_json(capsys, str(tmp_path / "claim.yaml"), "--inventory", str(inventory))
    assert status == 1  # the DecodeError is an error
    reasons = {f["reason"]: f for f in findings}
    assert set(reasons) == {"DecodeError", "SatisfiabilityUnknown"}
    assert str(reasons["DecodeError"]["file"]).endswith("zz-bad.yaml")
    assert f"zz-bad.yaml:{reasons['DecodeError']['line']}" in str(reasons["SatisfiabilityUnknown"]["message"])


def test_lint_door_missing_inventory_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "claim.yaml").write_text(CLAIM)
    assert main(["lint", str(tmp_path / "claim.yaml"), "--inventory", str(tmp_path / "nope")]) == 2
    assert "nope: no such file or directory" in capsys.readouterr().err


def test_lint_refuses_stdin_twice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "-", "--inventory", "-"]) == 2
    assert "standard input" in capsys.readouterr().err


def test_static_inventory_keeps_its_objects_packed_and_gives_back_equal_fresh_copies() -> None:
    """The raw objects are kept pickled (memory: app/inventory/packed.py), yet read back exactly
    as the files decode, and what a caller does to a copy does not reach the inventory."""
    source = StaticInventory([str(INVENTORY)])
    expected = [d.obj for d in load_paths([str(INVENTORY)]).documents if d.kind in {"DeviceClass", "Node", "ResourceSlice"}]
    assert list(source.objects()) == expected and source.objects()[0] == expected[0]
    source.objects()[0]["metadata"]["name"] = "changed"
    assert list(source.objects()) == expected
    assert source.objects()[-1] == expected[-1] and source.objects()[0:2] == expected[0:2]


def test_chained_objects_read_as_one_sequence() -> None:
    from draguard.inventory.packed import ChainedObjects, PackedObjects

    packed = PackedObjects([{"kind": "Node", "n": 1}, {"kind": "Node", "n": 2}])
    chained = ChainedObjects(packed, [{"kind": "Node", "n": 3}])
    assert len(chained) == 3 and [o["n"] for o in chained] == [1, 2, 3]
    assert chained[2]["n"] == 3 and chained[-3]["n"] == 1 and [o["n"] for o in chained[1:]] == [2, 3]
    with pytest.raises(IndexError):
        chained[3]


def test_a_folder_is_read_one_file_at_a_time(tmp_path: Path) -> None:
    from draguard.inventory.files import iter_paths

    (tmp_path / "a.yaml").write_text(CLAIM)
    (tmp_path / "b.json").write_text('{"kind": "DeviceClass", "metadata": {"name": "x"}}')
    parts = list(iter_paths([str(tmp_path)]))
    assert [[d.kind for d in p.documents] for p in parts] == [["ResourceClaim"], ["DeviceClass"]]
    with pytest.raises(InputError, match="no such file"):
        list(iter_paths([str(tmp_path / "missing.yaml")]))


def test_packed_objects_read_back_across_chunks() -> None:
    from draguard.inventory.packed import CHUNK, PackedObjects

    objects = [{"kind": "Node", "metadata": {"name": f"n{i}"}, "n": i, "sizes": [i] * (i % 4)} for i in range(3 * CHUNK + 5)]
    packed = PackedObjects(objects)
    assert len(packed) == len(objects) and list(packed) == objects
    for i in (0, CHUNK - 1, CHUNK, 3 * CHUNK, len(objects) - 1, -1, -len(objects)):
        assert packed[i] == objects[i]
    for part in (slice(None), slice(CHUNK - 2, CHUNK + 2), slice(5, None, 7), slice(None, None, -1), slice(3 * CHUNK, 10 ** 6), slice(4, 4)):
        assert packed[part] == objects[part]
    for outside in (len(objects), -len(objects) - 1):
        with pytest.raises(IndexError):
            packed[outside]
    packed[CHUNK]["n"] = -1  # what is read is a copy
    assert packed[CHUNK]["n"] == CHUNK and list(PackedObjects()) == []
