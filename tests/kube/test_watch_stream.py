"""The watch stream's reader (:func:`draguard.inventory.reflector._events`): bytes as they arrive
split into events, exactly as JSON reads them, never a crash on a bad line (a broken stream is
:class:`MalformedWatchError`: the reflector relists).

The stream is fed as chunks the way httpx hands them over, cut anywhere; no server is needed.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from draguard.inventory.reflector import MalformedWatchError, _events


async def _chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def read(*chunks: bytes) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        return [e async for e in _events(_chunks(list(chunks)))]

    return asyncio.run(go())


def line(name: str, etype: str = "MODIFIED") -> bytes:
    return json.dumps({"type": etype, "object": {"metadata": {"name": name}}}).encode()


def names(events: list[dict[str, Any]]) -> list[str]:
    return [e["object"]["metadata"]["name"] for e in events]


def test_events_cut_anywhere_are_joined() -> None:
    stream = line("a") + b"\n" + line("b") + b"\n" + line("c") + b"\n"
    for cut in range(1, len(stream)):
        assert names(read(stream[:cut], stream[cut:])) == ["a", "b", "c"], cut
    assert names(read(*(stream[i:i + 1] for i in range(len(stream))))) == ["a", "b", "c"]


def test_every_ascii_line_end_ends_an_event_and_blank_lines_are_skipped() -> None:
    assert names(read(line("a") + b"\r\n" + line("b") + b"\r" + line("c") + b"\n\n  \r\n" + line("d") + b"\n")) == [
        "a", "b", "c", "d"]
    assert names(read(line("a") + b"\r", b"\n" + line("b") + b"\n")) == ["a", "b"]  # \r\n cut between reads


def test_the_last_line_is_read_without_a_line_end() -> None:
    assert names(read(line("a") + b"\n" + line("b"))) == ["a", "b"]
    assert read(b"\n \n") == []


def test_a_unicode_line_separator_inside_a_string_stays_in_its_event() -> None:
    name = "x\u2028y\u0085z\u2029"
    stream = json.dumps({"type": "ADDED", "object": {"metadata": {"name": name}}}, ensure_ascii=False).encode()
    assert names(read(stream + b"\n")) == [name]


@pytest.mark.parametrize("bad", [b'{"type": "ADDED", "object": ', b"not json", b"\xef\xbb\xbf" + line("a")])
def test_a_line_that_is_not_json_breaks_the_stream(bad: bytes) -> None:
    with pytest.raises(MalformedWatchError, match="not JSON"):
        read(line("a") + b"\n" + bad + b"\n")


@pytest.mark.parametrize("bad", [b"[1, 2]", b'{"object": {}}', b'{"type": "ADDED", "object": []}', b'{"type": 1, "object": {}}'])
def test_json_that_is_not_an_event_breaks_the_stream(bad: bytes) -> None:
    with pytest.raises(MalformedWatchError, match="not a watch event"):
        read(bad + b"\n")


BIG = 123456789012345678901234567890


@pytest.mark.parametrize(("text", "expected"), [
    (b"%d" % BIG, BIG), (b"-%d" % BIG, -BIG),  # orjson: a float
    (b"NaN", math.nan), (b"1e400", math.inf), (b'"\\ud800"', "\ud800"),  # orjson: refused
    (b'"a\xffb"', "a\ufffdb"),  # not UTF-8: replaced, as httpx's text decoding did
])
def test_what_orjson_refuses_or_reads_otherwise_is_read_as_the_standard_library_does(text: bytes, expected: Any) -> None:
    got = read(b'{"type": "ADDED", "object": {"v": %s}}\n' % text)[0]["object"]["v"]
    assert type(got) is type(expected)
    assert got == expected or (math.isnan(expected) and math.isnan(got))


def test_ordinary_numbers_and_text_read_exactly() -> None:
    event = read(b'{"type": "ADDED", "object": {"i": 18446744073709551615, "f": 0.1, "u": "\\u00e9\xc3\xa9", '
                 b'"dup": 1, "dup": 2}}\n')[0]["object"]
    assert event == {"i": 18446744073709551615, "f": 0.1, "u": "\u00e9\u00e9", "dup": 2}


def test_between_events_of_one_read_the_loop_runs_what_is_ready() -> None:
    seen: list[str] = []

    async def go() -> None:
        other = asyncio.get_running_loop().create_task(_note(seen))
        async for event in _events(_chunks([line("a") + b"\n" + line("b") + b"\n" + line("c") + b"\n"])):
            seen.append(event["object"]["metadata"]["name"])
        await other

    asyncio.run(go())
    assert seen == ["a", "review", "b", "c"]


async def _note(seen: list[str]) -> None:
    seen.append("review")
