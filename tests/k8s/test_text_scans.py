"""The whole-text scans of the decoders (control characters, lone surrogates) give the pattern's
answer on every text: the ASCII fast paths are checked against the plain searches."""

from __future__ import annotations

import random

import pytest
from draguard.k8s.fastyaml import _CONTROL, has_control_characters, needs_careful_reader
from draguard.k8s.jsonparse import _SURROGATE, has_surrogates

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
