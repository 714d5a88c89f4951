"""Root conftest: makes the shared test helpers in tests/ (realapi, fakeapi) importable from every
folder, runs ``slow`` tests only where asked, and says at the end of every run which groups of
tests were skipped and why — without ``-rs``, so that a clone lacking the real API server, helm or
the network sees what it did not test instead of a bare "17 skipped".
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

SLOW_ENV = "DRAGUARD_SLOW"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"slow: builds or installs something (a minute or more); runs when {SLOW_ENV}=1 (.ci/run sets it)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(SLOW_ENV) == "1":
        return
    skip = pytest.mark.skip(reason=f"slow: runs in CI (.ci/run); `{SLOW_ENV}=1 make test` runs it here")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def skipped_groups(reports: list[pytest.TestReport]) -> list[tuple[str, int, list[str]]]:
    """``(reason, count, files)`` per distinct skip reason, most frequent first."""
    groups: dict[str, list[str]] = defaultdict(list)
    for report in reports:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        groups[reason].append(report.nodeid.split("::", 1)[0])
    return sorted(((r, len(f), sorted(set(f))) for r, f in groups.items()), key=lambda g: (-g[1], g[0]))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reports = [r for r in terminalreporter.stats.get("skipped", []) if isinstance(r, pytest.TestReport)]
    if not reports:
        return
    terminalreporter.section("skipped groups (what this run did not test, and why)", sep="-")
    for reason, count, files in skipped_groups(reports):
        shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more files" if len(files) > 4 else "")
        terminalreporter.write_line(f"{count:4d} skipped: {reason} [{shown}]")
