"""Every CLI error is one line on stderr, exit status 2, never a traceback (issue 14 item 5).

A generated matrix of sub-commands × bad options × bad inputs runs IN-PROCESS through
``main(argv)`` (a subprocess per case would take minutes); a few cases run as real
processes to cover what only a process shows (the console entry, non-UTF-8 argv bytes).
The logs are made at test time: ``samples.write_log`` and a simulated run.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import a2a_lab as al
from a2a_lab.cli import main
from tests.support.paths import ROOT

#: The sub-commands that read a SOURCE, with the arguments each needs besides it.
COMMANDS: dict[str, list[str]] = {
    "load": [],
    "enrich": [],
    "work-sessions": ["--now-ms", "1771400000000"],
    "events": [],
    "conversations": [],
    "graph": ["-o", "{tmp}/g.json"],
    "check": [],
    "export-otlp": ["-o", "{tmp}/x.otlp.json", "--no-progress"],
    "calibrate": ["-o", "{tmp}/twin.json"],
}

#: Sources that cannot be read: each is an error for every sub-command.
BAD_SOURCES = [
    "{tmp}/missing.ndjson",
    "{tmp}/nologs",  # a directory without coordination-events files
    "{tmp}/with\nnewline.ndjson",
    "{tmp}/\udcff\udcfe.ndjson",  # a non-UTF-8 file name, as Python decodes it from argv
    "{tmp}/missing/*.ndjson",
    "{tmp}/\u0001ctl.ndjson",
]

#: Bad options per sub-command (each also combined with every good source).
BAD_OPTIONS: dict[str, list[list[str]]] = {
    "load": [["--bogus"], ["--json=1"]],
    "enrich": [
        ["-o", "{tmp}/missing/out.ndjson"],
        ["-o", "{tmp}/nologs"],
        ["--main-agents", " , "],
        ["--openclaw-config", "{tmp}/missing.json"],
        ["--openclaw-config", "{tmp}/bad.json"],
    ],
    "work-sessions": [
        ["--now-ms", "0x" + "f" * 400],
        ["--now-ms", "nan"],
        ["--now-ms", "inf"],
        ["--now-ms", "1e308"],
        ["--now-ms", "2026-02-30"],
        ["--now-ms", "yesterday"],
        ["--limit", "abc"],
        ["--since", "0xff"],
        ["--overrides", "{tmp}/missing.json"],
        ["--overrides", "{tmp}/bad.json"],
    ],
    "events": [
        ["--limit", "ten"],
        ["--limit", "nan"],
        ["--main-agents", ","],
        ["--openclaw-config", "{tmp}/bad.json"],
        ["--bogus"],
    ],
    "export-otlp": [
        ["--batch", "0"],
        ["--endpoint", "ftp://x"],  # with -o: one of the two only
        ["-o", "{tmp}/missing/out.json"],
        ["--timeout", "nan"],
        ["--batch", "many"],
    ],
    "conversations": [
        ["--since", "2026-02-30"],
        ["--since", "2026-02-19", "--until", "2026-02-18"],
        ["--until", "x"],
        ["-o", "{tmp}/c.txt"],
        ["-o", "{tmp}/missing/c.csv"],
        ["-o", "{tmp}/nologs"],
        ["--json", "-o", "{tmp}/c.csv"],
    ],
    "graph": [
        ["--until", "1e400"],
        ["--since", "2026-02-19", "--until", "2026-02-18"],
        ["-o", "{tmp}/g.png"],
        ["-o", "{tmp}/missing/g.graphml"],
        ["-o", "{tmp}/nologs"],
    ],
    "check": [
        ["--loop-window", "nan"],
        ["--loop-window", "inf"],
        ["--loop-window", "-1"],
        ["--loop-window", "0"],
        ["--loop-window", "x"],
        ["--loop-limit", "0"],
        ["--loop-limit", "1e308"],
        ["--loop-limit", "1.5"],
        ["--now-ms", "0x" + "f" * 40],
        ["--now-ms", "1e308"],
        ["--now-ms", "-8640000000000001"],
        ["--now", "2026-13-01"],
        ["--since", "2026-02-30"],
        ["--since", "nan"],
        ["--until", "+275760-09-13T00:00:00.001Z"],
        ["--since", "2026-02-19", "--until", "2026-02-18"],
        ["--select", "nope"],
        ["--ignore", "guard.nope"],
        ["--select", "clock.,nope.*"],
        ["--format", "xml"],
        ["--fail-on", "fatal"],
        ["-o", "{tmp}/f.xlsx"],
        ["-o", "{tmp}/missing/f.csv"],
        ["--json", "--format", "github"],
        ["--now", "1", "--now-ms", "1"],
    ],
}

BAD_OPTIONS["calibrate"] = [
    ["-o", "{tmp}/twin.txt"],
    ["-o", "{tmp}/missing/twin.json"],
    ["--tz", "Mars/Olympus"],
    ["--format", "xml"],
    ["--bogus"],
]

#: ``simulate`` and ``sweep`` read a SimConfig JSON file: configurations that are errors.
BAD_CONFIGS = [
    "{tmp}/missing.json",
    "{tmp}/nologs",  # a directory
    "{tmp}/bad.json",  # not JSON
    "{tmp}/latin1.json",  # not UTF-8
    "{tmp}/extra.json",  # a field SimConfig does not have
    "{tmp}/negative.json",  # n_messages < 0
    "{tmp}/list.json",  # JSON, not an object
]

#: Bad options of the simulator commands, with a good configuration.
BAD_SIM_OPTIONS: dict[str, list[list[str]]] = {
    "simulate": [
        ["--seed", "-1"],
        ["--seed", "x"],
        ["--format", "xml"],
        ["-o", "{tmp}/bad.json"],  # an existing file that is not LOG.ndjson
        ["-o", "{tmp}/missing/sim.ndjson"],
        ["--tz", "Nowhere/City"],
    ],
    "sweep": [
        [],  # --grid is required
        ["--grid", "{tmp}/missing-grid.json"],
        ["--grid", "{}"],
        ["--grid", "[1]"],
        ["--grid", '{"rate_scale": []}'],
        ["--grid", '{"rate_scale": 2}'],
        ["--grid", '{"nope.x": [1]}'],
        ["--grid", '{"gate.max_concurrent_flows": ["many"]}'],
        ["--grid", "{not json"],
        ["--grid", '{"rate_scale": [1]}', "--replications", "0"],
        ["--grid", '{"rate_scale": [1]}', "--metrics", "nope"],
        ["--grid", '{"rate_scale": [1]}', "--level", "2"],
        ["--grid", '{"rate_scale": [1]}', "-o", "{tmp}/s.txt"],
        ["--grid", '{"rate_scale": [1]}', "--workers", "0"],
    ],
}

#: Usage errors of the command line itself.
USAGE = [[], ["nope"], ["--bogus"], ["load"], ["graph", "x"], ["check", "--fail-on"], ["-x"]]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Sources made now: a generated log, a simulated one, a control-char agent id, all rejects."""
    tmp = tmp_path_factory.mktemp("cli_errors")
    al.samples.write_log(tmp / "gen.ndjson", 400, seed=3, bad_line_fraction=0.01)
    al.write_events(al.simulate(al.SimConfig(n_messages=60), seed=2).events, tmp / "sim.ndjson")
    row = {
        "type": "a2a.send",
        "agentId": "a\u0001b",
        "ts": 1771400000000,
        "data": {"fromAgent": "a\u0001b", "toAgent": "c\u0000", "conversationId": "x1"},
    }
    (tmp / "ctl.ndjson").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (tmp / "rej.ndjson").write_text('not json\n{"type": 5}\n\n', encoding="utf-8")
    (tmp / "nologs").mkdir()
    (tmp / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp / "good.json").write_text(al.SimConfig(n_messages=20).model_dump_json(), encoding="utf-8")
    (tmp / "latin1.json").write_bytes(b'{"n_messages": 5, "\xe9": 1}')
    (tmp / "extra.json").write_text('{"n_messages": 5, "bogus": 1}', encoding="utf-8")
    (tmp / "negative.json").write_text('{"n_messages": -5}', encoding="utf-8")
    (tmp / "list.json").write_text("[1, 2]", encoding="utf-8")
    return {
        "tmp": str(tmp),
        "gen": str(tmp / "gen.ndjson"),
        "sim": str(tmp / "sim.ndjson"),
        "ctl": str(tmp / "ctl.ndjson"),
        "rej": str(tmp / "rej.ndjson"),
    }


