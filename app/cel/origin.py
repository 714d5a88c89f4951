"""Whose selector a device selector is: a DeviceClass's, or the request's own.

Why a type: the allocator evaluates the class selectors first, then the request's, and messages
blame one of them ("selector #0 of the class", "the request's selector #1").  As a string
(``"class gpu.example.com"`` / ``"request"``) the kind had to be parsed back out of the text;
here it is a field.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SelectorOrigin"]


@dataclass(frozen=True, slots=True)
class SelectorOrigin:
    """``class_name`` for a DeviceClass's selector; ``None`` for the request's own."""

    class_name: str | None = None

    @property
    def is_class(self) -> bool:
        return self.class_name is not None

    @property
    def kind(self) -> str:
        """``class`` or ``request``."""
        return "class" if self.is_class else "request"

    @property
    def owner(self) -> str:
        """Who owns the selector, as a message says it: ``class gpu.example.com`` or ``the request's``."""
        return f"class {self.class_name}" if self.is_class else "the request's"

    def __str__(self) -> str:
        return f"class {self.class_name}" if self.is_class else "request"
