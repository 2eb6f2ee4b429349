"""The bundled sample log, the one generator that made it, and the simulated logs of its shape.

The bundled sample (``a2a_lab/samples/data``) and the lines the injector writes are parsed
here with the standard library only (strict JSON: ``NaN`` is not JSON), independently of
``a2a_lab.io``. The sample and the large logs both come from the ``sample_like`` preset and
the injectors (``a2a_lab.sim``): :func:`a2a_lab.samples.write_sample` and
:func:`a2a_lab.samples.write_log`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.io import write_events
from a2a_lab.reference.rules import TASK_MONITOR_V1
from a2a_lab.reference.runtime import (
    REFERENCE_RETRY,
    build_no_reply_outcome_message,
    parse_outcome_text,
)
from a2a_lab.samples import (
    LOG_START,
    SAMPLE_DAYS,
    SAMPLE_SEED,
    SAMPLE_START,
    LogSummary,
    sample_dir,
    sample_openclaw_config,
    write_log,
    write_sample,
)
from a2a_lab.schema import CoordinationEvent, EventData
from a2a_lab.schema.payloads import parse_payload
from a2a_lab.sim import simulate
from a2a_lab.sim.output.inject import (
    MALFORMED_KINDS,
    PAYLOAD_ERRORS,
    REJECT_REASONS,
    legacy_wording,
    malformed,
    odd_timestamps,
    orchestration,
    payload_errors,
    payload_links,
)
from a2a_lab.sim.workload.presets import SAMPLE_MAIN_AGENTS, SAMPLE_WORKER_AGENTS, sample_like
from a2a_lab.sim.workload.texts import DISCORD_USER_IDS
from tests.support.event_types import REFERENCE_EVENT_TYPES
from tests.support.paths import ROOT

LIVE = "coordination-events.ndjson"
MONTH_NAME = re.compile(r"coordination-events-\d{4}-\d{2}\.ndjson")
SIZE_NAME = re.compile(r"coordination-events-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.ndjson")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
REFERENCE_ORDER = ["type", "agentId", "ts", "data"]
NO_REPLY = "[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다"
LEGACY_NO_REPLY = "[outcome] blocked: 응답을 받지 못했습니다"
REJECT_KINDS = {"not_json", "non_object", "missing_type", "blank_type", "nan", "truncated"}
FAMILIES = set(REFERENCE_EVENT_TYPES)
COMPLETE_FIELDS = {
    "announced",
    "messageIntent",
    "configuredMaxTurns",
    "effectiveTurns",
    "actualTurns",
    "earlyTermination",
    "announceSkipped",
}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """``JSON.parse``: ``NaN`` / ``Infinity`` are not JSON."""
    return json.loads(text, parse_constant=_reject_constant)


def log_files(directory: Path) -> list[Path]:
    """Rotated files oldest first (by name), the live file last."""
    return [*sorted(directory.glob("coordination-events-*.ndjson")), directory / LIVE]


def physical_lines(path: Path) -> list[bytes]:
    """The file's lines split on LF only, without the LF (a final LF starts no line)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    return lines[:-1] if data.endswith(b"\n") else lines


@dataclass(frozen=True)
class Irregular:
    file: str
    line: int
    kind: str


def good_event(raw: bytes) -> dict[str, Any] | None:
    """The event of a clean line (strict UTF-8, no CR, JSON object with a non-blank type)."""
    try:
        value = strict_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if b"\r" in raw or not isinstance(value, dict):
        return None
    kind = value.get("type")
    return value if isinstance(kind, str) and kind.strip() else None


def classify(raw: bytes) -> str | None:
    """The malformation of a physical line, or None for a clean event line."""
    if raw == b"":
        return "blank"
    if raw.endswith(b"\r") and good_event(raw[:-1]) is not None:
        return "crlf"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        decoded = raw.decode("utf-8", errors="replace")
        return "invalid_utf8" if good_event(decoded.encode()) is not None else "undecodable"
    if "NaN" in text and good_event(text.replace("NaN", "0").encode()) is not None:
        return "nan"
    try:
        value = strict_json(text)
    except ValueError:
        return "truncated" if text.startswith('{"type":') else "not_json"
    if not isinstance(value, dict):
        return "non_object"
    if "type" not in value:
        return "missing_type"
    if isinstance(value["type"], str) and not value["type"].strip():
        return "blank_type"
    return None


def js_slice(text: str, limit: int) -> str:
    """``text.slice(0, limit)``: JavaScript counts UTF-16 code units."""
    return text.encode("utf-16-le")[: 2 * limit].decode("utf-16-le", errors="surrogatepass")


def scan(directory: Path) -> Iterator[tuple[str, int, bytes]]:
    for path in log_files(directory):
        for number, raw in enumerate(physical_lines(path), start=1):
            yield path.name, number, raw


