"""README.md is read in five minutes (issue #38): at most 15 KB, every relative link in it leads to
a file of the repository (and an anchor into a docs page to a heading or anchor of that page), and
it still gives the two commands — `make run` and `make test`, the test command CI's .ci/run calls."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LIMIT = 15 * 1000  # bytes: "15 KB", counted strictly
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(text: str) -> list[str]:
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def anchors(page: Path) -> set[str]:
    """Heading slugs (as GitHub and mkdocs make them) and explicit ``<a id>`` anchors of ``page``."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    found = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).strip().replace(" ", "-")
        found.add(slug)
    return found


def test_the_readme_is_at_most_15_kb() -> None:
    size = len(README.read_bytes())
    assert size <= LIMIT, f"README.md is {size} bytes; move text into docs/ (limit {LIMIT})"


def test_every_relative_link_in_the_readme_resolves() -> None:
    links = relative_links(README.read_text())
    assert len(links) > 20  # the README's job is to send readers into docs/
    broken = []
    for link in links:
        path, _, anchor = link.partition("#")
        target = (ROOT / path).resolve()
        missing_file = not target.is_file() or ROOT not in target.parents
        if missing_file or (anchor and target.suffix == ".md" and anchor not in anchors(target)):
            broken.append(link)
    assert broken == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = ROOT / "docs" / "guides" / "deploy.md"
    assert "the-image" in anchors(page) and "no-such" not in anchors(page)
    assert relative_links("[a](docs/x.md) [b](https://x.org) [c](#top) [d](mailto:a@b)") == ["docs/x.md"]


def test_every_internal_anchor_of_the_readme_exists() -> None:
    text = README.read_text()
    own = anchors(README)
    missing = [t for t in LINK.findall(text) if t.startswith("#") and t[1:] not in own]
    assert missing == []


def test_the_readme_gives_the_two_commands_and_ci_runs_its_test_command() -> None:
    text = README.read_text()
    block = text.split("## Two commands", 1)[1].split("```", 2)[1]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()[1:] if line.strip()]
    assert commands == ["make run", "make test"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert re.search(r"(^|\s)make test$", ci[-1]), ci[-1]


def test_the_readme_covers_what_a_newcomer_needs() -> None:
    text = README.read_text()
    for heading in ("## Two commands", "## Install", "## A 30-second tour", "## Three doors, two questions"):
        assert heading in text, heading
    for needle in ("Could it ever run?", "Does it fit now?", "draguard serve", "POST /lint", "draguard lint",
                   "not published on PyPI"):
        assert needle in text, needle
