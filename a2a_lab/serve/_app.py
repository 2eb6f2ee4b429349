"""The read-only HTTP API: ``GET /api/work-sessions`` and ``GET /api/events`` (rules §8).

The bodies are the reference handlers' bytes (``JSON.stringify(body, null, 2)``) built by
``WorkSessionsResult.to_api()`` and ``EventsResult.to_api()``, the functions the parity
tests check; the headers are the reference's. The query parameters are the reference's and
keep its JavaScript semantics (``limit=abc`` is 100, an unparsable ``since`` matches
nothing). What the reference would silently ignore or guess at is refused with a 400 JSON
body naming the parameter: an unknown parameter (a misspelt ``viewcategory`` would
otherwise quietly show everything), a parameter given twice (the reference silently keeps
the first), bytes that are not UTF-8 once percent-decoded, a value over
:data:`MAX_VALUE_CHARS` characters.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import polars as pl
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from a2a_lab.reference.rules import TASK_MONITOR_V1
from a2a_lab.serve._bodies import Body, work_sessions_body
from a2a_lab.serve._json import js_json_bytes
from a2a_lab.serve._live import BodyJob, LiveEvents, Snapshot
from a2a_lab.serve._stored import (
    StoredView,
    event_times,
    stored_events,
    stored_rows,
    stored_sessions,
)
from a2a_lab.sessions import (
    SessionQuery,
    WorkSessionsResult,
    events_query,
    load_overrides,
    work_sessions,
)

#: The reference's response headers (``peer-api/*.json`` ``meta.headers``).
HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, PATCH, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type, X-Task-Monitor-Token, Cookie",
}
WORK_SESSION_PARAMS = ("role", "type", "status", "viewCategory", "subTag", "limit")
EVENT_PARAMS = ("since", "role", "type", "viewCategory", "limit")
#: Longer values are refused: no filter value of the dashboard comes near it.
MAX_VALUE_CHARS = 4096


class BadRequest(ValueError):
    """A query the server refuses (400)."""


def json_response(body: Any, status: int = 200) -> Response:
    """A response with the reference's headers and ``JSON.stringify(body, null, 2)``."""
    data = body if isinstance(body, bytes) else js_json_bytes(body)
    return Response(data, status_code=status, headers=HEADERS, media_type="application/json")


