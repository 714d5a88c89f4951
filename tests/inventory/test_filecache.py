"""Built file inventories on disk (app/inventory/filecache.py): read back only for the same bytes,
target and code, bounded, never from a folder others may write, off on request."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from draguard.cli import main
from draguard.inventory import filecache, sources

INVENTORY = Path(__file__).resolve().parents[1] / "server" / "data" / "inventory.yaml"

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: big
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        capacity:
          requests:
            memory: 12Gi
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(folder))
    monkeypatch.setattr(filecache, "MIN_BYTES", 0)  # the test inventory is small
    return folder


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("inventory-*.pickle")) if folder.is_dir() else []


def _lint(tmp_path: Path, capsys: pytest.CaptureFixture[str], inventory: Path, *flags: str) -> tuple[int, str]:
    claim = tmp_path / "claim.yaml"
    claim.write_text(CLAIM)
    code = main(["lint", str(claim), "--inventory", str(inventory), "--format", "json", *flags])
    return code, capsys.readouterr().out


def _no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(sources, "build_inventory", refuse)


def test_a_second_run_reads_the_build_back_and_answers_the_same(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _lint(tmp_path, capsys, INVENTORY)
    assert len(_entries(cache)) == 1
    assert _entries(cache)[0].stat().st_mode & 0o777 == 0o600
    _no_build(monkeypatch)
    assert _lint(tmp_path, capsys, INVENTORY) == first


def test_other_bytes_or_another_target_are_built_again(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(INVENTORY.read_text())
    _, out = _lint(tmp_path, capsys, inventory)
    assert '"Unsatisfiable"' not in out
    inventory.write_text(INVENTORY.read_text().replace("max: 16Gi", "max: 8Gi"))  # 12Gi is above the policy now
    changed = _lint(tmp_path, capsys, inventory)
    assert '"Unsatisfiable"' in changed[1]
    assert len(_entries(cache)) == 2
    _lint(tmp_path, capsys, inventory, "--kubernetes-version", "1.34")
    assert len(_entries(cache)) == 3


def test_no_cache_builds_and_keeps_nothing(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _lint(tmp_path, capsys, INVENTORY)
    for entry in _entries(cache):
        entry.unlink()
    assert _lint(tmp_path, capsys, INVENTORY, "--no-cache") == plain
    assert _entries(cache) == []


def test_small_inventories_are_not_kept(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filecache, "MIN_BYTES", INVENTORY.stat().st_size + 1)
    _lint(tmp_path, capsys, INVENTORY)
    assert _entries(cache) == []


def test_the_folder_keeps_the_most_recently_used_entries(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filecache, "MAX_ENTRIES", 2)
    for i in range(4):
        inventory = tmp_path / f"inventory-{i}.yaml"
        inventory.write_text(INVENTORY.read_text() + f"# copy {i}\n")
        _lint(tmp_path, capsys, inventory)
    assert len(_entries(cache)) == 2


def test_a_damaged_entry_is_built_again(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _lint(tmp_path, capsys, INVENTORY)
    [entry] = _entries(cache)
    entry.write_bytes(b"not a pickle")
    assert _lint(tmp_path, capsys, INVENTORY) == first


def test_a_folder_others_may_write_is_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(shared))
    monkeypatch.setattr(filecache, "MIN_BYTES", 0)
    _lint(tmp_path, capsys, INVENTORY)
    assert _entries(shared) == []


def test_an_entry_others_may_write_is_not_read(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _lint(tmp_path, capsys, INVENTORY)
    [entry] = _entries(cache)
    os.chmod(entry, 0o666)
    calls: list[object] = []
    real = sources.build_inventory

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sources, "build_inventory", counted)
    assert _lint(tmp_path, capsys, INVENTORY) == first
    assert calls


def test_off_turns_it_off(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", "off")
    monkeypatch.setattr(filecache, "MIN_BYTES", 0)
    code, out = _lint(tmp_path, capsys, INVENTORY)
    assert code in (0, 1) and out
    assert not (tmp_path / "cache").exists()
