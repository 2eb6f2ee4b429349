"""``a2a-lab serve`` from a history store: the bodies of the in-memory server, byte for byte.

The in-memory server's bodies are the reference's (``test_serve.py`` checks them against
the recorded peer-api cases); a server answering from a store's tables (the log followed
into it, the sessions table updated incrementally) must give the same bytes for every
query the dashboard sends, after every append, whatever the log.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.samples import write_log
from a2a_lab.serve import LiveEvents
from a2a_lab.serve._app import _events_body, _work_sessions_body
from tests.support.paths import DATA
from tests.support.store_logs import LIVE, PEER_LINES

API = DATA / "peer-api"


def _recorded_queries() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The query parameters of every recorded peer-api request: sessions, events."""
    sessions: dict[str, dict[str, str]] = {}
    events: dict[str, dict[str, str]] = {}
    for case in sorted(API.glob("*.json")):
        url = urlsplit(json.loads(case.read_text(encoding="utf-8"))["meta"]["requestUrl"])
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        kind = sessions if url.path == "/api/work-sessions" else events
        kind[url.query] = params
    return list(sessions.values()), list(events.values())


SESSION_QUERIES, EVENT_QUERIES = _recorded_queries()
DAY_MS = 86_400_000.0


def _bodies(live: LiveEvents, now_ms: float, overrides: Any) -> list[bytes]:
    snap = live.snapshot
    return [
        *(_work_sessions_body(live, snap, q, now_ms, overrides)[0].plain for q in SESSION_QUERIES),
        *(_events_body(live, snap, q)[0] for q in EVENT_QUERIES),
    ]


def _log(seed: int, n_events: int, hostile: list[int], root: Path) -> bytes:
    """A generated log (with malformed lines) with peer-case lines (hostile ones too) put in."""
    generated = root / "generated.ndjson"
    write_log(generated, n_events, seed=seed, bad_line_fraction=0.02)
    lines = generated.read_bytes().splitlines(keepends=True)
    rng = random.Random(seed)
    for index in hostile:
        lines.insert(rng.randrange(len(lines) + 1), PEER_LINES[index] + b"\n")
    return b"".join(lines)


def _overrides(live: LiveEvents) -> dict[str, Any]:
    """Category overrides of the first session of the default page."""
    body = json.loads(_work_sessions_body(live, live.snapshot, {}, 0.0, None)[0].plain)
    ids = [s["id"].removeprefix("ws:") for s in body["sessions"][:2]]
    return {i: {"collabCategory": "qa_validation", "collabSubTags": ["E2E"]} for i in ids}


def test_the_queries_cover_the_dashboards_filters() -> None:
    named = {name for q in SESSION_QUERIES for name in q}
    assert named == {"role", "type", "status", "viewCategory", "subTag", "limit"}
    assert {name for q in EVENT_QUERIES for name in q} == {
        "since",
        "role",
        "type",
        "viewCategory",
        "limit",
    }


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**20),
    n_events=st.integers(50, 1500),
    hostile=st.lists(st.integers(0, len(PEER_LINES) - 1), max_size=30),
    cuts=st.lists(st.floats(0.05, 1.0), min_size=1, max_size=4),
    clock=st.sampled_from([-DAY_MS, 0.0, DAY_MS / 2, 3 * DAY_MS]),
    with_overrides=st.booleans(),
    tail_rows=st.sampled_from([1, 100_000]),
)
def test_bodies_from_the_store_equal_the_bodies_in_memory(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    n_events: int,
    hostile: list[int],
    cuts: list[float],
    clock: float,
    with_overrides: bool,
    tail_rows: int,
) -> None:
    """A random log appended in random pieces (cut mid-line too): after every refresh the
    store-backed server's bodies are the in-memory server's, for every recorded query.

    ``tail_rows`` 1: the store's tables are made again at every refresh; 100,000: the
    appended events are held as the view's tail, their sessions made again in memory."""
    root = tmp_path_factory.mktemp("serve-store")
    data = _log(seed, n_events, hostile, root)
    points = sorted({int(c * len(data)) for c in cuts} | {len(data)})
    logdir = root / "logs"
    logdir.mkdir()
    live_file = logdir / LIVE
    live_file.write_bytes(data[: points[0]])
    from_store = LiveEvents(logdir, store=root / "store", tail_rows=tail_rows)
    in_memory = LiveEvents(logdir)
    assert from_store.snapshot.view is not None and in_memory.snapshot.view is None
    for start, end in zip(points, [*points[1:], None], strict=True):
        times = in_memory.snapshot.times
        now_ms = (float(times[-1]) if times.len() else 1.8e12) + clock
        overrides = _overrides(in_memory) if with_overrides else None
        assert from_store.snapshot.event_count == in_memory.snapshot.events.height
        assert _bodies(from_store, now_ms, overrides) == _bodies(in_memory, now_ms, overrides)
        if end is None:
            break
        with live_file.open("ab") as fh:
            fh.write(data[start:end])
        from_store.refresh()
        in_memory.refresh()
        view = from_store.snapshot.view
        assert view is not None
        assert view.tail.height == (0 if tail_rows == 1 else view.events - view.snap.events)


def test_a_worker_process_ingests_and_the_bodies_stay_the_same(tmp_path: Path) -> None:
    """``in_child`` (``a2a-lab serve``): the first ingest, each refresh's ingest and the
    tables' updates run in a worker process; a refresh without a changed file does nothing."""
    lines = (DATA / "peer" / "gen300_s11_bad5.ndjson").read_bytes().split(b"\n")
    logdir = tmp_path / "logs"
    logdir.mkdir()
    live_file = logdir / LIVE
    live_file.write_bytes(b"\n".join(lines[:1000]) + b"\n")
    from_store = LiveEvents(logdir, store=tmp_path / "store", in_child=True)
    try:
        assert from_store.refresh() == 0  # nothing changed: no ingest asked of the worker
        with live_file.open("ab") as fh:
            fh.write(b"\n".join(lines[1000:]))
        assert from_store.refresh() > 0
        in_memory = LiveEvents(logdir)
        assert from_store.snapshot.event_count == in_memory.snapshot.events.height == 1716
        assert _bodies(from_store, 1.8e12, None) == _bodies(in_memory, 1.8e12, None)
    finally:
        from_store.close()
    assert from_store.worker_peak_mb > 0
