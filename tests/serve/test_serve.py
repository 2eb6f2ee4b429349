"""``a2a-lab serve``: the reference's bodies byte for byte over real HTTP, clean 400s, live refresh.

Each server runs uvicorn in a thread on an ephemeral loopback port; requests go through
``httpx`` over TCP, so routing, query decoding, headers and bytes are the deployed ones.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import itertools
import json
import random
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.enrich import enrich
from a2a_lab.io import load
from a2a_lab.serve import LiveEvents, ServeConfig, create_app, js_json_bytes, js_number
from a2a_lab.serve._app import _events_body, _work_sessions_body
from a2a_lab.serve._bodies import Body, EventTexts, SessionTexts, work_sessions_body
from a2a_lab.sessions import SessionQuery, work_sessions
from tests.support.node_js import needs_node, node_json
from tests.support.paths import DATA, ROOT

API = DATA / "peer-api"
PEER = DATA / "peer"
CASES = sorted(p.name for p in API.glob("*.json"))


@contextmanager
def serving(config: ServeConfig) -> Iterator[str]:
    """Run ``config``'s app under uvicorn on 127.0.0.1, any free port; yields the base URL."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config), host="127.0.0.1", port=0, log_level="warning", access_log=False
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    sock: socket.socket = server.servers[0].sockets[0]
    host, port = sock.getsockname()[:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _live_log(folder: Path, first: int) -> tuple[list[bytes], Path]:
    """The test log's lines, and a live file in ``folder`` holding the ``first`` of them."""
    lines = (PEER / "gen300_s11_bad5.ndjson").read_bytes().split(b"\n")
    live_file = folder / "coordination-events.ndjson"
    live_file.write_bytes(b"\n".join(lines[:first]) + b"\n")
    return lines, live_file


def _case(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((API / name).read_text(encoding="utf-8"))
    return case


def _groups() -> dict[tuple[str, int, str | None], list[str]]:
    """Cases by what the server is started with: log, clock, overrides file."""
    groups: dict[tuple[str, int, str | None], list[str]] = {}
    for name in CASES:
        meta = _case(name)["meta"]
        key = (meta["log"], meta["nowMs"], meta["overrides"]["file"])
        groups.setdefault(key, []).append(name)
    return groups


def _check_over_http(
    groups: dict[tuple[str, int, str | None], list[str]], store_in: Path | None = None
) -> int:
    """Serve each group's log and check its cases' status, headers and body bytes.

    ``store_in``: the log is the live file of a directory there, followed into a history
    store (the server answers from the store's tables); None: the file in memory.
    """
    checked = 0
    for (log, now_ms, overrides), names in groups.items():
        if store_in is None:
            live = LiveEvents(PEER / log)
        else:
            folder = store_in / f"{log}-{now_ms}-{overrides}"
            (folder / "logs").mkdir(parents=True)
            shutil.copy(PEER / log, folder / "logs" / "coordination-events.ndjson")
            live = LiveEvents(folder / "logs", store=folder / "store")
            assert live.snapshot.view is not None
        config = ServeConfig(
            live=live,
            now_ms=now_ms,
            overrides=API / "overrides" / overrides if overrides else None,
            refresh_s=0,
        )
        with serving(config) as base, httpx.Client(base_url=base) as client:
            for name in names:
                meta = _case(name)["meta"]
                # the request URL the reference answered, sent as recorded
                reply = client.get(meta["requestUrl"])
                assert reply.status_code == meta["httpStatus"], name
                assert len(reply.content) == meta["bodyBytes"], name
                assert hashlib.sha256(reply.content).hexdigest() == meta["bodySha256"], name
                for header, value in meta["headers"].items():
                    assert reply.headers[header] == value, (name, header)
                # httpx asks for gzip: large bodies come compressed, the same bytes decoded
                large = meta["bodyBytes"] >= 1400
                assert reply.headers.get("content-encoding") == ("gzip" if large else None)
                plain = client.get(meta["requestUrl"], headers={"Accept-Encoding": "identity"})
                assert "content-encoding" not in plain.headers
                assert plain.content == reply.content, name
                checked += 1
    return checked


@pytest.mark.slow
def test_every_peer_api_case_byte_for_byte_over_http() -> None:
    assert _check_over_http(_groups()) == len(CASES) == 53


@pytest.mark.slow
def test_every_peer_api_case_byte_for_byte_from_a_store(tmp_path: Path) -> None:
    """The same bytes when the server answers from a store's tables (a log followed into it)."""
    assert _check_over_http(_groups(), store_in=tmp_path) == len(CASES) == 53


@pytest.mark.parametrize("from_store", [False, True])
def test_the_tricky_log_cases_byte_for_byte_over_http(tmp_path: Path, from_store: bool) -> None:
    """The fast suite's share: one server, the tricky log's cases at its first clock."""
    first: tuple[str, int, str | None] = ("tricky.ndjson", 1771507200000, None)
    groups = {k: v for k, v in _groups().items() if k == first}
    assert _check_over_http(groups, store_in=tmp_path if from_store else None) >= 20


def _malformed(rng: random.Random) -> str:
    """A query the server must refuse: unknown, repeated, undecodable or overlong parameters."""
    endpoint = rng.choice(["/api/work-sessions", "/api/events"])
    known = "role" if rng.random() < 0.5 else "limit"
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(1, 12)))
    kind = rng.randrange(5)
    if kind == 0:  # unknown name (a near-miss of a real one half the time)
        name = rng.choice(["viewcategory", "Limit", "roles", "sub_tag", "x" + word])
        query = f"{name}={word}"
    elif kind == 1:  # a parameter twice
        query = f"{known}={word}&{known}={word[::-1]}"
    elif kind == 2:  # percent-decoding gives no UTF-8
        query = f"{known}=" + rng.choice(["%FF", "%C3%28", "%E2%82", "%ED%A0%80", "%80abc"])
    elif kind == 3:  # overlong value
        query = f"{known}=" + "9" * rng.randint(4097, 9000)
    else:  # an unknown name with no value at all, mixed with valid ones
        query = f"limit=5&{word.upper()}Z&type=a2a.send"
    return f"{endpoint}?{query}"


