"""The fast YAML path: yaml-rs (Rust) for texts that mean the same in every YAML reader.

Why a guarded fast path and not a faster parser outright: Kubernetes reads YAML 1.1-style
(``yes``/``on`` are booleans, ``0777`` is octal, ``<<`` merges), yaml-rs reads YAML 1.2 (they
are strings and a decimal), and draguard's reference decoder (PyYAML) has its own corners
(``1e3`` stays a string, ``12:30`` is a base-60 integer).  Measured on a 2.8 MB inventory, PyYAML's
C loader needs ~1.2 s to build the objects and ~3 s with positions; yaml-rs needs ~0.3 s; rapidyaml
parses in ~0.1 s but leaves the conversion to Python objects, with YAML 1.1 resolution, to
Python code, which costs more than it saves.

So yaml-rs answers only when :data:`_DIFFERENT` finds no plain scalar whose meaning depends on
the YAML version or the reader, no anchors, aliases, tags or directives, and no control
characters; the test-suite decodes every manifest of the project both ways and compares.  Any
error (syntax, duplicate keys) also goes to PyYAML, whose messages and positions are the
reference.  The guard is conservative: a false alarm costs speed, never a different answer.
"""

from __future__ import annotations

import re
from typing import Any

import yaml_rs

__all__ = ["DOCUMENT_START", "LEADING_TRIVIA", "document_starts", "fast_yaml_documents", "has_control_characters", "needs_careful_reader"]

_FLOW_CHARS = re.compile(r"[\[\]{},]+")
_QUOTED = re.compile(
    r"""(^|[\[{,]|[:-][ \t])[ \t]*(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*')""", re.MULTILINE
)
"""A quoted scalar on one line, where a scalar starts (a line's start, after ``[``, ``{``, ``,``,
``: `` or ``- ``): its text is a string in every reader, so its words are not tokens to judge (it is read as the plain word ``q``)."""
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#[^\n]*", re.MULTILINE)
_RISKY_TOKEN = re.compile(
    "|".join(
        [
            # booleans of YAML 1.1 that YAML 1.2 reads as strings
            r"[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF",
            # numbers whose reading differs: leading zeros (octal in 1.1), 0o/0x/0b prefixes,
            # underscores, base 60, exponents, a leading dot, infinities and NaN
            r"[-+]?0[0-9_]+|[-+]?0[oOxXbB][0-9a-fA-F_]*",
            r"[-+]?[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?",
            r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?",
            r"[-+]?(?:[0-9][0-9_]*)?\.?[0-9_]*[eE][-+]?[0-9]+",
            r"[-+]?\.[0-9][0-9_]*",
            r"[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)",
            # anchors, aliases, tags, merge keys, the "=" value key, document ends
            r"![^&=\s]*|[&*][^&=\s]+|<<.*|=|:|\?|\.\.\..*",
        ]
    )
)
"""A whole token whose YAML reading may depend on the reader (checked with ``fullmatch``)."""
_RISKY_LINE = re.compile(
    rf"^(?:{_RISKY_TOKEN.pattern})$|^(?:{_RISKY_TOKEN.pattern})(?<!:):+$", re.MULTILINE
)
""":data:`_RISKY_TOKEN` over a text of one token a line: a line that is a risky token, or a risky
token not ending in ``:`` followed by colons (the token as a mapping key, ``yes:``) — what
``fullmatch(t) or (t.endswith(":") and fullmatch(t.rstrip(":")))`` says of each token, in one
C-level search instead of a Python loop over every distinct token (uuids and names make
thousands per inventory file)."""
_CONTROL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]")
_ASCII_NOT_CONTROL = bytes(b for b in range(128) if not _CONTROL.match(chr(b)))
"""The ASCII bytes :data:`_CONTROL` does not match: deleting them from an ASCII text leaves its control characters."""
DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)
"""A ``---`` line: where an explicit YAML document starts (:func:`document_starts` finds them)."""
_RISKY_FIRST = frozenset("yYnNoOeE_0123456789+-.!&*<=:?")
"""Every character a :data:`_RISKY_TOKEN` can start with: a token starting otherwise is not judged."""
LEADING_TRIVIA = re.compile(r"(?:[ \t\r]*(?:#[^\n]*)?\n)*")
"""Blank and comment lines before the first document."""


