"""The clock and window options fuzzed (issue 24 §4): every command that takes ``--now``,
``--since`` or ``--until`` runs on a hostile log with times inside its span, at its edges,
at JavaScript's largest instants and beyond, from the log and from a store.

A panic hid here once: ``check LOG --now T`` with ``T`` inside the log's span panicked in
Polars' streaming engine (a message built with ``pl.format`` on a chunked string column),
while every corpus ran with a fixed ``now`` after the log. Each run must end with exit 0
or 1 (a command's own result), or exit 2 with one ``a2a-lab: error:`` line naming the bad
value; never a traceback or a panic.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.cli import main
from tests.support.commands import GOOD, subcommands
from tests.support.fuzz_hostile import write_scale_dir

CLOCK = ("--now", "--since", "--until")
#: commands that do not read a log (simulate, sweep) or run until stopped (serve)
NOT_A_QUERY = {"simulate", "sweep", "serve"}
#: JavaScript's Date range ends at ±8.64e15 ms; Python's datetime at year 9999 (2.5e14 ms)
EDGE_MS = [0, -1, 2.5e14, 2.6e14, 8.2e15, 8.64e15, 8.64e15 + 1, -8.64e15, 9.2e18, 1e300]
BAD_TEXT = ["nan", "inf", "-inf", "1e400", "", "2026-02-30T00:00Z", "+275760-09-13T00:00:00Z"]


def _clock_commands() -> dict[str, list[str]]:
    """Each command reading a log and the clock options its parser has."""
    out: dict[str, list[str]] = {}
    for name, parser in subcommands().items():
        if name in NOT_A_QUERY:
            continue
        options = {
            opt
            for action in parser._actions
            if not isinstance(action, argparse._HelpAction)
            for opt in action.option_strings
        }
        have = [o for o in CLOCK if o in options]
        if have:
            out[name] = have
    return out


COMMANDS = _clock_commands()


def test_the_clock_commands_are_found() -> None:
    # not vacuous: the commands the issue names take the clock
    assert {"check", "work-sessions", "report"} <= set(COMMANDS)
    assert all("--now" in opts or "--since" in opts for opts in COMMANDS.values())


@pytest.fixture(scope="module")
def hostile_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[float]]:
    """A small hostile log directory (5 files, extremes in every numeric field, one file at
    JavaScript's largest times) and instants spread over its loaded span."""
    src, _ = write_scale_dir(
        tmp_path_factory.mktemp("clock") / "log",
        random.Random(11),
        files=5,
        lines_per_file=400,
        hostile=0.02,
        spice=0.5,
    )
    ts = al.load(src).events.get_column("ts").cast(pl.Float64).drop_nulls().drop_nans().sort()
    picks = [ts[int(q * (ts.len() - 1))] for q in (0.0, 0.1, 0.5, 0.9, 1.0)]
    return src, [float(p) for p in picks]


def _run(
    command: str, source: Path, extra: list[str], tmp: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    argv = [command] + [
        a.replace("{path}", str(source)).replace("{tmp}", str(tmp)) for a in GOOD[command]
    ]
    status = main([*argv, *extra])
    return status, capsys.readouterr().err


def _clean(status: int, err: str, extra: list[str]) -> None:
    assert "Traceback" not in err and "panicked" not in err.lower(), (extra, err)
    assert status in (0, 1, 2), (extra, status, err)
    if status == 2:
        assert err.startswith("a2a-lab: error: ") and err.count("\n") == 1, (extra, err)


@pytest.mark.parametrize("command", ["check", "work-sessions", "conversations"])
def test_now_inside_the_span(
    command: str,
    hostile_log: tuple[Path, list[float]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src, picks = hostile_log
    # one run with every clock option the command has, each inside the log's span (the
    # hypothesis tests below draw the rest, in the full suite)
    at = {"--since": picks[1], "--now": picks[2], "--until": picks[3]}
    extra = [a for option in COMMANDS[command] for a in (option, repr(at[option]))]
    status, err = _run(command, src, extra, tmp_path, capsys)
    _clean(status, err, extra)
    assert status in (0, 1), (extra, err)  # times inside the log are good times


def test_check_now_inside_the_span_on_the_committed_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the panic's own reproducer: the sample directory read in chunks, a clock rule selected
    status, err = _run(
        "check",
        al.samples.sample_dir(),
        ["--now", "2026-01-31T00:00:00Z", "--select", "clock."],
        tmp_path,
        capsys,
    )
    _clean(status, err, [])
    assert status in (0, 1)


_TIMES = st.one_of(
    st.sampled_from([repr(t) for t in EDGE_MS] + BAD_TEXT),
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
)


def _draw_clock(
    data: st.DataObject, commands: list[str], picks: list[float]
) -> tuple[str, list[str]]:
    """A command and some of its clock options, each a time inside the log or any text."""
    command = data.draw(st.sampled_from(commands))
    inside = st.sampled_from([repr(t) for t in picks])
    extra: list[str] = []
    for option in COMMANDS[command]:
        if data.draw(st.booleans()):
            extra += [option, data.draw(st.one_of(inside, _TIMES))]
    return command, extra


@pytest.fixture(scope="module")
def hostile_store(
    hostile_log: tuple[Path, list[float]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    src, _ = hostile_log
    store = tmp_path_factory.mktemp("clock_store") / "store"
    assert main(["ingest", str(src), str(store)]) == 0
    return store


@pytest.mark.slow
@pytest.mark.parametrize("where", ["log", "store"])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_clock_on_any_command(
    where: str,
    data: st.DataObject,
    hostile_log: tuple[Path, list[float]],
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src, picks = hostile_log
    if where == "store":
        src = request.getfixturevalue("hostile_store")
    # ingest reads a log directory, not a store
    commands = sorted(COMMANDS) if where == "log" else sorted(set(COMMANDS) - {"ingest"})
    command, extra = _draw_clock(data, commands, picks)
    status, err = _run(command, src, extra, tmp_path_factory.mktemp(where), capsys)
    _clean(status, err, extra)