def test_one_hundred_malformed_requests_get_one_hundred_clean_400s() -> None:
    rng = random.Random(24)
    config = ServeConfig(live=LiveEvents(PEER / "tricky.ndjson"), now_ms=1.9e12, refresh_s=0)
    urls = [_malformed(rng) for _ in range(100)]
    with serving(config) as base, httpx.Client(base_url=base) as client:
        replies = [client.get(url) for url in urls]
        # the server still answers after them
        assert client.get("/api/events?limit=1").status_code == 200
    assert [r.status_code for r in replies] == [400] * 100
    for reply in replies:
        assert reply.headers["content-type"] == "application/json"
        body = reply.json()
        assert set(body) == {"error", "status"} and body["status"] == 400
        assert "\n" not in body["error"] and "Traceback" not in body["error"]


def test_unknown_route_and_method_are_json() -> None:
    config = ServeConfig(live=LiveEvents(PEER / "tricky.ndjson"), now_ms=1.9e12, refresh_s=0)
    with serving(config) as base, httpx.Client(base_url=base) as client:
        missing = client.get("/api/nothing")
        post = client.post("/api/events")
    assert missing.status_code == 404 and missing.json()["status"] == 404
    assert post.status_code == 405 and post.json()["status"] == 405


def test_lines_appended_while_serving_are_visible_within_two_seconds(tmp_path: Path) -> None:
    lines, live_file = _live_log(tmp_path, 900)
    config = ServeConfig(live=LiveEvents(tmp_path), now_ms=1.9e12, refresh_s=0.25)
    with serving(config) as base, httpx.Client(base_url=base) as client:
        before = client.get("/api/events").json()["total"]
        with live_file.open("ab") as fh:
            fh.write(b"\n".join(lines[900:]))
        appended = time.monotonic()
        while True:
            total = client.get("/api/events").json()["total"]
            waited = time.monotonic() - appended
            if total != before or waited > 5:
                break
            time.sleep(0.05)
        served = client.get("/api/work-sessions?limit=1000").content
    assert total == 1716 and before < total
    assert waited <= 2.0
    # what was served after the append is what a fresh read of the whole file gives
    fresh = work_sessions(
        enrich(load(live_file, raw=True).events), SessionQuery(limit=1000), now=1.9e12
    )
    assert served == js_json_bytes(fresh.to_api())


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(cuts=st.lists(st.integers(1, 1720), min_size=1, max_size=4))
def test_incremental_refreshes_equal_a_fresh_load(tmp_path_factory: Any, cuts: list[int]) -> None:
    """Lines arriving in any number of pieces (cut mid-line too) give the fresh load's bodies."""
    data = (PEER / "gen300_s11_bad5.ndjson").read_bytes()
    folder = tmp_path_factory.mktemp("live")
    live_file = folder / "coordination-events.ndjson"
    points = sorted({min(len(data), c * len(data) // 1720) for c in cuts})
    live_file.write_bytes(data[: points[0]])
    live = LiveEvents(folder)
    for start, end in zip(points, [*points[1:], len(data)], strict=True):
        with live_file.open("ab") as fh:
            fh.write(data[start:end])
        live.refresh()
    snap = live.snapshot
    fresh = enrich(load(live_file, raw=True).events)
    for roles, status, limit in (
        (None, None, None),
        (None, "ACTIVE,QUIET", "7"),
        ("conversation.main", None, None),
    ):
        query = SessionQuery(roles=roles, status=status, limit=limit)
        got = work_sessions(snap.events, query, now=1.77e12)
        want = work_sessions(fresh, query, now=1.77e12)
        assert js_json_bytes(got.to_api()) == js_json_bytes(want.to_api())


@settings(max_examples=15, deadline=None)
@given(
    offsets=st.lists(
        st.floats(-3 * 86_400_000.0, 3 * 86_400_000.0, allow_nan=False), min_size=1, max_size=6
    )
)
def test_a_cached_body_is_the_body_at_that_clock(offsets: list[float]) -> None:
    """Clocks moving across the archive window: the cache never serves a stale status."""
    live = _tricky_live()
    times = live.snapshot.times
    base = float(times[times.len() // 2])
    window = 86_400_000.0
    for now in sorted(base + o for o in offsets):

        def compute(snap: Any, now: float = now) -> tuple[bytes, pl.Series]:
            result = work_sessions(snap.events, now=now)
            last = result.sessions.get_column("last_time").dt.epoch("ms").cast(pl.Float64)
            return js_json_bytes(result.to_api()), last

        got = live.cached("ws", now, window, compute).plain
        assert got == compute(live.snapshot)[0]
        for status in ("ARCHIVED", "ACTIVE,QUIET"):
            # a status filter: the server's own body function, which must not narrow
            body = _work_sessions_body(live, live.snapshot, {"status": status}, now, None)
            assert body[1] is None
            got = live.cached(("s", status), now, window, functools.partial(_same, body)).plain
            want = work_sessions(
                live.snapshot.events, SessionQuery(status=status), now=now
            ).to_api()
            assert got == js_json_bytes(want)


def _same(body: tuple[Body, pl.Series | None], snap: Any) -> tuple[Body, pl.Series | None]:
    return body


_LIVE: list[LiveEvents] = []


def _tricky_live() -> LiveEvents:
    if not _LIVE:
        _LIVE.append(LiveEvents(PEER / "tricky.ndjson"))
    return _LIVE[0]


@needs_node
@settings(max_examples=1, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=True, allow_infinity=True)
        | st.integers(-(2**70), 2**70)
        | st.sampled_from([1e21, 1e-7, 1e-6, 1e20, 123e-20, 5e-324, -0.0]),
        min_size=200,
        max_size=200,
    )
)
def test_numbers_are_written_as_javascript_writes_them(values: list[float | int]) -> None:
    # one Node run for 200 numbers; each is sent as its exact text (a double, or an integer
    # beyond 2**53 that JavaScript rounds to a double as Python's float() does)
    texts = [repr(float(v)) if isinstance(v, float) else str(v) for v in values]
    texts = [{"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(t, t) for t in texts]
    expected = node_json("console.log(JSON.stringify(input.map(t=>String(Number(t)))))", texts)
    got = [js_number(v) for v in values]
    # String(NaN) is "NaN" where JSON.stringify writes null: compare JSON's spelling
    expected = ["null" if e in ("NaN", "Infinity", "-Infinity") else e for e in expected]
    assert got == expected


def test_the_bodies_are_the_recorded_bytes_in_process() -> None:
    """``js_json_bytes`` of the recorded event bodies gives the recorded hash (no server)."""
    for name in CASES:
        case = _case(name)
        if "__ev__" in name:
            body = js_json_bytes(case["response"])
            assert hashlib.sha256(body).hexdigest() == case["meta"]["bodySha256"], name


def test_a_store_source_serves_what_its_log_serves(tmp_path: Path) -> None:
    from a2a_lab.io import ingest

    logdir = tmp_path / "logs"
    logdir.mkdir()
    shutil.copy(PEER / "gen300_s11_bad5.ndjson", logdir / "coordination-events.ndjson")
    ingest(logdir, tmp_path / "store")
    with (logdir / "coordination-events.ndjson").open("ab") as fh:
        fh.write(
            b'{"type":"a2a.send","ts":1771302796261,"data":{"fromAgent":"main","toAgent":"x"}}\n'
        )
    # the new line is ingested at start, the tables made again in a child process
    from_store = LiveEvents(tmp_path / "store", in_child=True)
    from_store.close()
    assert from_store.worker_peak_mb > 0
    from_log = LiveEvents(logdir)
    assert from_store.snapshot.view is not None and from_log.snapshot.view is None
    assert from_store.snapshot.event_count == from_log.snapshot.events.height == 1717
    for params in ({"limit": "1000"}, {"role": "conversation.main"}, {"status": "ARCHIVED"}):
        bodies = [
            _work_sessions_body(live, live.snapshot, params, 1.8e12, None)[0].plain
            for live in (from_store, from_log)
        ]
        want = work_sessions(
            from_log.snapshot.events, SessionQuery.from_params(params), now=1.8e12
        ).to_api()
        assert bodies[0] == bodies[1] == js_json_bytes(want), params
    events = [
        _events_body(live, live.snapshot, {"limit": "1000"})[0] for live in (from_store, from_log)
    ]
    assert events[0] == events[1]
    # and the store now holds the appended line: a new server from it reads it without the log
    assert LiveEvents(tmp_path / "store").snapshot.event_count == 1717
    # with its materialised columns made, as `a2a-lab ingest` makes them
    from a2a_lab.materialize import scan_materialized

    materialized = scan_materialized(tmp_path / "store")
    assert materialized is not None and materialized.collect().height == 1717


@pytest.mark.parametrize("budget", [0, 20_000, 10**9])
def test_bodies_from_kept_texts_equal_the_whole_body_written_at_once(budget: int) -> None:
    """Texts kept, partly dropped (a small budget) or never kept (0): the same bytes, and
    the gzip made of kept deflate streams decodes to them."""
    events = LiveEvents(PEER / "gen300_s11_bad5.ndjson").snapshot.events
    texts, sessions = EventTexts(budget_chars=budget), SessionTexts(budget_chars=budget)
    for status, limit in ((None, "5"), ("ACTIVE,QUIET", None), (None, "5"), (None, "1e9")):
        result = work_sessions(events, SessionQuery(status=status, limit=limit), now=1771302796260)
        body = work_sessions_body(result, events, texts, sessions)
        assert body.plain == js_json_bytes(result.to_api())
        assert gzip.decompress(body.gzipped()) == body.plain


def test_the_command_binds_loopback_serves_and_refuses_a_busy_port() -> None:
    import os
    import re
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "a2a_lab",
        "serve",
        str(PEER / "tricky.ndjson"),
        "--now",
        "1771507200000",
    ]
    proc = subprocess.Popen([*cmd, "--port", "0"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, line
        port = int(found.group(1))
        reply = httpx.get(f"http://127.0.0.1:{port}/api/events", timeout=60)
        meta = _case("tricky__ev__all.json")["meta"]
        assert hashlib.sha256(reply.content).hexdigest() == meta["bodySha256"]
        busy = subprocess.run(
            [*cmd, "--port", str(port)], env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert busy.returncode == 2
    assert (
        busy.stderr.strip()
        .splitlines()[-1]
        .startswith(f"a2a-lab: error: cannot listen on 127.0.0.1:{port}")
    )
    assert "Traceback" not in busy.stderr


@pytest.mark.parametrize("as_store", [False, True])
def test_a_rotation_while_serving_reads_everything_again(tmp_path: Path, as_store: bool) -> None:
    from a2a_lab.io import ingest

    lines = (PEER / "gen300_s11_bad5.ndjson").read_bytes().split(b"\n")
    logdir = tmp_path / "logs"
    logdir.mkdir()
    live_file = logdir / "coordination-events.ndjson"
    live_file.write_bytes(b"\n".join(lines[:1000]) + b"\n")
    if as_store:
        ingest(logdir, tmp_path / "store")
    live = LiveEvents(tmp_path / "store" if as_store else logdir)
    # the writer rotates: the live file is renamed, a new one starts
    live_file.rename(logdir / "coordination-events-2026-02-17T00-00-00-000Z.ndjson")
    live_file.write_bytes(b"\n".join(lines[1000:]))
    assert live.refresh() > 0
    fresh = enrich(load(logdir, raw=True).events)
    assert sorted(live.snapshot.files) == sorted(set(fresh["file"].to_list()))
    got = _work_sessions_body(live, live.snapshot, {"limit": "1000"}, 1.8e12, None)[0].plain
    want = work_sessions(fresh, SessionQuery(limit=1000), now=1.8e12).to_api()
    assert got == js_json_bytes(want)


def test_a_stale_body_is_served_while_its_successor_is_made(tmp_path: Path) -> None:
    """``max_stale_s``: after new lines the last body comes back at once, the new one later."""
    lines, live_file = _live_log(tmp_path, 900)
    live = LiveEvents(tmp_path)
    made: list[int] = []

    def compute(snap: Any) -> tuple[bytes, None]:
        made.append(snap.version)
        time.sleep(0.3)  # a slow body: the stale one must not wait for it
        return str(snap.events.height).encode(), None

    first = live.cached("k", None, 0.0, compute, max_stale_s=30).plain
    with live_file.open("ab") as fh:
        fh.write(b"\n".join(lines[900:]))
    assert live.refresh() > 0
    t0 = time.monotonic()
    stale = live.cached("k", None, 0.0, compute, max_stale_s=30).plain
    assert stale == first and time.monotonic() - t0 < 0.2
    deadline = time.monotonic() + 10
    while live.cached("k", None, 0.0, compute, max_stale_s=30).plain == first:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert live.cached("k", None, 0.0, compute, max_stale_s=30).plain == b"1716"
    assert made == [made[0], made[0] + 1]  # each snapshot's body made once
    # max_stale_s=0 (the default): a current body, waited for
    with live_file.open("ab") as fh:
        fh.write(lines[0] + b"\n")
    live.refresh()
    assert live.cached("k", None, 0.0, compute).plain == b"1717"


_PARTS = st.lists(
    st.tuples(st.booleans(), st.binary(max_size=3000) | st.text(max_size=400).map(str.encode)),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(parts=_PARTS)
def test_gzip_of_kept_deflate_streams_decodes_to_the_body(parts: list[tuple[bool, bytes]]) -> None:
    """Pieces compressed on their own, bytes between them: one valid gzip member."""
    import zlib

    from a2a_lab.serve._bodies import Piece

    body = Body([Piece(data) if kept else data for kept, data in parts])
    whole = b"".join(data for _, data in parts)
    assert body.plain == whole and body.size == len(whole)
    packed = body.gzipped()
    assert gzip.decompress(packed) == whole
    # a streaming decoder (what HTTP clients use) reads it to its end, nothing left over
    reader = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert reader.decompress(packed) + reader.flush() == whole
    assert reader.eof and reader.unused_data == b""


def _fresh_body(path: Path, query: str) -> bytes:
    result = work_sessions(
        enrich(load(path, raw=True).events), SessionQuery.from_params(_params(query)), now=1.9e12
    )
    return js_json_bytes(result.to_api())


def _params(query: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in query.split("&") if item)


def test_a_refresh_during_requests_never_serves_a_torn_body(tmp_path: Path) -> None:
    """Lines appended while clients ask: every body is the whole body of one snapshot."""
    lines = (PEER / "gen300_s11_bad5.ndjson").read_bytes().split(b"\n")
    live_file = tmp_path / "coordination-events.ndjson"
    cuts = [700, 1000, 1250, 1500, len(lines)]
    query = "limit=1000"
    expected = []
    for cut in cuts:  # the body after each append, from a fresh read of the same file
        live_file.write_bytes(b"\n".join(lines[:cut]) + b"\n")
        expected.append(_fresh_body(live_file, query))
    assert len(set(expected)) == len(cuts)
    live_file.write_bytes(b"\n".join(lines[: cuts[0]]) + b"\n")
    config = ServeConfig(live=LiveEvents(tmp_path), now_ms=1.9e12, refresh_s=0.05)
    seen: list[bytes] = []
    statuses: list[int] = []
    done = threading.Event()

    def ask(encoding: str) -> None:
        with httpx.Client(base_url=base, headers={"Accept-Encoding": encoding}) as client:
            while not done.is_set():
                reply = client.get(f"/api/work-sessions?{query}")
                statuses.append(reply.status_code)
                seen.append(reply.content)  # decoded from gzip by httpx where it was sent so

    with serving(config) as base:
        askers = [threading.Thread(target=ask, args=(e,)) for e in ("gzip", "gzip", "identity")]
        for asker in askers:
            asker.start()
        for start, end in itertools.pairwise(cuts):
            time.sleep(0.3)
            with live_file.open("ab") as fh:
                fh.write(b"\n".join(lines[start:end]) + b"\n")
        deadline = time.monotonic() + 30
        while (not seen or seen[-1] != expected[-1]) and time.monotonic() < deadline:
            time.sleep(0.05)
        done.set()
        for asker in askers:
            asker.join(timeout=60)
    assert seen and seen[-1] == expected[-1] and set(statuses) == {200}
    assert {body for body in seen} <= set(expected)


def test_an_append_reaches_the_work_sessions_page_within_two_seconds(tmp_path: Path) -> None:
    """From the append's write to the first ``/api/work-sessions`` body that holds it."""
    lines, live_file = _live_log(tmp_path, 1200)
    config = ServeConfig(live=LiveEvents(tmp_path), now_ms=1.9e12, refresh_s=0.25)
    with serving(config) as base, httpx.Client(base_url=base) as client:
        before = client.get("/api/work-sessions").content
        with live_file.open("ab") as fh:
            fh.write(b"\n".join(lines[1200:]))
        appended = time.monotonic()
        while client.get("/api/work-sessions").content == before:
            assert time.monotonic() - appended < 10, "the append never reached the page"
            time.sleep(0.02)
        waited = time.monotonic() - appended
        after = client.get("/api/work-sessions").content
    assert after == _fresh_body(live_file, "")
    assert waited <= 2.0, waited


def test_after_an_append_only_the_sessions_it_touched_are_written_again(tmp_path: Path) -> None:
    """The kept session texts are reused for the sessions whose content did not change."""
    lines, live_file = _live_log(tmp_path, 1600)
    live = LiveEvents(tmp_path)
    params = {"limit": "1000"}
    first = _work_sessions_body(live, live.snapshot, params, 1.9e12, None)[0]
    kept = len(live.sessions)
    pages = first.plain.count(b'\n    {\n      "id": ')
    assert kept == pages > 10
    with live_file.open("ab") as fh:
        fh.write(b"\n".join(lines[1600:1603]) + b"\n")
    assert live.refresh() > 0
    second = _work_sessions_body(live, live.snapshot, params, 1.9e12, None)[0]
    assert second.plain == _fresh_body(live_file, "limit=1000") != first.plain
    assert gzip.decompress(second.gzipped()) == second.plain
    # three lines touch at most three sessions (a session moved up the page is the same text)
    assert 1 <= len(live.sessions) - kept <= 3


def test_a_refresh_makes_the_next_page_before_anyone_asks(tmp_path: Path) -> None:
    """A dashboard asking now and then: its first request after an append gets the new page
    (without the prefetch it would get the previous one and begin the new one)."""
    lines, live_file = _live_log(tmp_path, 1200)
    live = LiveEvents(tmp_path)
    config = ServeConfig(live=live, now_ms=1.9e12, refresh_s=0.05, max_stale_s=60)
    with serving(config) as base, httpx.Client(base_url=base) as client:
        before = client.get("/api/work-sessions").content
        height = live.snapshot.events.height
        with live_file.open("ab") as fh:
            fh.write(b"\n".join(lines[1200:]))
        deadline = time.monotonic() + 30
        # no request meanwhile: the refresher reads the lines and makes the page by itself
        while (
            live.snapshot.events.height == height
            or live.prefetched_version != live.snapshot.version
            or live._background
        ):
            assert time.monotonic() < deadline, "the refresh or its prefetch never ended"
            time.sleep(0.02)
        after = client.get("/api/work-sessions").content
    assert after != before
    assert after == _fresh_body(live_file, "")