def accepts_gzip(header: str) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (listed, and not with ``q=0``)."""
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().lower()
            if q.startswith("q="):
                try:
                    return float(q[2:]) > 0
                except ValueError:
                    return False
            return True
    return False


#: Bodies shorter than this are sent as they are (gzip would not pay for its header).
GZIP_MIN_BYTES = 1400


def body_response(body: Body, request: Request) -> Response:
    """A 200 with ``body``, gzip-encoded when the client accepts it and it is large."""
    if body.size >= GZIP_MIN_BYTES and accepts_gzip(request.headers.get("accept-encoding", "")):
        headers = {**HEADERS, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return Response(body.gzipped(), headers=headers, media_type="application/json")
    headers = {**HEADERS, "Vary": "Accept-Encoding"}
    if len(body.parts) > 1:
        return PartsResponse(body, headers)
    return Response(body.plain, headers=headers, media_type="application/json")


class PartsResponse(Response):
    """A 200 whose body is sent part by part, as :class:`Body` keeps it.

    A page's plain bytes are its kept session texts and the joins between them: sent as
    they are, they are never copied into one 125 MB string in the event loop (nor kept a
    second time beside the texts).
    """

    def __init__(self, body: Body, headers: dict[str, str]) -> None:
        super().__init__(b"", headers=headers, media_type="application/json")
        self.headers["content-length"] = str(body.size)
        self._chunks = body.chunks()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        last = len(self._chunks) - 1
        for i, chunk in enumerate(self._chunks):
            await send({"type": "http.response.body", "body": chunk, "more_body": i < last})


def error_response(status: int, message: str) -> Response:
    """``{"error": message, "status": status}`` with that status."""
    return json_response({"error": message, "status": status}, status)


def parse_query(raw: bytes, allowed: tuple[str, ...]) -> dict[str, str]:
    """The query string's parameters, each at most once; :class:`BadRequest` otherwise.

    ``+`` is a space and ``%XX`` a byte, as ``URLSearchParams`` reads them; a parameter
    without ``=`` has the empty value.
    """
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise BadRequest("the query string has bytes that are not percent-encoded") from None
    try:
        pairs = parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BadRequest("the query string is not valid UTF-8 once percent-decoded") from None
    except ValueError as exc:
        raise BadRequest(f"malformed query string: {exc}") from None
    params: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            raise BadRequest(
                f"unknown parameter {name!r}; this endpoint takes {', '.join(allowed)}"
            )
        if name in params:
            raise BadRequest(
                f"parameter {name!r} given more than once; give one value "
                "(lists are comma-separated)"
            )
        if len(value) > MAX_VALUE_CHARS:
            raise BadRequest(f"parameter {name!r} is longer than {MAX_VALUE_CHARS} characters")
        params[name] = value
    return params


@dataclass
class ServeConfig:
    """What a server answers from and how.

    Attributes
    ----------
    live
        The source's events.
    now_ms
        A fixed clock (epoch ms) for the work sessions' status; None: the wall clock at
        each request.
    overrides
        A category overrides file (re-read when it changes), or None.
    refresh_s
        Seconds between two reads of the live log (the refresher thread); 0: no thread
        (each call of :meth:`LiveEvents.refresh` is up to the caller).
    max_stale_s
        A work-session body made at most this many seconds ago is served while its
        successor (new lines, a session turning ARCHIVED) is made in the background
        (:meth:`LiveEvents.cached`); 0: every body is current, clients wait for it.
    """

    live: LiveEvents
    now_ms: float | None = None
    overrides: Path | None = None
    refresh_s: float = 0.25
    max_stale_s: float = 10.0


class _Overrides:
    """The overrides file's content, read again when its size or mtime changes."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self.value: dict[str, Any] | None = None
        self.version = 0
        self.check()

    def check(self) -> None:
        if self.path is None:
            return
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                self.value = load_overrides(self.path)
                self._stamp = stamp
                self.version += 1
        except (OSError, ValueError) as exc:
            # keep serving with the last good content: the server must not stop because
            # someone is editing the file; the reason is logged once per change
            print(f"a2a-lab serve: overrides {self.path}: {exc}", file=sys.stderr)


def _work_sessions_body(
    live: LiveEvents, snap: Snapshot, params: dict[str, str], now_ms: float, overrides: Any
) -> tuple[Body, pl.Series | None]:
    """The body, and the times at which a session of it may turn ARCHIVED (None: unknown).

    Without a status filter every session built is in ``result.sessions`` (the other
    filters drop sessions whatever their status), so only their last times matter; their
    ``last_time`` is whole milliseconds, at or before the exact time: an earlier bound.
    With one, from a store's sessions table: None (``snap.times``, every session's last
    time); from the events (a role or type filter on a store, or a log in memory): every
    event time.
    """
    query = SessionQuery.from_params(params)
    if snap.view is None:
        result = work_sessions(snap.events, query, now=now_ms, overrides=overrides)
        body = work_sessions_body(result, snap.events, live.texts, live.sessions)
        return body, _last_times(result)

    def make(view: StoredView) -> tuple[Body, pl.Series | None]:
        result, from_table = stored_sessions(view, query, now_ms, overrides)
        rows = functools.partial(stored_rows, view)
        body = work_sessions_body(result, rows, live.texts, live.sessions)
        candidates = _last_times(result)
        if candidates is None and not from_table:
            candidates = event_times(view)
        return body, candidates

    return _on_view(live, snap.view, make)


def _last_times(result: WorkSessionsResult) -> pl.Series | None:
    """The sessions' last times when no status filter dropped a session, else None."""
    if result.query["status"]:
        return None
    return result.sessions.get_column("last_time").dt.epoch("ms").cast(pl.Float64)


T = TypeVar("T")


def _on_view(live: LiveEvents, view: StoredView, make: Callable[[StoredView], T]) -> T:
    """``make(view)``; when a file of ``view`` was replaced meanwhile (a refresh compacted
    the store's parts), ``make`` of the store's view as committed now."""
    try:
        return make(view)
    except (OSError, pl.exceptions.PolarsError):
        fresh = live.current_view()
        if fresh is None or fresh.snap.generation == view.snap.generation:
            raise
        return make(fresh)


