"""A real OTLP receiver on loopback: Arize Phoenix reads back what ``to_otlp`` sends (issue 26).

Phoenix conflicts with the project's lock (its botocore needs python-dateutil < 3, the lock
has 4.0.0) and brings about 140 packages, so it lives in its own venv, built by
``make phoenix`` from requirements/phoenix-lock.txt (``.venv-phoenix``; or point
``A2A_LAB_PHOENIX`` at a ``phoenix`` executable). Without it these tests skip, unless
``A2A_LAB_REQUIRE_PHOENIX=1`` (CI) makes that a failure.

The receiver's own REST API (``/v1/projects/{project}/spans``) is read back and compared
with a2a_lab's exchanges of a 20,000-line generated log: span count, parent links,
conversation ids, agent names, outcomes, reasons, turns, intents, queue waits, error status.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.otel import to_otlp
from a2a_lab.otel._import import spans_of
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

PROJECT = "a2a-lab-test"
LOG_LINES = 20_000
SEED = 20261127


def _phoenix() -> str | None:
    explicit = os.environ.get("A2A_LAB_PHOENIX")
    if explicit:
        return explicit
    local = ROOT / ".venv-phoenix" / "bin" / "phoenix"
    return str(local) if local.exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix() -> Iterator[str]:
    exe = _phoenix()
    if exe is None:
        if os.environ.get("A2A_LAB_REQUIRE_PHOENIX") == "1":
            pytest.fail("Phoenix is required (A2A_LAB_REQUIRE_PHOENIX=1): run `make phoenix`")
        pytest.skip("no Phoenix receiver: run `make phoenix` (or set A2A_LAB_PHOENIX)")
    work = tempfile.mkdtemp(prefix="a2a-phoenix-")
    port, grpc = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": work,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = open(Path(work) / "phoenix.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([exe, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if urllib.request.urlopen(base + "/healthz", timeout=5).status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (Path(work) / "phoenix.log").read_bytes()[-2000:].decode(errors="replace")
                pytest.fail(f"Phoenix did not start (status {proc.poll()}): {tail}")
            time.sleep(1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    path = tmp_path_factory.mktemp("gen") / "log.ndjson"
    # two days ago: inside the time range Phoenix's UI shows by default (the last 7 days)
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    al.samples.write_log(path, LOG_LINES, seed=SEED, start=start - timedelta(days=2))
    return al.load(path).events


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def read_spans(base: str, project: str) -> list[dict[str, Any]]:
    """Every span of ``project`` through Phoenix's REST API (cursor pages of 1,000)."""
    spans: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {"limit": "1000", **({"cursor": cursor} if cursor else {})}
        page = _get(f"{base}/v1/projects/{project}/spans?{urllib.parse.urlencode(query)}")
        spans += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


@pytest.fixture(scope="module")
def received(phoenix: str, generated: pl.DataFrame) -> tuple[list[dict[str, Any]], Any]:
    res = to_otlp(
        generated,
        endpoint=phoenix + "/v1/traces",
        project=PROJECT,
        batch_exchanges=500,
        progress=False,
    )
    # Phoenix stores what it received in the background: wait (asking its GraphQL API for
    # the project's span count, a cheap query) until the count stops growing
    deadline, last, still = time.monotonic() + 900, -1, 0
    while time.monotonic() < deadline:
        count = _span_count(phoenix, PROJECT)
        if count >= res.spans:
            break
        still = still + 1 if count == last else 0
        if still >= 20:  # a minute without a new span
            break
        last = count
        time.sleep(3)
    return read_spans(phoenix, PROJECT), res


