"""The whole-text scans of the decoders (control characters, lone surrogates) give the pattern's
answer on every text: the ASCII fast paths are checked against the plain searches."""

from __future__ import annotations

import random

import pytest
from draguard.k8s.fastyaml import (
    _CONTROL,
    _RISKY_FIRST,
    _RISKY_TOKEN,
    DOCUMENT_START,
    document_starts,
    has_control_characters,
    needs_careful_reader,
)
from draguard.k8s.jsonparse import _SURROGATE, has_surrogates
from hypothesis import given, settings
from hypothesis import strategies as st

_ALPHABET = [chr(c) for c in range(0, 0x80)] + ["é", "\x85", "\x9f", "\ufffe", "\ufeff", "Ā", "\ud800", "\udfff", "😀"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    plain = "apiVersion: v1\nkind: List\nitems:\n- name: gpu-0\n"
    out = [plain, "", "\t\n\r ", plain + "\x7f", plain + "\x00", "\x01" + plain, plain + "é", plain + "\x85"]
    for _ in range(count):
        body = [rng.choice(plain) for _ in range(rng.randint(0, 40))]
        for _ in range(rng.randint(0, 2)):
            body.insert(rng.randint(0, len(body)), rng.choice(_ALPHABET))
        out.append("".join(body))
    return out


@pytest.mark.parametrize("text", _texts(5, 400))
def test_control_characters_agree_with_the_pattern(text: str) -> None:
    assert has_control_characters(text) is (_CONTROL.search(text) is not None)


@pytest.mark.parametrize("text", _texts(6, 200))
def test_surrogates_agree_with_the_pattern(text: str) -> None:
    assert has_surrogates(text) is (_SURROGATE.search(text) is not None)


def test_a_control_character_sends_ascii_and_other_texts_to_the_careful_reader() -> None:
    assert needs_careful_reader("a: b\x07c\n")
    assert needs_careful_reader("a: é\x07\n")
    assert not needs_careful_reader("a: b\tc\n")
    assert not needs_careful_reader("a: é\n")


def test_a_lone_surrogate_is_found_only_where_there_is_one() -> None:
    assert has_surrogates('{"a": "x\ud800"}')
    assert not has_surrogates('{"a": "é😀"}')
    assert not has_surrogates('{"a": "x"}')


# ------------------------------------------------------------------ document starts
_PIECES = ["---", "--- ", "---\n", "----", "\n", "a", " ", "\r", "\t", "-", "---x", "\n---", "\n--- a", "\r\n---", "\n---\t"]


def _documents_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["", "---", "---\n", "a\n---", "a\n---b", "\n---"] + [
        "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 14))) for _ in range(count)]


@pytest.mark.parametrize("text", _documents_texts(7, 600))
def test_document_starts_agree_with_the_pattern(text: str) -> None:
    assert document_starts(text) == [m.start() for m in DOCUMENT_START.finditer(text)]


def test_document_starts_are_line_starts_followed_by_a_separator() -> None:
    assert document_starts("---\na: 1\n--- \nb: 2\n---x: 3\n ---\n---") == [0, 9, 32]
    assert document_starts("a: '---'\n") == []


# ------------------------------------------------------------------ risky tokens
@given(st.from_regex(_RISKY_TOKEN, fullmatch=True).filter(bool))
@settings(max_examples=500, deadline=None)
def test_every_risky_token_starts_with_a_character_the_guard_searches(token: str) -> None:
    """The guard searches only tokens whose first character is in _RISKY_FIRST: a token the
    pattern matches with any other first character would pass unjudged."""
    assert token[0] in _RISKY_FIRST


@pytest.mark.parametrize("value", ["yes", "No", "off", "0777", "0x1F", "1_000", "12:30", "1e3", ".5", "-.inf", "*ref",
                                   "&a", "!!str", "<<", "=", "?", "...", "yes:", "e3", "E0", "_1e2"])
def test_a_risky_scalar_among_many_plain_tokens_still_sends_the_text_to_the_careful_reader(value: str) -> None:
    plain = "".join(f"  key-{i}: gpu-{i}-uuid-{i * 7919}\n" for i in range(200))
    assert not needs_careful_reader("spec:\n" + plain)
    assert needs_careful_reader("spec:\n" + plain + f"  last: {value}\n")
