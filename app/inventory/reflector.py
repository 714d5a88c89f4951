"""The parts of client-go's reflector that every live reader of the API server shares: the paged
list, the watch from its ``resourceVersion`` with bookmarks, the watch-event stream, the error
statuses, and the jittered backoff.

Why shared: the inventory (:mod:`.kube`: DeviceClasses, ResourceSlices, Nodes, claims) and the
audit (``app/server/audit/watch.py``: claims, templates, Pods, workloads) read different kinds
and keep different parts of them, but talk to the API server the same way; one implementation
means one place where a protocol detail (``items: null`` of an empty list, a ``410`` inside the
stream, a line that is not an event) is handled.  What each keeps, and how it reports trouble,
stays with the reader: :func:`reflect` runs its list and watch and hands it every failure
(:func:`run_together` runs the readers of every resource and stops them together);
:func:`list_pages` hands every item to ``keep``; :func:`watch_events` yields the events; errors
are :class:`ApiError` (``status``), :class:`GoneError` (relist) and :class:`MalformedWatchError`
(relist after a pause).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from .kubeconfig import KubeError

__all__ = [
    "ApiError",
    "Backoff",
    "GoneError",
    "MalformedWatchError",
    "list_pages",
    "raise_for_status",
    "reflect",
    "run_together",
    "status_message",
    "watch_events",
]

MAX_PAGES = 100_000
"""Pages of one list at the most (500 objects a page by default): a server that keeps answering
``continue`` cannot keep a reader listing for ever."""


class ApiError(KubeError):
    """The API server answered with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class GoneError(ApiError):
    """``410 Gone``: the resourceVersion we resume from is compacted away; relist."""

    def __init__(self, message: str = "resource version too old") -> None:
        super().__init__(410, message)


class MalformedWatchError(KubeError):
    """A list or watch answer that is not what the API server sends; the stream cannot be
    trusted, relist."""


@dataclass
class Backoff:
    """Exponential backoff with jitter (between half the cap and the cap), so many replicas do not
    retry in lockstep.  The default cap is short (issue #36: a 30 s cap kept watches down up to
    ~20 s after the API server was back): a retry is one small request."""

    initial: float = 0.5
    maximum: float = 2.0
    _attempt: int = 0

    def next_delay(self) -> float:
        cap = min(self.maximum, self.initial * (2**self._attempt))
        self._attempt = min(self._attempt + 1, 30)
        return random.uniform(cap / 2, cap)

    def reset(self) -> None:
        self._attempt = 0


async def reflect(
    *,
    needs_list: Callable[[], bool],
    list_once: Callable[[], Awaitable[None]],
    watch_once: Callable[[], Awaitable[None]],
    failed: Callable[[Exception], Awaitable[None]],
    backoff: Backoff,
) -> None:
    """client-go's reflector loop for one resource, until cancelled: list when there is no resume
    point (``needs_list``; a list resets ``backoff``), then watch from it — a watch that ends
    normally (the server's timeout) is simply made again.  Every failure goes to ``failed``, which
    decides whether to relist (drop the resume point) and how long to wait; none ends the loop."""
    while True:
        try:
            if needs_list():
                await list_once()
                backoff.reset()
            await watch_once()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never let one odd response end the watch
            await failed(exc)


async def run_together(tasks: Sequence[asyncio.Task[Any]]) -> None:
    """Wait for ``tasks`` (every resource's :func:`reflect`, and the reader's own) until one ends
    or the caller is cancelled; then cancel the others and wait for them, so that none outlives
    the client it reads through."""
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def status_message(resp: httpx.Response) -> str:
    """What the API server says went wrong: its ``Status`` message, else the HTTP reason phrase."""
    with contextlib.suppress(ValueError, AttributeError):
        body = resp.json()
        if isinstance(body, dict) and body.get("message"):
            return str(body["message"])
    return resp.reason_phrase


def raise_for_status(resp: httpx.Response) -> None:
    """:class:`GoneError` for 410, :class:`ApiError` for any other status from 300 up."""
    if resp.status_code < 300:
        return
    message = status_message(resp)
    if resp.status_code == 410:
        raise GoneError(message)
    raise ApiError(resp.status_code, message)


