"""CLI exports, ``--tz``, time windows and ``--help`` (issue 13 items 4-5).

``-o`` on every sub-command that outputs a frame (``events``, ``work-sessions``,
``conversations``, ``check``) writes .csv / .parquet / .json / .ndjson with every column
and readable times; ``--tz`` (default ``$A2A_LAB_TZ``, else UTC) is the zone of naive log
timestamps and of the times written; ``--since`` / ``--until`` give what the Python
``since=`` / ``until=`` give; every sub-command has a description and an example. On logs
generated at test time.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.cli import _build_parser, main

NOW = "2030-01-01T00:00Z"
NOW_MS = 1_893_456_000_000
ISO_WITH_OFFSET = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$")


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "gen.ndjson"
    al.samples.write_log(path, 800, seed=21)
    return path


@pytest.fixture(scope="module")
def enriched(log: Path) -> pl.DataFrame:
    return al.enrich(al.load(log).events)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = _build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_subcommand_has_a_description_and_an_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands = _subcommands()
    assert {"load", "enrich", "work-sessions", "events", "conversations", "graph", "check"} <= set(
        commands
    )
    for name, sub in commands.items():
        assert sub.description and len(sub.description) > 40, name
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        examples = [
            line.strip() for line in text.splitlines() if line.strip().startswith("a2a-lab ")
        ]
        assert "example" in text.lower() and examples, name
        assert any(line.split()[1] == name for line in examples), (name, examples)


@pytest.mark.parametrize("command", ["events", "work-sessions", "conversations", "check"])
def test_every_frame_command_has_o(command: str) -> None:
    options = {o for a in _subcommands()[command]._actions for o in a.option_strings}
    assert {"-o", "--output", "--tz"} <= options


def _frame_of(command: str, enriched: pl.DataFrame) -> pl.DataFrame:
    """What the command writes, computed in Python."""
    if command == "events":
        return al.events_query(enriched, limit=1e9).events
    if command == "work-sessions":
        return al.work_sessions(enriched, now=NOW_MS).sessions
    if command == "conversations":
        return al.conversations(enriched)
    loaded = al.load(enriched["file"][0])
    return al.check(loaded.events, now=NOW_MS, report=loaded.report)


def _argv(command: str, log: Path, out: Path) -> list[str]:
    extra = {
        "events": ["--limit", "1e9"],
        "work-sessions": ["--now", NOW],
        "conversations": [],
        "check": ["--now", NOW],
    }[command]
    return [command, str(log), *extra, "-o", str(out)]


@pytest.mark.parametrize("command", ["events", "work-sessions", "conversations", "check"])
def test_o_parquet_keeps_every_column_and_value(
    command: str, log: Path, enriched: pl.DataFrame, tmp_path: Path
) -> None:
    out = tmp_path / "x.parquet"
    assert main(_argv(command, log, out)) == 0
    back = pl.read_parquet(out)
    want = _frame_of(command, enriched)
    assert back.columns == want.columns
    assert back.height == want.height > 0
    assert back.equals(want), command


@pytest.mark.parametrize("command", ["events", "work-sessions", "conversations", "check"])
@pytest.mark.parametrize("tz", ["UTC", "Asia/Seoul"])
def test_o_csv_and_json_have_readable_times_in_tz(
    command: str, tz: str, log: Path, enriched: pl.DataFrame, tmp_path: Path
) -> None:
    want = _frame_of(command, enriched)
    times = [c for c, t in want.schema.items() if isinstance(t, pl.Datetime)]
    offset = "+00:00" if tz == "UTC" else "+09:00"
    csv, js = tmp_path / "x.csv", tmp_path / "x.json"
    assert main([*_argv(command, log, csv), "--tz", tz]) == 0
    assert main([*_argv(command, log, js), "--tz", tz]) == 0
    back = pl.read_csv(csv, infer_schema=False)
    flat = al.flatten(want)
    assert back.columns == flat.columns and back.height == want.height  # type: ignore[union-attr]
    rows = json.loads(js.read_text(encoding="utf-8"))
    assert len(rows) == want.height and list(rows[0]) == want.columns
    for col in times:
        texts = back[col].drop_nulls()
        assert texts.len() > 0 and texts.str.contains(ISO_WITH_OFFSET.pattern).all(), col
        assert texts.str.ends_with(offset).all(), col
        # the same instants as the frame's
        parsed = texts.str.to_datetime("%Y-%m-%dT%H:%M:%S%.3f%:z", time_unit="ms")
        assert parsed.dt.epoch("ms").to_list() == want[col].drop_nulls().dt.epoch("ms").to_list()
        assert all(r[col] is None or r[col].endswith(offset) for r in rows), col


def test_an_unknown_output_suffix_fails_before_loading(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ["events", "work-sessions", "conversations", "check"]:
        assert main(_argv(command, log, tmp_path / "x.xlsx")) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "unknown output format '.xlsx'" in err, command
    assert not (tmp_path / "x.xlsx").exists()


def test_tz_option_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "naive.ndjson"
    path.write_text(
        '{"type":"a2a.send","timestamp":"2026-02-18T09:00:00","data":{"fromAgent":"a",'
        '"toAgent":"b","conversationId":"c"}}\n',
        encoding="utf-8",
    )
    out = tmp_path / "c.parquet"

    def start_ms(*argv: str) -> float:
        assert main(["conversations", str(path), "-o", str(out), *argv]) == 0
        return float(pl.read_parquet(out)["start_time"].dt.epoch("ms")[0])

    utc = start_ms()
    assert start_ms("--tz", "Asia/Seoul") == utc - 9 * 3_600_000
    monkeypatch.setenv("A2A_LAB_TZ", "Asia/Seoul")
    assert start_ms() == utc - 9 * 3_600_000  # the CLI's default is $A2A_LAB_TZ
    assert start_ms("--tz", "UTC") == utc
    monkeypatch.setenv("A2A_LAB_TZ", "Mars/Olympus")
    capsys.readouterr()
    assert main(["conversations", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "A2A_LAB_TZ: unknown time zone 'Mars/Olympus'" in err
    monkeypatch.delenv("A2A_LAB_TZ")
    for command in ["load", "events", "work-sessions", "conversations", "check", "enrich"]:
        assert main([command, str(path), "--tz", "Mars/Olympus"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--tz" in err and "Mars/Olympus" in err, command


def test_cli_windows_match_python(
    log: Path, enriched: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ms = enriched["event_ms"].sort()
    lo, hi = int(ms[len(ms) // 3]), int(ms[2 * len(ms) // 3])
    window = ["--since", str(lo), "--until", str(hi)]
    out = tmp_path / "w.parquet"
    assert main(["work-sessions", str(log), "--now", NOW, *window, "-o", str(out)]) == 0
    want = al.work_sessions(enriched, now=NOW_MS, since=lo, until=hi).sessions
    assert pl.read_parquet(out).equals(want) and want.height > 0
    assert main(["conversations", str(log), *window, "-o", str(out)]) == 0
    want = al.conversations(enriched, since=lo, until=hi)
    assert pl.read_parquet(out).equals(want) and 0 < want.height < al.conversations(enriched).height
    graph = tmp_path / "g.json"
    assert main(["graph", str(log), *window, "-o", str(graph)]) == 0
    edges = {(e["source"], e["target"]) for e in json.loads(graph.read_text())["links"]}
    assert edges == set(al.interaction_graph(enriched, since=lo, until=hi).edges)
    capsys.readouterr()
    assert main(["work-sessions", str(log), "--since", "2026-02-19", "--until", "2026-02-18"]) == 2
    assert "--since is after --until" in capsys.readouterr().err


def test_events_o_keeps_the_dashboard_limit_semantics(
    log: Path, enriched: pl.DataFrame, tmp_path: Path
) -> None:
    """``-o`` writes the rows the JSON body would hold; a negative ``--limit`` (the HTTP API
    reads ``-3`` as the reference does: 1 event) is refused on the command line (issue 27)."""
    out = tmp_path / "e.parquet"
    assert main(["events", str(log), "--limit", "-3", "-o", str(out)]) == 2
    assert al.events_query(enriched, limit="-3").events.height == 1
    assert main(["events", str(log), "--limit", "2", "-o", str(out)]) == 0
    back = pl.read_parquet(out)
    assert back.height == 2
    assert back.equals(al.events_query(enriched, limit="2").events)
    assert main(["events", str(log), "--since", "not a date", "-o", str(out)]) == 0
    assert pl.read_parquet(out).height == 0  # an unparsable since matches no event