def _events_body(live: LiveEvents, snap: Snapshot, params: dict[str, str]) -> tuple[bytes, None]:
    if snap.view is not None:
        result = _on_view(live, snap.view, lambda view: stored_events(view, params))
        return js_json_bytes(result.to_api()), None
    result = events_query(
        snap.events,
        since=params.get("since"),
        role=params.get("role"),
        types=params.get("type"),
        view_category=params.get("viewCategory"),
        limit=params.get("limit"),
        files=snap.files,
    )
    return js_json_bytes(result.to_api()), None


async def not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        if exc.status_code == 405:
            return error_response(405, f"method {request.method} not allowed; use GET")
        return error_response(exc.status_code, str(exc.detail))
    return error_response(404, "not found")


async def server_error(request: Request, exc: Exception) -> Response:
    # one line in the server's log, one JSON line to the client; never a traceback
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    print(f"a2a-lab serve: {request.url.path}: {type(exc).__name__}: {text}", file=sys.stderr)
    return error_response(500, f"internal error: {type(exc).__name__}")


def _lifespan(
    config: ServeConfig, overrides: _Overrides
) -> Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]:
    """The server's start and stop: the refresher thread, the collector's frozen state."""
    stop = threading.Event()

    def refresher() -> None:
        while not stop.wait(config.refresh_s):
            try:
                if config.live.refresh() > 0:
                    config.live.prefetch()
                overrides.check()
            except Exception as exc:  # keep serving the last good snapshot
                print(
                    f"a2a-lab serve: refresh failed: {type(exc).__name__}: {exc}", file=sys.stderr
                )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # what was loaded so far lives as long as the server: out of the collector's
        # full passes, which then traverse only what requests and refreshes make
        gc.freeze()
        thread = None
        if config.refresh_s > 0:
            thread = threading.Thread(target=refresher, name="a2a-lab-serve-refresh", daemon=True)
            thread.start()
        try:
            yield
        finally:
            gc.unfreeze()
            stop.set()
            if thread is not None:
                thread.join(timeout=10)

    return lifespan


def create_app(config: ServeConfig) -> Starlette:
    """The Starlette application serving ``config``'s source (read-only).

    Parameters
    ----------
    config
        The source, clock, overrides and refresh period.

    Returns
    -------
    Starlette
        Routes ``GET /api/work-sessions`` and ``GET /api/events``; every other path is a 404
        and every other method a 405, both JSON.
    """
    live = config.live
    overrides = _Overrides(config.overrides)
    window = float(TASK_MONITOR_V1.archive_window_ms)

    def clock() -> float:
        return time.time() * 1000 if config.now_ms is None else config.now_ms

    def endpoint(
        allowed: tuple[str, ...], job: Callable[[dict[str, str]], tuple[BodyJob, float]]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            try:
                params = parse_query(request.scope.get("query_string", b""), allowed)
            except BadRequest as exc:
                return error_response(400, str(exc))
            made, max_stale_s = job(params)
            live.watch(made.key, lambda: job(params)[0])
            # a body made already (or a stale one while its successor is made) is sent from
            # the event loop; making one (a sessions query: CPU seconds) goes to a worker
            # thread, so the loop keeps sending the other clients their bodies meanwhile
            body = live.ready(made, max_stale_s=max_stale_s)
            if body is None:
                body = await run_in_threadpool(live.compute, made)
            return body_response(body, request)

        return handle

    def sessions(params: dict[str, str]) -> tuple[BodyJob, float]:
        now = clock()
        key = ("ws", overrides.version, tuple(sorted(params.items())))
        made = live.job(
            key,
            now,
            window,
            lambda snap: _work_sessions_body(live, snap, params, now, overrides.value),
        )
        return made, config.max_stale_s

    def events(params: dict[str, str]) -> tuple[BodyJob, float]:
        key = ("ev", tuple(sorted(params.items())))
        return live.job(key, None, window, lambda snap: _events_body(live, snap, params)), 0.0

    return Starlette(
        routes=[
            Route("/api/work-sessions", endpoint(WORK_SESSION_PARAMS, sessions), methods=["GET"]),
            Route("/api/events", endpoint(EVENT_PARAMS, events), methods=["GET"]),
        ],
        exception_handlers={404: not_found, 405: not_found, 500: server_error},
        lifespan=_lifespan(config, overrides),
    )
