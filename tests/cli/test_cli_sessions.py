"""``a2a-lab enrich``, ``work-sessions`` and ``events``, run in-process against the reference's
HTTP bodies (``peer-api/``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_lab.cli import main
from tests.sessions.test_sessions_api import (
    API,
    EV_FILES,
    PEER,
    WS_FILES,
    load_case,
    reference_objects,
)
from tests.support.reference_impl import sessions_ref as ref

OPTION = {"role": "--role", "type": "--type", "status": "--status", "viewCategory": "--view-category",
          "subTag": "--sub-tag", "limit": "--limit", "since": "--since"}  # fmt: skip


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def query_args(query: dict[str, str]) -> list[str]:
    # --opt=value keeps values such as "-3" or " a2a.send" from being read as options
    return [f"{OPTION[key]}={value}" for key, value in query.items()]


def negative_limit(query: dict[str, str]) -> bool:
    """A case whose ``limit`` is below 0: the HTTP API reads it as the reference does (the
    body is checked through the library in tests/sessions/test_sessions_api.py); the CLI's
    ``--limit`` refuses it with one line (issue 27)."""
    try:
        return float(query.get("limit", "0").strip() or "0") < 0
    except ValueError:
        return False


def refused_limit(status: int, err: str) -> bool:
    return status == 2 and err.count("\n") == 1 and "--limit must be a number >= 0" in err


def without_events(body: dict[str, Any]) -> dict[str, Any]:
    sessions = [
        {**s, "threads": [{k: v for k, v in t.items() if k != "events"} for t in s["threads"]]}
        for s in body["sessions"]
    ]
    return {**body, "sessions": sessions}


@pytest.mark.parametrize("name", [n for n in WS_FILES if "limit-abc" not in n])
def test_work_sessions_command_prints_the_reference_body(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    meta, expected = load_case(name)
    argv = [
        "work-sessions",
        str(PEER / meta["log"]),
        "--format=json",
        f"--now-ms={meta['nowMs']}",
        *query_args(meta["query"]),
    ]
    if meta["overrides"]["file"]:
        argv.append(f"--overrides={API / 'overrides' / meta['overrides']['file']}")
    status, out, err = run_cli(capsys, *argv)
    if negative_limit(meta["query"]):
        assert refused_limit(status, err)
        return
    # an overrides file whose entries the reference skips is named in one warning line
    # (issue 27); the body stays the reference's
    warned = [line for line in err.splitlines() if line.startswith("a2a-lab: warning: overrides")]
    assert status == 0 and err.count("\n") == len(warned)
    if meta["overrides"]["file"] and "bad5" in meta["overrides"]["file"]:
        assert len(warned) == 1 and '("ws_00041")' in warned[0]
    body = json.loads(out)
    assert ref.ordered(without_events(body)) == ref.ordered(without_events(expected))
    objects = reference_objects(meta["log"])
    got = [e for s in body["sessions"] for t in s["threads"] for e in t["events"]]
    lines = [e["line"] for s in expected["sessions"] for t in s["threads"] for e in t["events"]]
    assert [ref.ordered(e) for e in got] == [ref.ordered(objects[line]) for line in lines]


@pytest.mark.parametrize("name", EV_FILES)
def test_events_command_prints_the_reference_body(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    meta, expected = load_case(name)
    status, out, err = run_cli(
        capsys, "events", str(PEER / meta["log"]), *query_args(meta["query"])
    )
    if negative_limit(meta["query"]):
        assert refused_limit(status, err)
        return
    assert (status, err) == (0, "")
    assert ref.ordered(json.loads(out)) == ref.ordered(expected)


def test_repeated_and_comma_separated_options_agree(capsys: pytest.CaptureFixture[str]) -> None:
    meta, expected = load_case("tricky__ws__status-ACTIVE+QUIET.json")
    log = str(PEER / meta["log"])
    now = f"--now-ms={meta['nowMs']}"
    _, comma, _ = run_cli(capsys, "work-sessions", log, now, "--json", "--status=ACTIVE,QUIET")
    _, repeated, _ = run_cli(
        capsys,
        "work-sessions",
        log,
        now,
        "--format",
        "json",
        "--status",
        "ACTIVE",
        "--status",
        "QUIET",
    )
    assert json.loads(comma) == json.loads(repeated)
    assert json.loads(comma)["status"] == expected["status"] == ["ACTIVE", "QUIET"]


def test_enrich_command_writes_reference_objects_with_their_position(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "enriched.ndjson"
    status, stdout, err = run_cli(capsys, "enrich", str(PEER / "tricky.ndjson"), "-o", str(out))
    assert (status, stdout, err) == (0, "", "")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    objects = reference_objects("tricky.ndjson")
    assert [r["line"] for r in rows] == sorted(objects)  # every event, in file order
    for row in rows:
        assert row.pop("file") == str(PEER / "tricky.ndjson")
        expected = objects[row.pop("line")]
        assert ref.ordered(row) == ref.ordered(expected)


def test_enrich_command_reads_a_directory_in_reading_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "coordination-events-2026-01.ndjson").write_text(
        '{"type":"old","ts":9}\n', encoding="utf-8"
    )
    (tmp_path / "coordination-events.ndjson").write_text(
        '{"type":"new","ts":1}\n\n{"type":"x"}\n', encoding="utf-8"
    )
    status, stdout, _ = run_cli(capsys, "enrich", str(tmp_path))
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert status == 0
    assert [(Path(r["file"]).name, r["line"], r["type"]) for r in rows] == [
        ("coordination-events-2026-01.ndjson", 1, "old"),
        ("coordination-events.ndjson", 1, "new"),
        ("coordination-events.ndjson", 3, "x"),
    ]


def test_main_agent_options_change_the_roles(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "log.ndjson"
    log.write_text(
        json.dumps({"type": "a2a.send", "ts": 1, "data": {"fromAgent": "eden", "toAgent": "Seum"}})
        + "\n"
    )
    config = tmp_path / "openclaw.json"
    config.write_text(
        json.dumps({"agents": {"list": [{"id": "eden"}, {"id": "seum"}]}}), encoding="utf-8"
    )

    def role(*options: str) -> str:
        status, out, _ = run_cli(capsys, "events", str(log), *options)
        assert status == 0
        return json.loads(out)["events"][0]["eventRole"]

    assert role() == "delegation.subagent"
    assert role("--main-agents", "eden", "--main-agents", " SEUM ") == "conversation.main"
    assert role("--main-agents=eden,seum") == "conversation.main"
    assert role(f"--openclaw-config={config}") == "conversation.main"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["work-sessions", "{missing}"], "no such file"),
        (["events", "{missing}"], "no such file"),
        (["enrich", "{missing}"], "no such file"),
        (["work-sessions", "{log}", "--overrides={missing}"], "cannot read overrides file"),
        (["work-sessions", "{log}", "--overrides={bad}"], "overrides file"),
        (["work-sessions", "{log}", "--overrides={array}"], "must be a JSON object"),
        (["work-sessions", "{log}", "--limit=abc"], "--limit must be a number"),
        (["events", "{log}", "--limit=ten"], "--limit must be a number"),
        (["work-sessions", "{log}", "--now-ms=yesterday"], "not an ISO 8601 date"),
        (["work-sessions", "{log}", "--now-ms=Infinity"], "outside the representable range"),
        (["events", "{log}", "--openclaw-config={missing}"], "cannot read --openclaw-config"),
        (["events", "{log}", "--openclaw-config={bad}"], "not valid JSON"),
        (["events", "{log}", "--main-agents= , "], "--main-agents needs at least one"),
        (["enrich", "{log}", "-o", "{missing}/out.ndjson"], "cannot write"),
    ],
)
def test_errors_are_one_line_with_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    log = tmp_path / "log.ndjson"
    log.write_text('{"type":"a2a.send","ts":1}\n', encoding="utf-8")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "array.json").write_text("[]", encoding="utf-8")
    names = {name: str(tmp_path / f"{name}.json") for name in ("bad", "array", "missing")}
    names["log"] = str(log)
    status, out, err = run_cli(capsys, *(a.format(**names) for a in argv))
    assert status == 2 and out == ""
    assert (
        err.count("\n") == 1 and err.startswith("a2a-lab") and ": error: " in err and message in err
    )


def test_exclusive_main_agent_options_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["events", str(tmp_path), "--main-agents=a", "--openclaw-config=f"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