def readme_malformed(directory: Path) -> list[Irregular]:
    rows = re.findall(
        r"^\| `(coordination-events[^`]*)` \| (\d+) \| `(\w+)` \|",
        (directory / "README.md").read_text(encoding="utf-8"),
        flags=re.M,
    )
    return [Irregular(name, int(line), kind) for name, line, kind in rows]


@pytest.fixture(scope="module")
def events() -> list[dict[str, Any]]:
    """Every event of the bundled sample, in file order.

    As the reference reads them (rules §10): a CRLF line is an event (the trim removes the CR)
    and so is a line with an invalid UTF-8 byte (decoded to U+FFFD).
    """
    out = []
    for _, _, raw in scan(sample_dir()):
        if classify(raw) in (None, "crlf", "invalid_utf8"):
            event = good_event(raw.decode("utf-8", errors="replace").rstrip("\r").encode())
            assert event is not None
            out.append(event)
    return out


def texts(events: list[dict[str, Any]]) -> Iterator[str]:
    for event in events:
        for key in ("message", "replyPreview"):
            value = event["data"].get(key)
            if isinstance(value, str):
                yield value


# --------------------------------------------------------------------------------------------
# The bundled sample
# --------------------------------------------------------------------------------------------
def test_regenerating_the_sample_gives_identical_bytes(tmp_path: Path) -> None:
    # the committed sample is provably the one generator's output: same files, same bytes
    manifest = write_sample(tmp_path, SAMPLE_SEED)
    bundled = sorted(p.name for p in sample_dir().iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == bundled
    for name in bundled:
        assert (tmp_path / name).read_bytes() == (sample_dir() / name).read_bytes(), name
    readme = (sample_dir() / "README.md").read_text(encoding="utf-8")
    assert f"python -m a2a_lab.samples a2a_lab/samples/data --seed {SAMPLE_SEED}" in readme
    assert manifest.events == sum(count for _, _, count in manifest.files)
    assert f"{manifest.events} events from" in readme


def test_sample_is_a_rotated_log_directory_of_several_days(events: list[dict[str, Any]]) -> None:
    directory = sample_dir()
    rotated = [p.name for p in log_files(directory)[:-1]]
    assert (directory / LIVE).is_file()
    assert len(rotated) >= 2
    assert all(MONTH_NAME.fullmatch(n) or SIZE_NAME.fullmatch(n) for n in rotated)
    assert any(MONTH_NAME.fullmatch(n) for n in rotated)
    assert any(SIZE_NAME.fullmatch(n) for n in rotated)
    assert sum(p.stat().st_size for p in directory.iterdir()) < 3 * 1024 * 1024
    assert len(events) >= 3000
    assert len({e["agentId"] for e in events}) == 15
    # the deployment sends for SAMPLE_DAYS from SAMPLE_START; a task's backlog entry may come
    # before the first send (at most two hours), the last exchanges end after the last one
    start_ms = SAMPLE_START.timestamp() * 1000
    assert start_ms - 2 * 3_600_000 <= events[0]["ts"]
    assert events[-1]["ts"] - start_ms >= (SAMPLE_DAYS - 0.25) * 86_400_000
    # rotated oldest first, live last: the files follow each other in time
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)


def test_every_event_family_of_the_rules_is_present(events: list[dict[str, Any]]) -> None:
    types = {e["type"] for e in events}
    assert types >= FAMILIES
    for prefix in ("task.", "continuation.", "plan.", "unblock."):
        assert len({t for t in types if t.startswith(prefix)}) >= 2, prefix
    assert any(e["type"].startswith("task.") and "status" in e["data"] for e in events)


def test_no_reply_legacy_and_concurrency_blocked_outcomes(events: list[dict[str, Any]]) -> None:
    responses = [e for e in events if e["type"] == "a2a.response" and "outcome" in e["data"]]
    no_reply = [e for e in responses if e["data"]["outcome"] == "no_reply"]
    assert no_reply and all(e["data"]["message"].startswith(NO_REPLY) for e in no_reply)
    assert any(e["data"]["message"] == f"{NO_REPLY} (대기 시간 300초 초과)" for e in no_reply)
    legacy = [
        e for e in responses if e["data"]["outcome"] == "blocked" and "waitStatus" in e["data"]
    ]
    assert legacy and all(e["data"]["message"].startswith(LEGACY_NO_REPLY) for e in legacy)

    blocked_convs = {
        e["data"]["conversationId"]
        for e in responses
        if e["data"]["outcome"] == "blocked" and "waitStatus" not in e["data"]
    }
    gated = [e for e in events if e["data"].get("concurrencyBlocked") is True]
    assert len(gated) >= 2
    for complete in gated:
        assert complete["type"] == "a2a.complete"
        assert complete["data"]["announced"] is False
        assert complete["data"]["conversationId"] in blocked_convs


