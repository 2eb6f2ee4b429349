"""``--format table|json|csv`` of ``work-sessions`` and ``conversations`` (issue 23 item 3).

The readable table is the default; ``--format json`` (and its old spelling ``--json``) keeps
the bytes scripts read; the table and the CSV show the rows of that JSON.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

import a2a_lab as al
from a2a_lab.cli import main

SAMPLE = str(al.samples.sample_dir())
NOW = "2026-02-05T00:00Z"


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    assert main(list(argv)) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_work_sessions_json_and_its_alias_are_the_api_body(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fmt, _ = _out(capsys, "work-sessions", SAMPLE, "--now", NOW, "--format", "json")
    alias, _ = _out(capsys, "work-sessions", SAMPLE, "--now", NOW, "--json")
    assert fmt == alias
    body = al.work_sessions(al.enrich(al.load(SAMPLE).events), now=NOW).to_api()
    assert json.loads(fmt) == json.loads(json.dumps(body))


def test_work_sessions_table_and_csv_show_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    page, _ = _out(capsys, "work-sessions", SAMPLE, "--now", NOW, "--json", "--limit", "7")
    ids = [s["workSessionId"] for s in json.loads(page)["sessions"]]
    table, err = _out(capsys, "work-sessions", SAMPLE, "--now", NOW, "--limit", "7")
    assert len(ids) == 7 and all(i in table for i in ids)
    assert len(table.splitlines()) == 7 + 4  # the rows, the header and three rules
    assert err.startswith("7 of ") and "work sessions shown" in err
    text, _ = _out(capsys, "work-sessions", SAMPLE, "--now", NOW, "--format", "csv", "--limit", "7")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["work_session_id"] for r in rows] == ids


def test_conversations_default_is_narrow_and_json_is_every_column(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from a2a_lab.cli._conversations import TABLE_COLUMNS

    table, err = _out(capsys, "conversations", SAMPLE)
    conv = al.conversations(al.enrich(al.load(SAMPLE).events))
    header = table.splitlines()[1]
    assert [c.strip() for c in header.strip("|").split("|")] == list(TABLE_COLUMNS)
    assert len(table.splitlines()) == conv.height + 4
    assert err.startswith(f"{conv.height:,} exchanges")
    fmt, _ = _out(capsys, "conversations", SAMPLE, "--format", "json")
    alias, _ = _out(capsys, "conversations", SAMPLE, "--json")
    assert fmt == alias and len(json.loads(fmt)[0]) == conv.width
    text, _ = _out(capsys, "conversations", SAMPLE, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["conversation_id"] for r in rows] == conv["conversation_id"].to_list()
