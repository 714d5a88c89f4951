"""Structured JSON logs: one line per event, one line per review.

Why JSON lines: a webhook's logs are read by machines first (grep by ``uid`` when the API
server reports a denial, dashboards by ``decision``), and a log line must never span lines.

Why bounded: strings in a record can come from the client (a 700 KB uid, a name, an error
quoting the body), and a log pipeline chokes on — or a disk fills with — such lines.  Each
string field is clipped to :data:`MAX_FIELD_CHARS` (head and tail kept, the cut counted), a
traceback to :data:`MAX_EXCEPTION_CHARS`, and a record that is still over
:data:`MAX_RECORD_CHARS` keeps only its core fields.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import math
import time
from typing import Any

import orjson

__all__ = ["MAX_FIELD_CHARS", "MAX_RECORD_CHARS", "JsonFormatter", "clip", "configure_logging", "log_review"]

review_log = logging.getLogger("draguard.review")

MAX_FIELD_CHARS = 2048
MAX_EXCEPTION_CHARS = 8192
MAX_RECORD_CHARS = 16384
_CORE = ("ts", "level", "logger", "msg")
_SEQUENCES = (list, tuple)  # made once: ``list | tuple`` in a loop makes a new union on every pass
_SCALARS = frozenset({bool, int, float, type(None)})  # never clipped: the render loop skips them by type


def clip(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``text`` if short enough, else its head and tail around a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = max(limit // 2 - 24, 1)
    return f"{text[:keep]}…[{len(text) - 2 * keep} chars cut]…{text[-keep:]}"


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, _SEQUENCES):
        if len(value) <= 64:
            for v in value:  # a loop, not any(...): most lists here are short or empty
                if isinstance(v, str) and len(v) > MAX_FIELD_CHARS:
                    break
            else:
                return value  # the common case: short lists of short strings, rendered as they are
        return [clip(v) if isinstance(v, str) else v for v in value[:64]]
    return value


_second: list[Any] = [None, ""]  # (whole second, its ISO text up to the seconds): one per second


def _timestamp(created: float) -> str:
    """``datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")``, the date and
    time part made once per second (every review line has one); microseconds rounded as
    ``fromtimestamp`` rounds them (half to even), then cut to milliseconds as ``isoformat`` does."""
    frac, whole = math.modf(created)
    micros = round(frac * 1e6)
    second = int(whole)
    if micros >= 1_000_000:
        second, micros = second + 1, micros - 1_000_000
    if _second[0] != second:
        _second[:] = [second, dt.datetime.fromtimestamp(second, dt.UTC).isoformat(timespec="seconds")[:-6]]
    return f"{_second[1]}.{micros // 1000:03d}+00:00"


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", ...fields}``; a JSON message is merged, not nested."""

    def format(self, record: logging.LogRecord) -> str:
        exception = self.formatException(record.exc_info) if record.exc_info else None
        fields = getattr(record, "fields", None)
        return self.render(record.created, record.levelname.lower(), record.name, record.getMessage(),
                           fields if isinstance(fields, dict) else None, exception)

    def render(self, created: float, level: str, logger: str, message: str, fields: dict[str, Any] | None,
               exception: str | None = None) -> str:
        """The line for one event (``format`` of a record, and :func:`log_review`'s direct path)."""
        out: dict[str, Any] = {
            "ts": _timestamp(created),
            "level": level,
            "logger": logger,
        }
        try:
            parsed = json.loads(message) if message.startswith("{") else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            out.update(parsed)
        else:
            out["msg"] = message
        if fields is not None:
            out.update(fields)
        for key, value in out.items():  # clip in place: most fields are short strings, kept as they are
            kind = type(value)
            if kind is str:
                if len(value) > MAX_FIELD_CHARS:
                    out[key] = clip(value)
            elif kind in _SCALARS:
                continue
            elif isinstance(value, str):
                if len(value) > MAX_FIELD_CHARS:
                    out[key] = clip(value)
            elif isinstance(value, _SEQUENCES):
                out[key] = _bounded(value)
        if exception is not None:
            out["exception"] = clip(exception, MAX_EXCEPTION_CHARS)
        line = _dumps(out)
        if len(line) > MAX_RECORD_CHARS:  # many long fields together: keep what identifies the event
            core = {key: out[key] for key in _CORE if key in out}
            core["truncated"] = len(line)
            line = _dumps(core)
        return line


def _dumps(out: dict[str, Any]) -> str:
    """``json.dumps(out, default=str, separators=(",", ":"))``, through orjson when that gives the
    same text: one line per review is on every request's path, and orjson is ~5x faster."""
    try:
        line = orjson.dumps(out, default=str).decode()
    except TypeError:  # keys that are not strings, integers over 64 bits, lone surrogates
        line = ""
    if not line or not line.isascii():  # the standard library escapes non-ASCII; keep its text
        line = json.dumps(out, default=str, separators=(",", ":"))
    return line


def configure_logging(level: str = "info") -> None:
    """Route draguard's and uvicorn's loggers to one JSON handler on stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    for name in ("draguard", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False


def _direct_handler() -> logging.StreamHandler[Any] | None:
    """The one JSON stream handler a review line reaches (as :func:`configure_logging` sets it up),
    when nothing else — another handler, a filter — is on the way; else None."""
    found: list[logging.Handler] = []
    logger: logging.Logger | None = review_log
    while logger is not None:
        if logger.filters:
            return None
        found.extend(logger.handlers)
        logger = logger.parent if logger.propagate else None
    if len(found) != 1:
        return None
    handler = found[0]
    if (type(handler) is not logging.StreamHandler or handler.filters or handler.level > logging.INFO
            or not isinstance(handler.formatter, JsonFormatter)):
        return None
    return handler


def log_review(**fields: Any) -> None:
    """The one line per review: uid, kind, namespace, name, operation, decision, reasons, ms.

    Written straight to the handler's stream, as its own ``emit`` would write the record, when
    :func:`configure_logging`'s JSON handler is the only one on the way (the server's case): a
    ``LogRecord`` and the handler chain cost more than the line itself, on every review.  Else the
    record is made directly rather than through ``Logger.info``, which would also look up the
    caller's file and line (a stack walk on every review) that the JSON line never shows."""
    if not review_log.isEnabledFor(logging.INFO):
        return
    handler = _direct_handler()
    if handler is None:
        review_log.handle(_record(fields))
        return
    formatter = handler.formatter
    assert isinstance(formatter, JsonFormatter)
    line = formatter.render(time.time(), "info", review_log.name, "review", fields)
    with handler.lock or contextlib.nullcontext():
        try:
            handler.stream.write(line + handler.terminator)
            handler.flush()
        except Exception:  # as StreamHandler.emit does: the handler reports it, the review goes on
            handler.handleError(_record(fields))


def _record(fields: dict[str, Any]) -> logging.LogRecord:
    return review_log.makeRecord(review_log.name, logging.INFO, "", 0, "review", (), None, extra={"fields": fields})