def _cases() -> list[tuple[str, list[str]]]:
    """(id, argv template) of every matrix case; ``{src}`` is filled per good source."""
    cases: list[tuple[str, list[str]]] = []
    for cmd, extra in COMMANDS.items():
        for i, src in enumerate(BAD_SOURCES):
            cases.append((f"{cmd}-badsrc{i}", [cmd, src, *extra]))
            for j, opt in enumerate(BAD_OPTIONS[cmd][:2]):  # bad source AND bad option
                cases.append((f"{cmd}-badsrc{i}-badopt{j}", [cmd, src, *extra, *opt]))
        for (j, opt), src in itertools.product(
            enumerate(BAD_OPTIONS[cmd]), ("{gen}", "{sim}", "{ctl}", "{rej}")
        ):
            # -o given twice: the bad one wins, as argparse keeps the last
            cases.append((f"{cmd}-badopt{j}-{src.strip('{}')}", [cmd, src, *extra, *opt]))
    for cmd in BAD_SIM_OPTIONS:
        grid = [] if cmd == "simulate" else ["--grid", '{"rate_scale": [1]}']
        cases += [(f"{cmd}-badcfg{i}", [cmd, c, *grid]) for i, c in enumerate(BAD_CONFIGS)]
        cases += [
            (f"{cmd}-badopt{j}", [cmd, "{tmp}/good.json", *opt])
            for j, opt in enumerate(BAD_SIM_OPTIONS[cmd])
        ]
    cases += [
        ("calibrate-no-events", ["calibrate", "{rej}", "-o", "{tmp}/t.json"]),
        ("calibrate-no-exchange", ["calibrate", "{ctl}", "-o", "{tmp}/t.json"]),
    ]
    cases += [(f"usage{i}", argv) for i, argv in enumerate(USAGE)]
    return cases