def needs_careful_reader(text: str) -> bool:
    """Whether PyYAML must decode ``text`` (yaml-rs might read it differently).

    Every plain scalar is a whitespace- and flow-indicator-separated token (or several), so
    checking each distinct token (keys also without their colon) finds every scalar whose meaning could differ.

    Quoted scalars on one line are left out first (:data:`_QUOTED`): ``schedule: "*/5 * * * *"``
    (every CronJob) has the tokens ``*`` and ``*"``, which look like an alias, and sent whole
    charts to the careful reader.  Only a quote where a scalar starts opens one — a quote inside
    a plain scalar (``it's``) does not, so what is left out is always a quoted scalar or text
    inside a larger plain scalar, never a whole plain scalar.  Quoted text across lines, tags
    and anchors in front of quotes (``!!str "x"``, ``&a 'x'``) are still judged.
    """
    if has_control_characters(text) or text.startswith("%") or "\n%" in text:
        return True
    view = _without_quoted(text)
    view = _COMMENT.sub("", view) if "#" in view else view
    tokens = set(view.split())
    if any(c in view for c in "[]{},"):
        flow = [t for t in tokens if _FLOW_CHARS.search(t)]
        for t in flow:
            tokens.update(_FLOW_CHARS.split(t))
    # only tokens that can start a risky one are searched (a few of the distinct ones: keys,
    # names and uuids mostly start otherwise); the search is a MULTILINE one, which the regex
    # engine tries at every position, so the text it searches is kept short
    candidates = [t for t in tokens if t and t[0] in _RISKY_FIRST]
    return bool(candidates) and _RISKY_LINE.search("\n".join(candidates)) is not None


def document_starts(text: str) -> list[int]:
    """Where :data:`DOCUMENT_START` matches in ``text`` (``[m.start() for m in finditer]``).

    Why not the pattern: a ``^`` in MULTILINE mode is tried at every position of the text —
    ~1.3 ms for a 190 kB file, twice per file with a finding (counting documents, then finding
    their spans); ``str.find`` jumps from one ``\n---`` to the next (~0.1 ms).  A line start is
    where the pattern's ``^`` is: the text's start or just after ``\n``.
    """
    starts: list[int] = []
    end = len(text)
    at = 0 if text.startswith("---") else _after_newline(text.find("\n---"))
    while at >= 0:
        after = at + 3
        if after == end or text[after] in " \t\r\n":
            starts.append(at)
        at = _after_newline(text.find("\n---", after))
    return starts


def _after_newline(found: int) -> int:
    """The line start after a ``\n`` found at ``found``; -1 when none was found."""
    return found + 1 if found >= 0 else -1


def has_control_characters(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`_CONTROL` (YAML readers differ on them).

    An ASCII text (what inventories and manifests nearly always are; ``str.isascii`` is a flag
    lookup) is encoded and its ordinary bytes deleted with ``bytes.translate``, a table-driven
    C loop: ~0.05 s over 53 MB where the character-class search takes ~0.35 s.  Other texts
    are searched with the pattern.
    """
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_NOT_CONTROL))
    return _CONTROL.search(text) is not None


def _without_quoted(text: str) -> str:
    """``text`` with :data:`_QUOTED`'s scalars replaced, reading only the lines that hold a quote.

    A quoted scalar of :data:`_QUOTED` never spans lines, so substituting line by line is the
    substitution over the whole text; scanning 3 MB of inventory for where a scalar starts cost
    ~0.2 s when three of its 130,000 lines hold a quote, finding the quotes (``str.find``) ~nothing.
    """
    found = [text.find('"'), text.find("'")]
    if found[0] < 0 and found[1] < 0:
        return text
    out: list[str] = []
    pos = 0
    end = len(text)
    while True:
        for i, quote in enumerate("\"'"):
            if 0 <= found[i] < pos:
                found[i] = text.find(quote, pos)
        waiting = [f for f in found if f >= 0]
        if not waiting:
            break
        first = min(waiting)
        start = text.rfind("\n", 0, first) + 1
        stop = text.find("\n", first)
        stop = end if stop < 0 else stop
        out.append(text[pos:start])
        out.append(_QUOTED.sub(r"\1q", text[start:stop]))
        pos = stop
        if pos >= end:
            break
    out.append(text[pos:])
    return "".join(out)


def fast_yaml_documents(text: str) -> list[Any] | None:
    """Every document of ``text`` (``None`` for empty ones), or ``None`` when PyYAML must decide."""
    if needs_careful_reader(text):
        return None
    try:
        value = yaml_rs.loads(text, parse_datetime=False)
    except Exception:  # syntax errors, duplicate keys, limits: the careful reader explains them
        return None
    starts = len(document_starts(text))
    body = text[LEADING_TRIVIA.match(text).end():]  # type: ignore[union-attr]
    documents = starts if body.startswith("---") else starts + 1
    if documents == 1:
        return [] if value is None and not body.strip() else [value]
    if not isinstance(value, list) or len(value) != documents:
        return None
    return value