async def list_pages(
    client: httpx.AsyncClient,
    path: str,
    *,
    page_size: int,
    what: str,
    keep: Callable[[dict[str, Any]], None],
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> str:
    """Every item of the paged list at ``path`` handed to ``keep`` (page by page: a large list is
    never held whole); the list's ``resourceVersion`` to watch from ("0" when it gives none).
    ``what`` names the resource in the error of an answer that is not a List."""
    cont: str | None = None
    rv: str | None = None
    for _ in range(MAX_PAGES):
        query: dict[str, str | int] = {**(params or {}), "limit": page_size}
        if cont:
            query["continue"] = cont
        resp = await client.get(path, params=query, headers=dict(headers or {}))
        raise_for_status(resp)
        body = resp.json()
        # an empty PartialObjectMetadataList has "items": null (Go's nil slice), not []
        if not isinstance(body, dict) or not isinstance(body.get("items") or [], list):
            raise MalformedWatchError(f"list of {what} is not a List")
        for item in body.get("items") or []:
            if isinstance(item, dict):
                keep(item)
        meta = body.get("metadata") or {}
        rv = str(meta.get("resourceVersion") or "") or None
        cont = meta.get("continue") or None
        if not cont:
            break
    return rv or "0"


async def watch_events(
    client: httpx.AsyncClient,
    path: str,
    *,
    resource_version: str | None,
    timeout_seconds: tuple[int, int],
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    on_open: Callable[[], None] | None = None,
    read_timeout: float | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """The events of one watch from ``resource_version`` with bookmarks (``ADDED``, ``MODIFIED``,
    ``DELETED``, ``BOOKMARK``), until the server ends it after a random ``timeout_seconds`` (a
    range, so many watchers do not reconnect together).  ``on_open`` runs once the server has
    accepted the watch.  An ``ERROR`` event raises (:class:`GoneError` for an expired version).
    ``read_timeout``: seconds without a byte after which :class:`httpx.ReadTimeout` ends the watch
    (the API server sends a bookmark about every minute; default: the watch's own timeout + 30 s)."""
    timeout = random.randint(*timeout_seconds)
    query: dict[str, str | int] = {
        "watch": "true",
        "allowWatchBookmarks": "true",
        "resourceVersion": resource_version or "0",
        "timeoutSeconds": timeout,
        **(params or {}),
    }
    read = read_timeout if read_timeout is not None else timeout + 30.0
    req_timeout = httpx.Timeout(connect=5.0, read=read, write=10.0, pool=5.0)
    async with client.stream("GET", path, params=query, timeout=req_timeout, headers=dict(headers or {})) as resp:
        if resp.status_code != 200:
            await resp.aread()
            raise_for_status(resp)
        if on_open is not None:
            on_open()
        async for event in _events(resp.aiter_bytes()):
            if event["type"] == "ERROR":
                raise _watch_error(event["object"])
            yield event


def _watch_error(obj: dict[str, Any]) -> ApiError:
    """The exception an ``ERROR`` event stands for (its object is a ``Status``)."""
    code = obj.get("code")
    message = str(obj.get("message", ""))
    if code == 410 or obj.get("reason") in ("Expired", "Gone"):
        return GoneError(message or "resource version too old")
    return ApiError(int(code) if isinstance(code, int) else 500, message or "watch error")


def _decode_line(line: bytes) -> Any:
    """One line of the stream as JSON: orjson (several times the standard library's speed: every
    event of every watch passes here, on the event loop that answers the reviews), else the
    standard library's reading of the line as UTF-8 text with bad bytes replaced (what httpx's
    text decoding gave) — for what orjson refuses or reads differently: ``NaN``, numbers out of a
    double's range, lone surrogates, bytes that are not UTF-8, and integers of 19 digits or more
    (orjson gives a float for those beyond 64 bits; the standard library the exact integer).
    :class:`ValueError` when neither reads it."""
    if _LONG_RUN not in line.translate(_DIGITS):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line.decode("utf-8", "replace"))


_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
"""Every digit made ``0``, every other byte a space: a run of 19 digits is then a plain substring
search (both in C: ~1 us a line, where a regular expression took ~20, more than orjson itself)."""
_LONG_RUN = b"0" * 19


def _event(line: bytes) -> dict[str, Any] | None:
    """The watch event a line holds; None for a blank line; :class:`MalformedWatchError` else."""
    if not line.strip():
        return None
    try:
        event = _decode_line(line)
    except (ValueError, RecursionError) as exc:
        raise MalformedWatchError(f"watch event is not JSON: {_shown(line)!r}") from exc
    if (
        not isinstance(event, dict)
        or not isinstance(event.get("type"), str)
        or not isinstance(event.get("object"), dict)
    ):
        raise MalformedWatchError(f"not a watch event: {_shown(line)!r}")
    return event


def _shown(line: bytes) -> str:
    return line[:80].decode("utf-8", "replace")


async def _events(chunks: AsyncIterator[bytes]) -> AsyncIterator[dict[str, Any]]:
    """Watch events from a line-delimited JSON stream; anything else is a broken stream.

    Read as bytes and split at ``\n``, ``\r`` and ``\r\n`` (which JSON never holds unescaped) —
    not through httpx's text lines, two more layers of generators per read, which also split at
    the Unicode line separators a JSON string may hold (an event naming ``U+2028`` was cut in two
    and made a relist).  Between events that arrived in one read the loop runs whatever is ready
    (a review waiting behind a burst waits for one event, not for the burst)."""
    parts: list[bytes] = []
    async for chunk in chunks:
        if b"\n" not in chunk and b"\r" not in chunk:
            parts.append(chunk)
            continue
        if parts:
            parts.append(chunk)
            chunk = b"".join(parts)
            parts = []
        lines = chunk.splitlines(keepends=True)
        if not lines[-1].endswith((b"\n", b"\r")):
            parts.append(lines.pop())
        first = True
        for line in lines:
            event = _event(line)
            if event is None:
                continue
            if not first:
                await asyncio.sleep(0)
            first = False
            yield event
    event = _event(b"".join(parts))
    if event is not None:
        yield event
