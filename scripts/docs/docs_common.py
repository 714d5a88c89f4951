"""What every generated reference page shares: the banner that says it is generated, and how to
write a Markdown table cell (a ``|`` or a line break in help text must not break the table)."""

from __future__ import annotations

import html

GITHUB = "https://github.com/draguard/draguard/blob/main/"


def banner(source: str) -> str:
    """The first lines of a generated page: where it comes from and how to regenerate it (an HTML
    comment, so the site shows nothing of it)."""
    return f"<!-- generated from {source} by scripts/docs/generate.py (`make docs`): do not edit -->\n\n"


def cell(text: object) -> str:
    """``text`` as one Markdown table cell (a ``|`` escaped once, also where :func:`code` did)."""
    return " ".join(str(text).split()).replace("\\|", "|").replace("|", "\\|")


def code(text: object) -> str:
    """``text`` as inline code that may stand in a table cell.  A ``|`` cannot be escaped inside a
    code span the same way for GitHub and for Python-Markdown, so such text becomes a ``<code>``
    element with the pipe as ``&#124;``, which both render as ``|``."""
    value = str(text)
    if "|" in value:
        return "<code>" + html.escape(value, quote=False).replace("|", "&#124;") + "</code>"
    fence = "``" if "`" in value else "`"
    pad = " " if "`" in value else ""
    return f"{fence}{pad}{value}{pad}{fence}"
