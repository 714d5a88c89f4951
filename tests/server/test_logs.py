"""The review log line: written straight to the JSON handler, it is the line the formatter writes."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import random
from collections.abc import Iterator

import pytest
from draguard.server import logs


@pytest.fixture
def configured() -> Iterator[io.StringIO]:
    """``configure_logging`` as ``draguard serve`` calls it, its stream captured."""
    saved = {name: (logging.getLogger(name).handlers[:], logging.getLogger(name).level, logging.getLogger(name).propagate)
             for name in ("draguard", "uvicorn", "uvicorn.error")}
    logs.configure_logging("info")
    buffer = io.StringIO()
    handler = logging.getLogger("draguard").handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(buffer)
    yield buffer
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


def only_json() -> logging.Handler:
    """Drop the capture handlers pytest adds to the logger for the test's call phase."""
    logger = logging.getLogger("draguard")
    logger.handlers[:] = [h for h in logger.handlers if isinstance(h.formatter, logs.JsonFormatter)]
    [handler] = logger.handlers
    return handler


FIELDS = {"route": "validate", "uid": "u-1", "kind": "ResourceClaim", "namespace": "default", "name": "n" * 3000,
          "decision": "denied", "reason": "Unsatisfiable", "reasons": ["Unsatisfiable", "x" * 5000], "ms": 1.5,
          "failOpen": None, "dryRun": False}


def test_the_direct_line_is_the_formatters_line(configured: io.StringIO) -> None:
    handler = only_json()
    assert logs._direct_handler() is handler
    logs.log_review(**FIELDS)
    [line] = configured.getvalue().splitlines()
    assert handler.formatter is not None
    expected = json.loads(handler.formatter.format(logs._record(dict(FIELDS))))
    got = json.loads(line)
    assert got.pop("ts")[:4] == expected.pop("ts")[:4]  # each its own moment
    assert got == expected and "chars cut" in got["name"] and "chars cut" in got["reasons"][1]


def test_another_handler_on_the_way_gets_the_record(configured: io.StringIO) -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    only_json()
    extra = Keep()
    logging.getLogger("draguard.review").addHandler(extra)
    try:
        assert logs._direct_handler() is None
        logs.log_review(uid="u-2", decision="allowed")
    finally:
        logging.getLogger("draguard.review").removeHandler(extra)
    assert [r.fields["uid"] for r in seen] == ["u-2"]  # type: ignore[attr-defined]
    assert json.loads(configured.getvalue())["uid"] == "u-2"


def test_nothing_is_written_below_info(configured: io.StringIO) -> None:
    only_json()
    logging.getLogger("draguard").setLevel(logging.WARNING)
    logs.log_review(uid="u-3")
    assert configured.getvalue() == ""


def test_the_timestamp_is_isoformats() -> None:
    rng = random.Random(3)
    moments = [rng.uniform(0, 4e9) for _ in range(20_000)]
    moments += [0.0, 0.9995, 0.9999995, 1.0, 1.0000005, 1_764_633_600.0004999, 1_764_633_600.9999996]
    for created in moments:
        assert logs._timestamp(created) == dt.datetime.fromtimestamp(created, dt.UTC).isoformat(timespec="milliseconds")
