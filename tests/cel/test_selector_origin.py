"""Whose selector: a typed field, never parsed back out of a message."""

from __future__ import annotations

from draguard.cel import SelectorOrigin


def test_a_class_selector() -> None:
    origin = SelectorOrigin("gpu.example.com")
    assert origin.is_class and origin.kind == "class"
    assert origin.owner == str(origin) == "class gpu.example.com"


def test_the_request_s_own_selector() -> None:
    origin = SelectorOrigin()
    assert not origin.is_class and origin.kind == "request"
    assert (origin.owner, str(origin)) == ("the request's", "request")


def test_a_class_named_request_is_still_a_class() -> None:
    """The string form could not tell them apart by its first word alone once a class is named so."""
    assert SelectorOrigin("request").is_class
