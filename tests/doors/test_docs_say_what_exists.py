"""Docs say what exists (issue #35 item 9): neither ``pip install draguard`` (PyPI) nor the
``ghcr.io/draguard/draguard`` image is published, so no recipe may present them as available, and
the Action's ``draguard-version`` input says it works only once a release is on PyPI.  The docs are
README.md and every page under docs/ (the site), read as one text."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README = "\n\n".join(page.read_text() for page in PAGES)
CAVEAT = re.compile(r"not (yet )?published|not on PyPI|once (a release is |draguard is )?published", re.I)


def _paragraphs(text: str) -> list[str]:
    return re.split(r"\n\s*\n", text)


def test_the_docs_are_read() -> None:
    assert len(PAGES) > 10 and "pip install" in README and "docker run" in README


def test_the_readme_says_how_to_install() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "pip install ." in readme and "git+https://github.com/draguard/draguard" in readme
    assert CAVEAT.search(readme)


def test_no_recipe_installs_from_pypi() -> None:
    for block in re.findall(r"```[a-z]*\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            assert not re.search(r"pip[x]? install draguard\b", line), line


def test_every_mention_of_pypi_or_the_image_says_it_is_not_published() -> None:
    for paragraph in _paragraphs(README):
        prose = re.sub(r"```.*?```", "", paragraph, flags=re.S)
        if re.search(r"`pip install draguard`", prose):
            assert CAVEAT.search(prose), prose


def test_no_recipe_runs_the_unpublished_image() -> None:
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", README, flags=re.S):
        assert "docker run" not in block or "ghcr.io/draguard/draguard" not in block, block


def test_the_action_says_draguard_version_needs_a_release() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert CAVEAT.search(action["inputs"]["draguard-version"]["description"])
    assert action["inputs"]["draguard-version"]["default"] == ""
