"""The bundled sample log and its seeded generator (``a2a_lab/samples``).

The log files are parsed here with the standard library only (strict JSON: ``NaN`` is not
JSON), independently of ``a2a_lab.io``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.reference.rules import TASK_MONITOR_V1
from a2a_lab.reference.runtime import REFERENCE_RETRY
from a2a_lab.samples import (
    DEFAULT_SEED,
    LogSummary,
    generate_events,
    sample_dir,
    sample_openclaw_config,
    write_log,
    write_sample,
)
from a2a_lab.schema.payloads import parse_payload

ROOT = Path(__file__).resolve().parent.parent
LIVE = "coordination-events.ndjson"
MONTH_NAME = re.compile(r"coordination-events-\d{4}-\d{2}\.ndjson")
SIZE_NAME = re.compile(r"coordination-events-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.ndjson")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
REFERENCE_ORDER = ["type", "agentId", "ts", "data"]
NO_REPLY = "[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다"
LEGACY_NO_REPLY = "[outcome] blocked: 응답을 받지 못했습니다"
REJECT_KINDS = {"not_json", "non_object", "missing_type", "blank_type", "nan", "truncated"}
FAMILIES = {
    "a2a.send",
    "a2a.response",
    "a2a.complete",
    "a2a.spawn",
    "a2a.spawn_result",
    "a2a.retry",
    "a2a.auto_route",
    "task.started",
    "task.updated",
    "task.blocked",
    "task.resumed",
    "task.completed",
    "task.cancelled",
    "continuation.sent",
    "continuation.complete",
    "plan.submitted",
    "plan.approved",
    "unblock.requested",
    "milestone.sync_failed",
}
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
    manifest = write_sample(tmp_path, DEFAULT_SEED)
    bundled = sorted(p.name for p in sample_dir().iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == bundled
    for name in bundled:
        assert (tmp_path / name).read_bytes() == (sample_dir() / name).read_bytes(), name
    assert f"--seed {DEFAULT_SEED}" in (sample_dir() / "README.md").read_text(encoding="utf-8")
    assert manifest.events == sum(count for _, _, count in manifest.files)


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
    days = (events[-1]["ts"] - events[0]["ts"]) / 86_400_000
    assert days >= 5
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
    assert any(re.fullmatch(f"agent:[a-z]+:a2a:{UUID}", k) for k in keys)
    # every session key shape of runtime §1 occurs (requester keys of the older runtime too)
    keys |= {d[k] for d in data for k in ("requesterSessionKey", "sourceSessionKey") if k in d}
    assert any(re.fullmatch(r"agent:[a-z]+:discord:group:\d{17,20}", k) for k in keys)
    assert any(re.fullmatch(r"agent:[a-z]+:direct:\d{17,20}", k) for k in keys)
    spawns = [d for e, d in zip(events, data, strict=True) if e["type"] == "a2a.spawn"]
    assert all(isinstance(d["depth"], int) for d in spawns)
    assert any("parentConversationId" in d for d in spawns)
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
                d = e["data"]
                assert (
                    d.get("fromSessionType") == "subagent"
                    or ":subagent:" in str(d.get("sourceSessionKey", ""))
                    or d.get("depth", 0) >= 1
                ), e


def test_korean_english_mentions_and_category_keywords(events: list[dict[str, Any]]) -> None:
    all_texts = list(texts(events))
    assert sum(bool(re.search("[가-힣]", t)) for t in all_texts) >= 500
    assert sum(bool(re.fullmatch(r"[\x00-\x7f]+", t)) for t in all_texts) >= 300
    assert any(re.search(r"<@\d{17,20}>", t) for t in all_texts)
    haystack = "\n".join(all_texts).lower()
    for category in TASK_MONITOR_V1.categories:
        assert any(k in haystack for k in category.keywords), category.name
    sent = [e["data"]["message"] for e in events if e["type"] == "a2a.send"]
    assert max(len(m) for m in sent) == 4_000  # the reference cuts a sent message to 4,000


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
    assert kinds["blank"] == kinds["crlf"] == kinds["invalid_utf8"] == 1
    assert 5 <= len(documented) <= 10


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
# The generator
# --------------------------------------------------------------------------------------------
@settings(max_examples=3)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_generated_events_keep_the_reference_invariants(seed: int) -> None:
    first = generate_events(seed, days=1)
    assert first == generate_events(seed, days=1)
    assert [e["ts"] for e in first] == sorted(e["ts"] for e in first)
    for e in first:
        d = e["data"]
        assert list(e) == REFERENCE_ORDER
        if isinstance(d.get("message"), str):
            assert len(d["message"].encode("utf-16-le")) // 2 <= 4_000
        if e["type"] in ("a2a.response", "a2a.spawn"):
            assert d["replyPreview"] == js_slice(d["message"], 200)
        if d.get("outcome") == "no_reply":
            assert d["message"].startswith(NO_REPLY)
        if e["type"] == "a2a.complete" and "effectiveTurns" in d:
            assert d["actualTurns"] <= d["effectiveTurns"]


def test_write_log_counts_bad_fraction_and_order(tmp_path: Path) -> None:
    path = tmp_path / "big.ndjson"
    summary = write_log(path, 20_000, seed=11, bad_line_fraction=0.005)
    lines = physical_lines(path)
    assert (summary.lines, summary.bad_lines, summary.events) == (20_000, 100, 19_900)
    assert len(lines) == 20_000 and summary.bytes == path.stat().st_size
    bad = [n for n, raw in enumerate(lines, start=1) if good_event(raw) is None]
    assert tuple(bad) == summary.bad_line_numbers
    kinds = Counter(classify(lines[n - 1]) for n in bad)
    assert set(kinds) <= REJECT_KINDS and len(kinds) >= 4
    good = [good_event(raw) for raw in lines]
    stamps = [e["ts"] for e in good if e is not None]
    assert stamps == sorted(stamps)
    assert all(list(e) == REFERENCE_ORDER for e in good if e is not None)
    assert "\ue000" not in path.read_text(encoding="utf-8")
    run_ids = [
        e["data"]["runId"]
        for e in good
        if e is not None and e["type"] == "a2a.send" and "runId" in e["data"]
    ]
    assert len(run_ids) == len(set(run_ids))
    assert 250 <= summary.bytes / summary.lines <= 500


def test_write_log_is_deterministic_and_clean_without_bad_lines(tmp_path: Path) -> None:
    def write(name: str, seed: int) -> LogSummary:
        return write_log(tmp_path / name, 3_000, seed=seed, n_templates=60)

    a, b, c = write("a.ndjson", 4), write("b.ndjson", 4), write("c.ndjson", 5)
    assert a.path.read_bytes() == b.path.read_bytes() != c.path.read_bytes()
    assert a.bad_lines == 0 and a.bad_line_numbers == ()
    assert all(good_event(raw) is not None for raw in physical_lines(a.path))
    with pytest.raises(ValueError):
        write_log(tmp_path / "x.ndjson", 0, seed=1)
    with pytest.raises(ValueError):
        write_log(tmp_path / "x.ndjson", 10, seed=1, bad_line_fraction=1.5)


def test_python_m_entry_point_writes_a_large_log(tmp_path: Path) -> None:
    # -W error: running the module must not import it twice (runpy's RuntimeWarning)
    command = [sys.executable, "-W", "error::RuntimeWarning", "-m", "a2a_lab.samples._generate"]
    options = ["--out", str(tmp_path), "--seed", "3", "--events", "400", "--bad-fraction", "0.01"]
    done = subprocess.run(command + options, capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = physical_lines(tmp_path / LIVE)
    assert len(lines) == 400
    assert sum(good_event(raw) is None for raw in lines) == 4
