"""Evaluating class and request selectors on a device, the way the allocator does.

Why the order matters: the allocator evaluates the class selectors, then the request's, and
stops at the first ``false``; a CEL runtime error on the way aborts the whole scheduling
attempt.  So "does this device match?" has three answers: yes, no, or *error* — and which
selector errored is part of the answer.  Results depend only on a device's content, so they are
cached per device shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cel import CelRuntimeError, CompiledSelector, CompileFailure, SelectorOrigin, compile_selector
from ..inventory import DeviceRecord

__all__ = ["SelectorError", "SelectorSet", "compile_selectors"]


@dataclass(frozen=True, slots=True)
class SelectorError:
    """A selector that errors (or cannot run) on a device."""

    origin: SelectorOrigin
    index: int
    expression: str
    message: str
    hint: str | None = None
    compile_error: bool = False


class SelectorSet:
    """The compiled selectors of one class + one request, evaluated lazily per device shape."""

    def __init__(self, entries: list[tuple[SelectorOrigin, int, str, CompiledSelector | CompileFailure | None]]) -> None:
        self._entries = entries
        self._cache: dict[int, bool | SelectorError] = {}
        self.rejected_by: dict[int, tuple[SelectorOrigin, int, str]] = {}
        """Per device shape that did not match: the selector that said no (origin, index, expression)."""
        self.evaluated = 0

    def attribute_reads(self) -> tuple[tuple[str, str], ...] | None:
        """Every ``(domain, id)`` attribute the selectors can read, or ``None`` when that is unbounded.

        Capacities, the driver and ``allowMultipleAllocations`` are part of a device's body, which
        profiles always compare; selectors that do not compile read nothing (they fail everywhere).
        """
        reads: set[tuple[str, str]] = set()
        for _, _, _, compiled in self._entries:
            if not isinstance(compiled, CompiledSelector):
                continue
            if compiled.reads is None:
                return None
            reads.update((p[1], p[2]) for p in compiled.reads if len(p) == 3 and p[0] == "attributes")
        return tuple(sorted(reads))

    def compile_problem(self) -> SelectorError | None:
        """The first selector that does not compile (only a class can get here unvalidated)."""
        for origin, index, expression, compiled in self._entries:
            if isinstance(compiled, CompileFailure):
                return SelectorError(origin, index, expression, compiled.message, compile_error=True)
        return None

    def required_driver(self) -> tuple[bool, str | None]:
        """(pinned, driver): whether some selector pins ``device.driver`` and to what.

        ``(True, None)`` means two selectors pin different drivers, so no device can match.
        """
        pinned: set[str] = set()
        for _, _, _, compiled in self._entries:
            if isinstance(compiled, CompiledSelector) and compiled.driver is not None:
                pinned.add(compiled.driver)
        if not pinned:
            return False, None
        return True, (next(iter(pinned)) if len(pinned) == 1 else None)

    def match(self, dev: DeviceRecord) -> bool | SelectorError:
        cached = self._cache.get(dev.profile)
        if cached is not None:
            return cached
        result = self._evaluate(dev)
        self._cache[dev.profile] = result
        return result

    def _evaluate(self, dev: DeviceRecord) -> bool | SelectorError:
        for origin, index, expression, compiled in self._entries:
            if isinstance(compiled, CompileFailure):
                return SelectorError(origin, index, expression, compiled.message, compile_error=True)
            if compiled is None:
                return SelectorError(origin, index, expression, "selector has no CEL expression", compile_error=True)
            if dev.broken_attribute is not None:
                return SelectorError(
                    origin, index, expression, f"attribute {dev.broken_attribute} has no value (unsupported attribute value)"
                )
            if dev.cel is None:
                return SelectorError(origin, index, expression, "CEL device could not be built", compile_error=True)
            self.evaluated += 1
            got = compiled.evaluate(dev.cel)
            if isinstance(got, CelRuntimeError):
                return SelectorError(origin, index, expression, got.message, got.hint)
            if got is not True:
                self.rejected_by[dev.profile] = (origin, index, expression)
                return False
        return True


def compile_selectors(class_name: str, class_selectors: tuple[str | None, ...], request_selectors: tuple[str | None, ...]) -> SelectorSet:
    """Compile (cached by the CEL package) class selectors first, then the request's."""
    entries: list[tuple[SelectorOrigin, int, str, CompiledSelector | CompileFailure | None]] = []
    for origin, selectors in ((SelectorOrigin(class_name), class_selectors), (SelectorOrigin(), request_selectors)):
        for i, expr in enumerate(selectors):
            entries.append((origin, i, expr or "", compile_selector(expr) if expr else None))
    return SelectorSet(entries)
