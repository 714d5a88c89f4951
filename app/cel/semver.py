"""Semantic versions as Kubernetes' CEL ``semver`` library sees them (blang/semver v4).

Why a re-implementation instead of a generic semver package: the library must accept and
reject exactly what ``semver.Parse`` from github.com/blang/semver/v4 does (numbers up to
uint64, no leading zeros, non-empty pre-release / build parts) and produce the same error
texts, and ``semver(s, true)`` must apply Kubernetes' own ``normalizeAndParse``.  Comparison
follows semver 2.0 precedence; build metadata is ignored by ``compare`` and by ``==``.
"""

from __future__ import annotations

from functools import total_ordering

from ..k8s import UINT64_MAX, DraguardError, Memo, go_quote

__all__ = ["Semver", "SemverError", "parse_semver"]

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


class SemverError(DraguardError, ValueError):
    """A string ``semver.Parse`` (or Kubernetes' normalising parse) refuses; message is upstream's."""


@total_ordering
class Semver:
    """An immutable parsed version.  ``==``/ordering use semver precedence (build ignored)."""

    __slots__ = ("_key", "build", "major", "minor", "patch", "pre")

    def __init__(
        self, major: int, minor: int, patch: int, pre: tuple[str | int, ...] = (), build: tuple[str, ...] = ()
    ) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build
        # Pre-release identifiers: numeric ones sort before alphanumeric ones, and a version
        # without pre-release sorts after any with one.
        pre_key = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in pre)
        self._key: tuple[object, ...] = (major, minor, patch, 0 if pre else 1, pre_key)

    def compare(self, other: Semver) -> int:
        """``Version.Compare``: -1, 0 or 1."""
        a, b = self._key, other._key
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Semver):
            return self._key == other._key
        return NotImplemented

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Semver):
            return self.compare(other) < 0
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def _number(part: str, what: str) -> int:
    if not part or not set(part) <= _NUMBERS:
        raise SemverError(f"Invalid character(s) found in {what} number {go_quote(part)}")
    if len(part) > 1 and part[0] == "0":
        raise SemverError(f'{what.capitalize()} number must not contain leading zeroes "{part}"')
    value = int(part)
    if value > UINT64_MAX:
        raise SemverError(f'strconv.ParseUint: parsing "{part}": value out of range')
    return value


def _parse_strict(s: str) -> Semver:
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest = parts[2]
    cut = min((i for i in (rest.find("+"), rest.find("-")) if i >= 0), default=-1)
    patch_text = rest if cut < 0 else rest[:cut]
    patch = _number(patch_text, "patch")
    pre: list[str | int] = []
    build: list[str] = []
    tail = "" if cut < 0 else rest[cut:]
    if tail.startswith("-"):
        pre_text, _, build_text = tail[1:].partition("+")
        has_build = "+" in tail[1:]
        for p in pre_text.split("."):
            pre.append(_pre_part(p))
        if has_build:
            build = _build_parts(build_text)
    elif tail.startswith("+"):
        build = _build_parts(tail[1:])
    return Semver(major, minor, patch, tuple(pre), tuple(build))


def _pre_part(p: str) -> str | int:
    if not p:
        raise SemverError("Prerelease is empty")
    if set(p) <= _NUMBERS:
        if len(p) > 1 and p[0] == "0":
            raise SemverError(f'Version contains leading zeroes: "{p}"')
        return int(p)
    if not set(p) <= _ALPHANUM:
        raise SemverError(f'Invalid character(s) found in prerelease "{p}"')
    return p


def _build_parts(text: str) -> list[str]:
    out = []
    for b in text.split("."):
        if not b:
            raise SemverError("Build meta data is empty")
        if not set(b) <= _ALPHANUM:
            raise SemverError(f'Invalid character(s) found in build meta data "{b}"')
        out.append(b)
    return out


def _normalize(s: str) -> str:
    """Kubernetes' ``normalizeAndParse`` pre-processing (strip ``v``, leading zeros, pad)."""
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


_PARSED: Memo[tuple[str, bool], Semver] = Memo("semantic versions", 4096)


def parse_semver(s: str, normalize: bool = False) -> Semver:
    """``semver.Parse`` (or Kubernetes' ``normalizeAndParse`` when ``normalize``).

    Remembered in a bounded table (emptied when full; errors are not remembered): every device of
    a model publishes the same ``driverVersion``, and a :class:`Semver` is immutable.
    """
    key = (s, normalize)
    got = _PARSED.get(key)
    if got is not None:
        return got
    value = _parse_strict(_normalize(s) if normalize else s)
    if len(s) <= 128:
        _PARSED.put(key, value)
    return value
