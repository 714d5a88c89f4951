"""The CEL parser's analysed grammar on disk: where, when it is trusted, how to turn it off."""

from __future__ import annotations

import os
from pathlib import Path

import lark
import pytest
from draguard.cel.parser import _grammar_cache_file


def test_the_cache_file_lives_in_the_configured_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    assert _grammar_cache_file() == str(tmp_path / "cache" / f"cel-lark-{lark.__version__}.cache")
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700


def test_off_turns_the_disk_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", "off")
    assert _grammar_cache_file() is False


def test_a_folder_others_may_write_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(shared))
    assert _grammar_cache_file() is False