def _span_count(base: str, project: str) -> int:
    query = json.dumps({"query": "{ projects { edges { node { name recordCount } } } }"})
    req = urllib.request.Request(
        base + "/graphql", data=query.encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        edges = json.loads(r.read())["data"]["projects"]["edges"]
    return sum(int(e["node"]["recordCount"]) for e in edges if e["node"]["name"] == project)


def test_the_receiver_has_every_span_with_its_parent(
    received: tuple[list[dict[str, Any]], Any], generated: pl.DataFrame
) -> None:
    spans, res = received
    conv = al.conversations(generated)
    assert res.exchanges == conv.height
    assert len(spans) == res.spans
    ids = {(s["context"]["trace_id"], s["context"]["span_id"]) for s in spans}
    assert len(ids) == len(spans)
    roots = [s for s in spans if not s["parent_id"]]
    assert len(roots) == conv.height  # every exchange exactly one root span, none lost
    assert len({r["context"]["trace_id"] for r in roots}) == conv.height
    root_of = {r["context"]["trace_id"]: r["context"]["span_id"] for r in roots}
    for s in spans:
        if s["parent_id"]:
            assert s["parent_id"] == root_of[s["context"]["trace_id"]]
        assert s["attributes"]["gen_ai.conversation.id"]
        assert s["attributes"]["gen_ai.agent.name"]
        assert s["attributes"]["a2a_lab.log.line"] >= 1
    assert {s["attributes"]["a2a_lab.step"] for s in spans} == {"root", "run", "turn", "announce"}


def test_the_receiver_has_the_same_spans_as_the_file(
    received: tuple[list[dict[str, Any]], Any], generated: pl.DataFrame, tmp_path: Path
) -> None:
    """Ids, parents, names, times and status as the OTLP/JSON file has them (Phoenix's
    REST API shows the OpenInference kind, AGENT, not the OTLP span kind)."""
    spans, _ = received
    path = tmp_path / "same.json"
    to_otlp(generated, output=path, project=PROJECT, progress=False)
    want = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        for v in spans_of(line):
            want.add(
                (
                    v.trace_id.hex(),
                    v.span_id.hex(),
                    v.parent_span_id.hex() or None,
                    v.name,
                    v.start_ns // 1000,
                    v.end_ns // 1000,
                    "ERROR" if v.status_code == 2 else "UNSET",
                )
            )
    got = {
        (
            s["context"]["trace_id"],
            s["context"]["span_id"],
            s["parent_id"],
            s["name"],
            _us(s["start_time"]),
            _us(s["end_time"]),
            s["status_code"],
        )
        for s in spans
    }
    assert got == want


def _us(iso: str) -> int:
    """Phoenix's ISO time (microseconds) as epoch microseconds."""
    t = datetime.fromisoformat(iso)
    return (t - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def test_the_receivers_root_spans_are_a2a_labs_exchanges(
    received: tuple[list[dict[str, Any]], Any], generated: pl.DataFrame
) -> None:
    spans, _ = received
    roots = [s for s in spans if not s["parent_id"]]

    def attr(s: dict[str, Any], key: str) -> Any:
        return s["attributes"].get(key)

    got = pl.DataFrame(
        [
            {
                "conversation_id": attr(r, "gen_ai.conversation.id"),
                "to_agent": attr(r, "gen_ai.agent.name"),
                "from_agent": attr(r, "a2a_lab.requester"),
                "exchange": attr(r, "a2a_lab.exchange"),
                "outcome": attr(r, "a2a_lab.outcome"),
                "outcome_reason": attr(r, "a2a_lab.outcome_reason"),
                "turns": attr(r, "a2a_lab.turns"),
                "intent": attr(r, "a2a_lab.intent"),
                "has_wait": attr(r, "a2a_lab.queue_wait_ms") is not None,
                "error": r["status_code"] == "ERROR",
            }
            for r in roots
        ],
        schema_overrides={"exchange": pl.Int64, "turns": pl.Int64},
    )
    conv = al.conversations(generated)
    want = conv.select(
        "conversation_id",
        "to_agent",
        "from_agent",
        "exchange",
        "outcome",
        "outcome_reason",
        "turns",
        "intent",
        pl.col("has_send").alias("has_wait"),
        pl.col("outcome").is_in(["no_reply", "concurrency_blocked"]).alias("error"),
    )
    key = ["conversation_id", "from_agent", "to_agent", "exchange"]
    assert got.sort(key).equals(want.sort(key))
    # the generated log has every outcome the status maps
    assert set(conv["outcome"]) >= {"replied", "no_reply"}


def test_the_receivers_ui_shows_a_trace(phoenix: str, received: Any, tmp_path: Path) -> None:
    """A screenshot of Phoenix's trace list for the project (headless Chromium)."""
    from tests.support.browser import Browser, find_chromium

    exe = find_chromium()
    if exe is None:
        pytest.skip("no Chromium")
    projects = _get(phoenix + "/v1/projects")["data"]
    pid = next(p["id"] for p in projects if p["name"] == PROJECT)
    with Browser(exe, width=1400, height=900) as b:
        # loopback only: the receiver under test (the helper starts offline)
        b.call(
            "Network.emulateNetworkConditions",
            offline=False,
            latency=0,
            downloadThroughput=-1,
            uploadThroughput=-1,
        )
        b.open(f"{phoenix}/projects/{pid}")
        b.wait_for("document.body.innerText.includes('invoke_agent')", timeout=240)
        text = b.evaluate("document.body.innerText")
        shot = b.screenshot(tmp_path / "phoenix.png")
    assert "invoke_agent" in text
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("A2A_LAB_SCREENSHOT_DIR")
    if keep:
        shutil.copy(shot, Path(keep) / "phoenix-traces.png")