CASES = _cases()


def _fill(arg: str, logs: dict[str, str]) -> str:
    """``arg`` with ``{tmp}``, ``{gen}``, ... replaced (JSON braces in it left alone)."""
    for key, value in logs.items():
        arg = arg.replace("{" + key + "}", value)
    return arg


def test_matrix_is_large_enough() -> None:
    assert len(CASES) >= 300


@pytest.mark.parametrize("argv", [argv for _, argv in CASES], ids=[i for i, _ in CASES])
def test_error_is_one_line_exit_2(
    argv: list[str], logs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    filled = [_fill(a, logs) for a in argv]
    status = main(filled)
    captured = capsys.readouterr()
    assert status == 2, (filled, captured.err)
    assert "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.endswith("\n"), captured.err
    assert captured.err.startswith("a2a-lab: error: "), captured.err
    assert captured.err.isprintable() or captured.err[:-1].isprintable()


def test_clean_inputs_still_work(logs: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """The error handling does not turn valid calls into errors."""
    assert main(["check", logs["sim"], "--fail-on", "error", "--now-ms", "0"]) == 0
    capsys.readouterr()
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("a2a-lab ")
    for cmd in [
        "load",
        "enrich",
        "work-sessions",
        "events",
        "conversations",
        "graph",
        "check",
        "simulate",
        "sweep",
        "calibrate",
    ]:
        assert main([cmd, "--help"]) == 0
        text = capsys.readouterr().out
        assert "example" in text.lower(), cmd


def _run(*argv: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "a2a_lab", *argv], capture_output=True, env=env, timeout=120
    )


@pytest.mark.parametrize(
    "argv",
    [
        (b"load", b"/tmp/\xff\xfe-no-such.ndjson"),
        ("check", "/no/such\nfile.ndjson"),
        ("check", "{gen}", "--loop-window", "nan"),
        ("events", "{gen}", "--since", "x", "--limit", "1e308", "--bogus"),
    ],
)
def test_subprocess_errors(argv: tuple[str | bytes, ...], logs: dict[str, str]) -> None:
    args = [_fill(a, logs) if isinstance(a, str) else a for a in argv]
    done = _run(*args)
    assert done.returncode == 2
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("a2a-lab: error: "), err


def test_graphml_of_control_characters_is_written(logs: dict[str, str]) -> None:
    """Agent ids with control characters (issue 27): GraphML shows them as ⟨U+XXXX⟩ and the
    graph is written (it used to be a one-line error), never a traceback."""
    out = _fill("{tmp}/ctl.graphml", logs)
    done = _run("graph", _fill("{ctl}", logs), "-o", out)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0 and "Traceback" not in err, err
    assert "U+" in Path(out).read_text(encoding="utf-8")


def test_check_gate_on_empty_rejected_and_clean_logs(
    logs: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --fail-on error``: 1 on an empty or all-rejected log, 0 on a clean simulated one."""
    empty = tmp_path / "empty.ndjson"
    empty.write_text("", encoding="utf-8")
    rejected = tmp_path / "rejected.ndjson"
    rejected.write_text('not json\n{"no": "type"}\n[1, 2]\n', encoding="utf-8")
    assert main(["check", str(empty), "--fail-on", "error"]) == 1
    assert main(["check", str(rejected), "--fail-on", "error"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("0 events, 3 rejects, ")
    sim = al.simulate(al.SimConfig(n_messages=80), seed=11).events
    clean = tmp_path / "clean.ndjson"
    al.write_events(sim, clean)
    assert main(["check", str(clean), "--fail-on", "error"]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith(f"{sim.height} events, 0 rejects, ") and "(0 error," in summary
    assert main(["check", str(rejected), "--format", "github"]) == 0
    notes = capsys.readouterr().out.strip().splitlines()
    assert sum(n.startswith("::error file=") for n in notes) >= 2
    assert main(["check", str(rejected), "--json", "--select", "load.rejects"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert set(body) >= {"findings", "count", "by_severity", "by_rule", "load"}
    assert body["by_rule"] == {"load.rejects": body["count"]} and body["count"] >= 2