def test_some_waits_last_300_seconds_and_end_in_no_reply(events: list[dict[str, Any]]) -> None:
    sent: dict[tuple[str, str, str], int] = {}
    waits = []
    for e in events:
        d = e["data"]
        if e["type"] == "a2a.send":
            sent[(d["conversationId"], d["fromAgent"], d["toAgent"])] = e["ts"]
        elif e["type"] == "a2a.response" and d.get("outcome") == "no_reply":
            key = (d["conversationId"], d["toAgent"], d["fromAgent"])
            if key in sent:
                waits.append(e["ts"] - sent[key])
    assert any(w >= REFERENCE_RETRY.max_wait_ms for w in waits)
    assert any(w < 60_000 for w in waits)  # non-retriable errors end the wait early


def test_exchanges_ping_pong_and_retries(events: list[dict[str, Any]]) -> None:
    turns = [e for e in events if e["type"] == "a2a.response" and "turn" in e["data"]]
    assert len(turns) >= 100
    assert all({"maxTurns", "messageIntent"} <= e["data"].keys() for e in turns)
    assert all(1 <= e["data"]["turn"] <= e["data"]["maxTurns"] for e in turns)
    assert any("terminationReason" in e["data"] for e in turns)

    completes = [
        e["data"] for e in events if e["type"] == "a2a.complete" and "effectiveTurns" in e["data"]
    ]
    assert completes and all(d.keys() >= COMPLETE_FIELDS for d in completes)
    for d in completes:
        assert 0 <= d["actualTurns"] <= d["effectiveTurns"] <= d["configuredMaxTurns"]
        assert d["earlyTermination"] == ("terminationReason" in d)
    assert any(d["announced"] for d in completes) and any(d["announceSkipped"] for d in completes)

    retries = [e["data"] for e in events if e["type"] == "a2a.retry"]
    assert retries
    for d in retries:
        assert d["maxAttempts"] == 3 and 1 <= d["attempt"] <= 3
        cap = min(60_000, 2_000 * 2 ** (d["attempt"] - 1))
        assert cap // 2 <= d["backoffMs"] <= cap
        assert {"errorCategory", "errorCode", "reason", "elapsedMs"} <= d.keys()


def test_sessions_sub_agents_and_ids(events: list[dict[str, Any]]) -> None:
    data = [e["data"] for e in events]
    work_sessions = {d["workSessionId"] for d in data if "workSessionId" in d}
    assert len(work_sessions) >= 50
    assert all(re.fullmatch(f"ws_{UUID}", ws) for ws in work_sessions)
    assert all(re.fullmatch(UUID, d["conversationId"]) for d in data if "conversationId" in d)
    keys = {d["targetSessionKey"] for d in data if "targetSessionKey" in d}
    assert any(re.fullmatch(f"agent:[a-z]+:subagent:{UUID}", k) for k in keys)
    assert any(re.fullmatch("agent:[a-z]+:main", k) for k in keys)
    # the sample's gateway sends to main sessions (no conversation lanes) and sub-agents only
    assert all(re.fullmatch(f"agent:[a-z]+:(main|subagent:{UUID})", k) for k in keys)
    spawns = [d for e, d in zip(events, data, strict=True) if e["type"] == "a2a.spawn"]
    assert all(isinstance(d["depth"], int) for d in spawns)
    statuses = Counter(
        d["status"] for e, d in zip(events, data, strict=True) if e["type"] == "a2a.spawn_result"
    )
    assert statuses["error"] and (statuses["ok"] or statuses["accepted"])
    # a conversation id is reused per work session and pair: some carry several exchanges
    sends = Counter(
        d["conversationId"] for e, d in zip(events, data, strict=True) if e["type"] == "a2a.send"
    )
    assert max(sends.values()) >= 2


def test_openclaw_config_lists_the_main_agents(events: list[dict[str, Any]]) -> None:
    config = json.loads(sample_openclaw_config().read_text(encoding="utf-8"))
    assert set(config) >= {"agents"} and set(config["agents"]) >= {"defaults", "list"}
    assert isinstance(config["agents"]["defaults"], dict)
    mains = [agent["id"] for agent in config["agents"]["list"]]
    assert {"main", "ruda"} <= set(mains) and len(mains) == len(set(mains))
    agents = {e["agentId"] for e in events}
    assert set(mains) < agents
    workers = agents - set(mains)
    log_text = "\n".join(json.dumps(e["data"]) for e in events)
    for worker in workers:
        # agents that are not configured never have a main session: they run as sub-agents
        assert f'"agent:{worker}:main"' not in log_text
        assert f'"agent:{worker}:subagent:' in log_text
        for e in events:
            if e["agentId"] == worker:
                # an event of an exchange with the worker, whose side is a sub-agent session
                d = e["data"]
                side = "from" if d["fromAgent"] == worker else "to"
                assert d[f"{side}Agent"] == worker, e
                assert d.get(f"{side}SessionType", "subagent") == "subagent", e


