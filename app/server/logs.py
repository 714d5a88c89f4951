"""Structured JSON logs: one line per event, one line per review.

Why JSON lines: a webhook's logs are read by machines first (grep by ``uid`` when the API
server reports a denial, dashboards by ``decision``), and a log line must never span lines.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

__all__ = ["JsonFormatter", "configure_logging", "log_review"]

review_log = logging.getLogger("draguard.review")


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", ...fields}``; a JSON message is merged, not nested."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        message = record.getMessage()
        try:
            parsed = json.loads(message) if message.startswith("{") else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            out.update(parsed)
        else:
            out["msg"] = message
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, separators=(",", ":"))


def configure_logging(level: str = "info") -> None:
    """Route draguard's and uvicorn's loggers to one JSON handler on stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    for name in ("draguard", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False


def log_review(**fields: Any) -> None:
    """The one line per review: uid, kind, namespace, name, operation, decision, reasons, ms."""
    review_log.info("review", extra={"fields": fields})
