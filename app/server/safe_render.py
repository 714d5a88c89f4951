"""Response bodies that always encode, whatever text the client smuggled into them.

Why: a JSON body may carry a lone surrogate (``"\\ud800"``) in a uid or a name; Python
decodes it into a ``str`` that UTF-8 cannot encode, and the response — rendered after the
decision was made, logged and counted — failed with a 500.  JSON output escapes such
characters (``\\ud800``, so a uid is echoed exactly as it came); text, JUnit XML and SARIF
output replace them with U+FFFD, as Go's encoders do with invalid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from fastapi.responses import JSONResponse

__all__ = ["SafeJSONResponse", "encode_body", "render_json"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def render_json(content: Any) -> bytes:
    """``content`` as JSON bytes: orjson's, else Starlette's JSONResponse text, else — lone
    surrogates — the same with ASCII escapes."""
    try:  # orjson: several times the standard library's speed; it refuses lone surrogates
        return orjson.dumps(content)
    except TypeError:
        pass
    try:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                          separators=(",", ":")).encode("utf-8")  # JSONResponse.render's text
    except UnicodeEncodeError:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


class SafeJSONResponse(JSONResponse):
    """A JSONResponse that falls back to ASCII escapes when the content holds lone surrogates."""

    def render(self, content: Any) -> bytes:
        return render_json(content)


def encode_body(text: str, media_type: str) -> bytes:
    """UTF-8 bytes of an already rendered body; lone surrogates escaped (JSON) or replaced."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    if "json" in media_type:  # surrogates can only sit inside JSON strings: escape them there
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")
    return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