def test_korean_english_mentions_and_category_keywords(events: list[dict[str, Any]]) -> None:
    all_texts = list(texts(events))
    assert sum(bool(re.search("[가-힣]", t)) for t in all_texts) >= 500
    assert sum(bool(re.fullmatch(r"[\x00-\x7f]+", t)) for t in all_texts) >= 300
    assert any(re.search(r"<@\d{17,20}>", t) for t in all_texts)
    haystack = "\n".join(all_texts).lower()
    for category in TASK_MONITOR_V1.categories:
        assert any(k in haystack for k in category.keywords), category.name
    # a mention names the target's Discord user (the notebooks map these to agents)
    for e in events:
        if e["type"] == "a2a.auto_route":
            mention = re.match(r"<@(\d+)> ", e["data"]["message"])
            assert mention and DISCORD_USER_IDS[e["data"]["targetAgentId"]] == mention[1]


def test_structured_payloads_valid_and_invalid_with_links(events: list[dict[str, Any]]) -> None:
    found: Counter[tuple[str, bool]] = Counter()
    questions: set[str] = set()
    delegations: set[str] = set()
    for e in events:
        d = e["data"]
        if "payloadJson" not in d:
            continue
        result = parse_payload(d["payloadJson"], d["payloadType"])
        ok = result.valid and not result.type_mismatch
        found[(d["payloadType"], ok)] += 1
        if not ok:
            continue
        payload = result.payload
        if d["payloadType"] == "question":
            questions.add(payload.questionId)
        elif d["payloadType"] == "task_delegation":
            delegations.add(payload.taskId)
        elif d["payloadType"] == "answer" and payload.questionId in questions:
            found[("answer linked", True)] += 1
        elif d["payloadType"] == "status_report" and payload.taskId in delegations:
            found[("report linked", True)] += 1
    for kind in ("task_delegation", "status_report", "question", "answer"):
        assert found[(kind, True)] and found[(kind, False)], kind
    assert found[("answer linked", True)] and found[("report linked", True)]
    readme = (sample_dir() / "README.md").read_text(encoding="utf-8")
    for kind in ("task_delegation", "status_report", "question", "answer"):
        assert f"| `{kind}` | {found[(kind, True)]} | {found[(kind, False)]} |" in readme


def test_malformed_lines_are_exactly_where_the_readme_says() -> None:
    directory = sample_dir()
    documented = readme_malformed(directory)
    found = [
        Irregular(name, number, kind)
        for name, number, raw in scan(directory)
        if (kind := classify(raw)) is not None
    ]
    assert found == documented
    kinds = Counter(m.kind for m in documented)
    assert (
        set(kinds) >= REJECT_KINDS and len([m for m in documented if m.kind in REJECT_KINDS]) >= 5
    )
    assert kinds == Counter(MALFORMED_KINDS)  # one of each kind


def test_every_good_line_is_compact_json_in_reference_field_order() -> None:
    for name, number, raw in scan(sample_dir()):
        event = good_event(raw)
        if event is None:
            continue
        where = f"{name}:{number}"
        assert list(event) == REFERENCE_ORDER, where
        assert type(event["ts"]) is int and isinstance(event["data"], dict), where
        # JSON.stringify: compact separators, non-ASCII written as is
        rendered = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        assert rendered.encode() == raw, where


def test_sample_paths_resolve_to_one_copy() -> None:
    directory = sample_dir()
    assert directory.is_dir() and (directory / LIVE).is_file()
    assert sample_openclaw_config() == directory / "openclaw.json"
    link = ROOT / "data" / "samples"
    assert link.is_symlink()
    assert link.resolve() == directory.resolve()


# --------------------------------------------------------------------------------------------
# One generator: no second one beside the simulator
# --------------------------------------------------------------------------------------------
def test_there_is_one_generator() -> None:
    assert not (ROOT / "tools" / "generate_sample.py").exists()
    assert not (ROOT / "tools" / "sample_texts.py").exists()
    package = ROOT / "a2a_lab" / "samples"
    modules = ["__init__.py", "__main__.py", "_readme.py", "_sample.py", "_write.py"]
    assert sorted(p.name for p in package.glob("*.py")) == modules


# --------------------------------------------------------------------------------------------
# The preset and the injector
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def simulated() -> pl.DataFrame:
    """Two simulated days of the sample deployment, as the simulator returns them."""
    return simulate(sample_like(400, duration_s=2 * 86_400), seed=5).events


@pytest.fixture(scope="module")
def simulated_lines(simulated: pl.DataFrame) -> pl.Series:
    return pl.Series("line", (write_events(simulated) or "").split("\n")[:-1])


def write_lines(path: Path, lines: pl.Series) -> Path:
    path.write_bytes(b"\n".join(lines.cast(pl.Binary).to_list()) + b"\n")
    return path


def reason_class(reason: str) -> str:
    """The reason as :data:`REJECT_REASONS` gives it (a ``not JSON`` reason without its detail)."""
    return "not JSON: " if reason.startswith("not JSON: ") else reason


def test_sample_like_is_the_sample_deployment(
    simulated: pl.DataFrame, simulated_lines: pl.Series
) -> None:
    events = [strict_json(line) for line in simulated_lines]
    agents = {e["agentId"] for e in events}
    assert agents == set(SAMPLE_MAIN_AGENTS) | set(SAMPLE_WORKER_AGENTS)
    keys = {e["data"].get("targetSessionKey") for e in events} - {None}
    for worker in SAMPLE_WORKER_AGENTS:
        assert f"agent:{worker}:main" not in keys
    assert any(
        re.fullmatch(f"agent:(jiwoo|nuri|maru|hana|dana|yoon|sori|gaon|iseul):subagent:{UUID}", k)
        for k in keys
    )
    types = Counter(e["type"] for e in events)
    assert {
        "a2a.send",
        "a2a.response",
        "a2a.complete",
        "a2a.retry",
        "task.started",
        "task.completed",
    } <= set(types)
    assert any(e["data"].get("outcome") == "no_reply" for e in events)
    work_sessions = {e["data"]["workSessionId"] for e in events if "workSessionId" in e["data"]}
    assert len(work_sessions) >= 10 and all(re.fullmatch(f"ws_{UUID}", ws) for ws in work_sessions)
    # the KST day: more traffic in the afternoon than at night
    hours = Counter((e["ts"] // 3_600_000 + 9) % 24 for e in events if e["type"] == "a2a.send")
    assert sum(hours[h] for h in range(13, 17)) > 4 * sum(hours[h] for h in range(1, 5))


def test_simulated_lines_use_exactly_the_real_log_schema(
    simulated: pl.DataFrame, simulated_lines: pl.Series
) -> None:
    known = set(EventData.model_fields)
    for raw in simulated_lines:
        event = good_event(raw.encode())
        assert event is not None and list(event) == REFERENCE_ORDER, raw
        assert type(event["ts"]) is int
        assert set(event["data"]) <= known, set(event["data"]) - known
        CoordinationEvent.model_validate_json(raw)
        # JSON.stringify: compact separators, non-ASCII written as is
        assert json.dumps(event, ensure_ascii=False, separators=(",", ":")) == raw


def test_malformed_lines_load_as_exactly_the_injected_rejects(
    tmp_path: Path, simulated: pl.DataFrame, simulated_lines: pl.Series
) -> None:
    kinds = [*MALFORMED_KINDS, "not_json", "truncated", "blank", "nan"]
    injected = malformed(simulated_lines, kinds, seed=3)
    log = write_lines(tmp_path / "coordination-events.ndjson", injected.lines)
    res = al.load(log)
    report = res.report
    assert report.total_lines == len(simulated_lines) + sum(
        k not in ("crlf", "invalid_utf8") for k in kinds
    )
    assert report.total_lines == report.events + report.rejects.height + report.total_blank
    assert report.events == len(simulated_lines) and report.total_blank == kinds.count("blank")
    expected = Counter(REJECT_REASONS[k] for k in kinds if k in REJECT_REASONS)
    assert Counter(reason_class(r) for r in report.rejects["reason"]) == expected
    marks = dict(injected.marks.iter_rows())
    assert sorted(report.rejects["line"]) == sorted(
        n for n, k in marks.items() if k in REJECT_REASONS
    )
    for line, reason in report.rejects.select("line", "reason").iter_rows():
        assert reason_class(reason) == REJECT_REASONS[marks[line]]
    assert report.issues.filter(pl.col("kind") == "invalid_utf8")["line"].to_list() == [
        n for n, k in marks.items() if k == "invalid_utf8"
    ]
    # the events are the simulated ones, bar the message whose character was cut
    cut = [n for n, k in marks.items() if k == "invalid_utf8"]
    loaded = res.events.filter(~pl.col("line").is_in(cut)).drop("file", "line", "raw", strict=False)
    position = res.events["line"].to_list().index(cut[0])
    assert loaded.equals(
        simulated.drop("file", "line", "raw").filter(pl.int_range(pl.len()) != position)
    )
    # every physical line is classified as the injector says (standard-library parse)
    lines = physical_lines(log)
    for number, raw in enumerate(lines, start=1):
        assert classify(raw) == marks.get(number) or (
            marks.get(number) == "truncated" and classify(raw) == "not_json"
        )


@settings(max_examples=10)
@given(
    kinds=st.lists(st.sampled_from(MALFORMED_KINDS), max_size=12),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_every_line_is_an_event_a_reject_or_a_blank(
    simulated_lines: pl.Series, kinds: list[str], seed: int
) -> None:
    lines = simulated_lines.head(200)
    injected = malformed(lines, kinds, seed=seed)
    assert injected.lines.len() == lines.len() + sum(
        k not in ("crlf", "invalid_utf8") for k in kinds
    )
    assert injected.marks["kind"].sort().to_list() == sorted(kinds)
    assert malformed(lines, kinds, seed=seed).lines.equals(injected.lines)
    events = rejects = blanks = 0
    for raw in injected.lines:
        kind = classify(raw)
        if kind == "blank":
            blanks += 1
        elif kind is None or kind in ("crlf", "invalid_utf8"):
            events += 1
        else:
            rejects += 1
    assert (events, rejects, blanks) == (
        lines.len(),
        sum(k in REJECT_REASONS for k in kinds),
        kinds.count("blank"),
    )


def test_malformed_refuses_what_it_cannot_place(simulated_lines: pl.Series) -> None:
    with pytest.raises(ValueError, match="kinds: unknown kind 'garbled'"):
        malformed(simulated_lines, ["garbled"], seed=1)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="no line left"):
        malformed(simulated_lines.head(2), ["blank"] * 3, seed=1)


def test_legacy_wording_is_the_older_runtimes_text(simulated_lines: pl.Series) -> None:
    until = strict_json(simulated_lines[len(simulated_lines) // 2])["ts"]
    out = legacy_wording(simulated_lines, until)
    assert out.lines.len() == simulated_lines.len()
    changed = 0
    for before, after in zip(simulated_lines, out.lines, strict=True):
        old, new = strict_json(before), strict_json(after)
        if old["data"].get("outcome") != "no_reply" or old["ts"] >= until:
            assert before == after
            continue
        changed += 1
        d = new["data"]
        assert d["outcome"] == "blocked"
        reason = parse_outcome_text(old["data"]["message"])
        assert parse_outcome_text(d["message"]).reason == reason.reason
        # the reference's own builder gives the same legacy text for the same wait result
        legacy = build_no_reply_outcome_message(
            d.get("waitStatus"),
            d.get("waitError"),
            max_wait_exceeded=reason.reason == "timeout",
            legacy=True,
        )
        assert d["message"] == legacy and d["replyPreview"] == legacy
    assert changed == out.marks.height >= 1


def test_odd_timestamps_keep_every_event_time(
    tmp_path: Path, simulated: pl.DataFrame, simulated_lines: pl.Series
) -> None:
    counts = {"timestamp_ms": 7, "iso_timestamp": 5, "out_of_order": 4}
    out = odd_timestamps(simulated_lines, counts, seed=11)
    assert out.lines.len() == simulated_lines.len()
    assert Counter(out.marks["kind"]) == counts
    res = al.load(write_lines(tmp_path / "coordination-events.ndjson", out.lines))
    assert res.report.rejects.height == 0 and res.report.issues.height == 0
    events = res.events
    assert events.height == simulated.height
    assert sorted(events["event_ms"]) == sorted(simulated["event_ms"])
    assert events["timestamp_ms"].drop_nulls().len() == 7
    assert events["timestamp"].drop_nulls().len() == 5
    assert events["ts"].null_count() == 12
    # each marked event now comes right after a later one
    in_file = [strict_json(line) for line in out.lines]
    for n in out.marks.filter(pl.col("kind") == "out_of_order")["line"]:
        assert in_file[n - 2]["ts"] > in_file[n - 1]["ts"]
    assert odd_timestamps(simulated_lines, counts, seed=11).lines.equals(out.lines)
    with pytest.raises(ValueError, match="counts.out_of_order"):
        odd_timestamps(simulated_lines.head(3), {"out_of_order": 3}, seed=1)


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_orchestration_adds_events_around_the_simulated_ones(
    simulated_lines: pl.Series, seed: int
) -> None:
    out = orchestration(simulated_lines, seed=seed)
    assert orchestration(simulated_lines, seed=seed).lines.equals(out.lines)
    marks = dict(out.marks.iter_rows())
    events = [strict_json(line) for line in out.lines]
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)
    # the simulated lines are all there, in their order; only a cancelled task's end changed
    kept = [line for n, line in enumerate(out.lines, start=1) if n not in marks]
    cancelled = {
        events[n - 1]["data"]["taskId"]: events[n - 1]
        for n, k in marks.items()
        if k == "task_cancelled"
    }
    completed = {}
    expected = []
    for line in simulated_lines:
        event = strict_json(line)
        if event["type"] == "task.completed" and event["data"]["taskId"] in cancelled:
            completed[event["data"]["taskId"]] = event
        else:
            expected.append(line)
    assert kept == expected
    # a cancelled task's end is its completed event with the type changed and a reason
    for task, event in cancelled.items():
        reason = event["data"].pop("reason")
        assert isinstance(reason, str) and reason
        assert {**event, "type": "task.completed"} == completed[task]
    assert len(kept) + len(marks) == out.lines.len()
    for n, kind in marks.items():
        event = events[n - 1]
        assert event["type"] == ("task.cancelled" if kind == "task_cancelled" else kind)
        assert list(event) == REFERENCE_ORDER
        CoordinationEvent.model_validate_json(out.lines[n - 1])
    # a task's own events stay inside it (after its start: a backlog entry comes before it)
    spans = {}
    for e in events:
        if e["type"] == "task.started":
            spans[e["data"]["taskId"]] = [e["ts"], events[-1]["ts"] + 1]
        elif e["type"] in ("task.completed", "task.cancelled"):
            spans[e["data"]["taskId"]][1] = e["ts"]
    inside = {"plan.submitted", "plan.approved", "plan.rejected", "task.updated", "task.blocked"}
    inside |= {"unblock.requested", "unblock.failed", "task.resumed", "task.approved"}
    for e in events:
        if e["type"] in inside:
            start, end = spans[e["data"]["taskId"]]
            assert start <= e["ts"] < end, e
    # nobody works on a blocked task; progress counts 1, 2, … in time order
    blocked: dict[str, int] = {}
    progress: Counter[str] = Counter()
    for e in events:
        task = e["data"].get("taskId")
        if e["type"] == "task.blocked":
            blocked[task] = e["ts"]
        elif e["type"] == "task.resumed":
            del blocked[task]
        elif e["type"] in ("task.updated", "continuation.sent", "continuation.backoff"):
            assert task not in blocked, e
            if e["type"] == "task.updated":
                progress[task] += 1
                assert e["data"]["progressCount"] == progress[task], e
    # a sub-agent session is spawned before its first send, and the result names that run
    first_send: dict[str, dict[str, Any]] = {}
    for position, e in enumerate(events):
        key = e["data"].get("targetSessionKey", "")
        if e["type"] == "a2a.send" and ":subagent:" in key and key not in first_send:
            first_send[key] = {"at": position, **e["data"]}
    for key, send in first_send.items():
        spawned = [
            i
            for i, e in enumerate(events)
            if e["type"] == "a2a.spawn" and e["data"]["targetSessionKey"] == key
        ]
        results = [
            e["data"]
            for e in events
            if e["type"] == "a2a.spawn_result" and e["data"]["targetSessionKey"] == key
        ]
        assert len(spawned) == 1 and spawned[0] < send["at"]
        assert [r["status"] for r in results] == ["accepted"]
        assert results[0]["runId"] == send["runId"]


def test_payload_links_answer_questions_asked_before(simulated_lines: pl.Series) -> None:
    out = payload_links(simulated_lines)
    asked: dict[str, tuple[str, str]] = {}  # id -> (asker, asked)
    linked = 0
    for n, line in enumerate(out.lines, start=1):
        d = strict_json(line)["data"]
        if "payloadJson" not in d:
            assert line == simulated_lines[n - 1]
            continue
        body = json.loads(d["payloadJson"])
        if body["type"] in ("question", "task_delegation"):
            key = "questionId" if body["type"] == "question" else "taskId"
            asked[body[key]] = (d["fromAgent"], d["toAgent"])
        elif n in dict(out.marks.iter_rows()):
            key = "questionId" if body["type"] == "answer" else "taskId"
            # it refers to something asked before, of the agent that now answers
            assert asked[body[key]][1] == d["fromAgent"]
            linked += 1
    assert linked == out.marks.height > 0


def test_payload_errors_break_exactly_the_drawn_payloads(simulated_lines: pl.Series) -> None:
    out = payload_errors(simulated_lines, 0.5, seed=4)
    marks = dict(out.marks.iter_rows())
    carriers = 0
    for n, (before, after) in enumerate(zip(simulated_lines, out.lines, strict=True), start=1):
        if '"payloadJson"' not in before:
            assert before == after
            continue
        carriers += 1
        old, new = strict_json(before)["data"], strict_json(after)["data"]
        assert parse_payload(old["payloadJson"], old["payloadType"]).valid
        result = parse_payload(new["payloadJson"], new["payloadType"])
        if n not in marks:
            assert before == after
        elif marks[n] == "type_mismatch":
            assert result.type_mismatch
        else:
            assert not result.valid, marks[n]
    assert 0 < len(marks) < carriers and set(marks.values()) <= set(PAYLOAD_ERRORS)
    with pytest.raises(ValueError, match="share"):
        payload_errors(simulated_lines, 1.5, seed=1)


# --------------------------------------------------------------------------------------------
# write_log: large logs of the sample's shape
# --------------------------------------------------------------------------------------------
def test_write_log_counts_bad_lines_and_loads_them_as_rejects(tmp_path: Path) -> None:
    path = tmp_path / "big.ndjson"
    summary = write_log(path, 6_000, seed=11, bad_line_fraction=0.005)
    lines = physical_lines(path)
    assert (summary.lines, summary.bad_lines, summary.events) == (6_000, 30, 5_970)
    assert len(lines) == 6_000 and summary.bytes == path.stat().st_size
    bad = [n for n, raw in enumerate(lines, start=1) if good_event(raw) is None]
    assert tuple(bad) == summary.bad_line_numbers
    assert {classify(lines[n - 1]) for n in bad} <= REJECT_KINDS
    report = al.load(path).report
    assert (
        report.events == 5_970 and tuple(sorted(report.rejects["line"])) == summary.bad_line_numbers
    )
    good = [e for raw in lines if (e := good_event(raw)) is not None]
    stamps = [e["ts"] for e in good]
    assert stamps == sorted(stamps)
    run_ids = [e["data"]["runId"] for e in good if e["type"] == "a2a.send" and "runId" in e["data"]]
    assert len(run_ids) == len(set(run_ids))


def test_write_log_is_deterministic_and_scales_with_n(tmp_path: Path) -> None:
    def write(name: str, n: int, seed: int) -> LogSummary:
        return write_log(tmp_path / name, n, seed=seed, events_per_day=2_000)

    a, b, c = write("a.ndjson", 2_000, 4), write("b.ndjson", 2_000, 4), write("c.ndjson", 2_000, 5)
    assert a.path.read_bytes() == b.path.read_bytes() != c.path.read_bytes()
    assert a.bad_lines == 0 and a.bad_line_numbers == ()
    assert all(good_event(raw) is not None for raw in physical_lines(a.path))
    big = write("big.ndjson", 8_000, 4)
    assert len(physical_lines(big.path)) == 8_000
    assert 3 < big.bytes / a.bytes < 5

    def span_ms(path: Path) -> int:
        stamps = [strict_json(raw)["ts"] for raw in physical_lines(path)]
        return stamps[-1] - stamps[0]

    # at the same pace, four times the events take about four times as long (whole days)
    assert 3 < span_ms(big.path) / span_ms(a.path) < 5


def test_write_log_writes_run_by_run_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a clean log is written as each simulation run ends (a 10 M-event log must not be held
    # whole): every write holds at most about one run's lines, and the bytes are those of
    # the lines simulated all at once
    from a2a_lab.samples import _write

    written: list[int] = []
    write_lines = _write._write_lines

    def recorded(file: Any, lines: pl.Series) -> None:
        written.append(lines.len())
        write_lines(file, lines)

    monkeypatch.setattr(_write, "_write_lines", recorded)
    summary = write_log(tmp_path / "s.ndjson", 8_000, seed=4, events_per_day=2_000)
    # runs of one simulated day at 2,000 events a day: about 2,000 lines each
    assert len(written) >= 3 and sum(written) == 8_000
    assert max(written) < 4_000
    simulation = np.random.SeedSequence(4).spawn(3)[0]
    whole = _write._simulated_lines(
        8_000, simulation, LOG_START, 2_000 / _write._EVENTS_PER_MESSAGE
    )
    assert summary.path.read_bytes() == "".join(f"{line}\n" for line in whole).encode()


def test_write_log_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="n_events"):
        write_log(tmp_path / "x.ndjson", 0, seed=1)
    with pytest.raises(ValueError, match="bad_line_fraction"):
        write_log(tmp_path / "x.ndjson", 10, seed=1, bad_line_fraction=1.5)
    with pytest.raises(ValueError, match="events_per_day"):
        write_log(tmp_path / "x.ndjson", 10, seed=1, events_per_day=0)


def test_work_sessions_and_enrichment_run_on_a_written_log(tmp_path: Path) -> None:
    summary = write_log(
        tmp_path / "coordination-events.ndjson", 4_000, seed=2, bad_line_fraction=0.002
    )
    events = al.load(summary.path).events
    enriched = al.enrich(events)
    assert enriched.height == summary.events
    now = int(events["event_ms"].max()) + 3_600_000
    ws = al.work_sessions(enriched, now=now)
    in_log = set(
        events.select(pl.col("data").struct.field("workSessionId")).to_series().drop_nulls()
    )
    assert len(in_log) >= 5
    assert ws.total_sessions == len(in_log) == ws.sessions.height
    id_column = next(c for c in ws.sessions.columns if c in ("workSessionId", "work_session_id"))
    assert set(ws.sessions[id_column]) == in_log
