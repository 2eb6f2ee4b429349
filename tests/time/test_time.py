"""The one time module (issue 25 item 3) and the one clock of the CLI and the report (issue 23).

Parsing, formatting and zones are property-tested against Python's ``datetime`` and
``zoneinfo`` wherever those work (the years 1-9999); beyond them, against the bounds of
JavaScript's ``Date`` (±8.64e15 ms), which the module guards.
"""

from __future__ import annotations

import argparse
import json
import re
import time as wall
import zoneinfo
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import a2a_lab as al
import a2a_lab.time as t
from a2a_lab.cli import _build_parser, main
from a2a_lab.views.report import ReportOptions

#: Zones with DST gaps and folds, half-hour and negative offsets, and none at all.
ZONES = [
    "UTC",
    "Asia/Seoul",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: A Python datetime's range, a day inside each end (offsets move it by up to 14 h).
PY_LO, PY_HI = datetime(1, 1, 2), datetime(9999, 12, 30)
#: Where Polars' zone rules agree with zoneinfo's. Found by these tests: Polars 2.1 (chrono-tz)
#: has no DST rules from 2100 on (Europe/Berlin in July 2100 is +01:00, zoneinfo +02:00), and
#: shows a local mean time offset with seconds rounded to the minute (Asia/Seoul 1908:
#: +08:28, zoneinfo +08:27:52). Both are outside what an event log holds.
ZONED_LO, ZONED_HI = datetime(1970, 1, 2), datetime(2099, 12, 30)


def _dates(zone: str) -> st.SearchStrategy[datetime]:
    return st.datetimes(PY_LO, PY_HI) if zone == "UTC" else st.datetimes(ZONED_LO, ZONED_HI)


zoned = st.sampled_from(ZONES).flatmap(lambda z: st.tuples(_dates(z), st.just(z)))


def _ms(dt: datetime) -> int:
    """Epoch ms of an aware datetime by exact integer arithmetic (floor)."""
    return (dt - EPOCH) // timedelta(milliseconds=1)


# --------------------------------------------------------------------------- parsing
@settings(max_examples=200, deadline=None)
@given(dt=st.datetimes(PY_LO, PY_HI), zone=st.sampled_from(ZONES))
def test_to_epoch_ms_equals_python_for_every_spelling(dt: datetime, zone: str) -> None:
    aware = dt.replace(tzinfo=zoneinfo.ZoneInfo(zone))
    expected = aware.timestamp() * 1000.0
    assert t.to_epoch_ms(aware) == expected
    assert t.to_epoch_ms(aware.isoformat()) == pytest.approx(expected, abs=1e-3)
    # naive means UTC, whatever the machine's zone
    assert t.to_epoch_ms(dt) == dt.replace(tzinfo=UTC).timestamp() * 1000.0
    assert t.to_epoch_ms(expected) == expected


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(case=zoned)
def test_iso_to_ms_expr_reads_naive_text_in_tz_as_zoneinfo(case: tuple[datetime, str]) -> None:
    """``Date.parse`` of text without offset, in ``tz``: Python's reading with fold=0 (the
    earlier of two), null where the wall time does not exist (a DST gap)."""
    dt, zone = case
    text = f"{dt.year:04d}-" + dt.strftime("%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}"
    local = dt.replace(microsecond=dt.microsecond // 1000 * 1000, tzinfo=zoneinfo.ZoneInfo(zone))
    back = local.astimezone(UTC).astimezone(local.tzinfo).replace(tzinfo=None)
    exists = back == local.replace(tzinfo=None)
    got = pl.select(t.iso_to_ms_expr(pl.lit(text), zone)).item()
    assert got == (_ms(local) if exists else None)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    ms=st.integers(-t.MAX_TIME_MS, t.MAX_TIME_MS),
    offset_min=st.integers(-23 * 60 - 59, 23 * 60 + 59),
)
def test_iso_to_ms_expr_round_trips_the_whole_date_range(ms: int, offset_min: int) -> None:
    """Every instant ``Date`` holds, written with any offset, reads back exactly (text made
    from the module's own integer calendar, checked against Python where Python reaches).
    The local text may lie beyond Date's range: TimeClip applies to the UTC result."""
    shifted = ms + offset_min * 60_000
    frame = pl.DataFrame({"ms": [shifted]}).with_columns(
        pl.col("ms").cast(pl.Datetime("ms", "UTC")).alias("t")
    )
    text = frame.select(t.format_time(pl.col("t"), "%Y-%m-%dT%H:%M:%S%.3f"))["t"].item()
    # chrono's year (-0001, +12345) as ECMAScript writes it beyond 0-9999: six digits, signed
    year, rest = re.fullmatch(r"([+-]?\d+)(-.*)", text).groups()  # type: ignore[union-attr]
    if not re.fullmatch(r"\d{4}", year):
        year = f"{'-' if year.startswith('-') else '+'}{year.lstrip('+-').zfill(6)}"
    text = year + rest
    sign = "-" if offset_min < 0 else "+"
    zone = f"{sign}{abs(offset_min) // 60:02d}:{abs(offset_min) % 60:02d}"
    assume(year != "-000000")
    parsed = pl.select(t.iso_to_ms_expr(pl.lit(text + zone))).item()
    assert parsed == ms
    if -62_135_596_800_000 < shifted < 253_402_300_799_000:
        python = datetime.fromisoformat(text + zone)
        assert _ms(python) == ms


# --------------------------------------------------------------------------- formatting
@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(case=zoned)
def test_format_time_equals_python_strftime_in_every_zone(case: tuple[datetime, str]) -> None:
    dt, zone = case
    ms = _ms(dt.replace(tzinfo=UTC))
    local = pl.DataFrame({"t": [ms]}).with_columns(
        pl.col("t").cast(pl.Datetime("ms", "UTC")).dt.convert_time_zone(zone)
    )
    got = local.select(t.format_time(pl.col("t"), "%Y-%m-%dT%H:%M:%S%.3f%:z"))["t"].item()
    python = (EPOCH + timedelta(milliseconds=ms)).astimezone(zoneinfo.ZoneInfo(zone))
    assert got == python.isoformat(timespec="milliseconds")


# --------------------------------------------------------------------------- guards
@pytest.mark.parametrize("ms", [t.MAX_TIME_MS, -t.MAX_TIME_MS, 0])
def test_the_edges_of_date_are_instants(ms: int) -> None:
    assert t.to_epoch_ms(ms) == float(ms)
    assert t.instant_ms(ms, "since") == float(ms)


@pytest.mark.parametrize(
    "value",
    [t.MAX_TIME_MS + 1, -t.MAX_TIME_MS - 1, float("nan"), float("inf"), -float("inf"), True, 1e308],
)
def test_beyond_date_or_not_a_number_is_an_error_naming_the_parameter(value: Any) -> None:
    with pytest.raises(ValueError, match=r"^now: "):
        t.to_epoch_ms(value, name="now")
    with pytest.raises(ValueError, match=r"^now: "):
        t.now_ms(value)


def test_iso_text_is_null_one_ms_beyond_date() -> None:
    texts = [
        "+275760-09-13T00:00:00.000Z",
        "+275760-09-13T00:00:00.001Z",
        "-271821-04-20T00:00:00.000Z",
        "-271821-04-19T23:59:59.999Z",
        "-000000-01-01T00:00:00Z",
    ]
    got = pl.select(t.iso_to_ms_expr(pl.lit(pl.Series(texts)))).to_series().to_list()
    assert got == [t.MAX_TIME_MS, None, -t.MAX_TIME_MS, None, None]


def test_formatting_never_panics_over_the_int64_range() -> None:
    """format_time and python_safe at Date's edges and at the Int64 extremes (whose
    absolute value overflows): text or null, never a Polars panic."""
    values = [t.MAX_TIME_MS, -t.MAX_TIME_MS, 2**63 - 1, -(2**63), 0, None]
    frame = pl.DataFrame({"t": pl.Series(values, dtype=pl.Int64)}).with_columns(
        pl.col("t").cast(pl.Datetime("ms", "UTC"))
    )
    text = frame.select(t.format_time(pl.col("t"), "%Y-%m-%dT%H:%M:%S%.3fZ"))["t"].to_list()
    assert text[:2] == ["+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z"]
    assert text[4:] == ["1970-01-01T00:00:00.000Z", None]
    assert all(isinstance(x, str) for x in text[:5])
    safe = t.python_safe(frame)["t"].to_list()
    assert safe[:4] == [None, None, None, None] and safe[4] == EPOCH and safe[5] is None


# --------------------------------------------------------------------------- zones, clock
@pytest.mark.parametrize("zone", ZONES)
def test_check_tz_accepts_the_zones_python_knows(zone: str) -> None:
    assert zone in zoneinfo.available_timezones() | {"UTC"}
    assert t.check_tz(zone) == zone


@pytest.mark.parametrize("bad", ["Mars/Olympus", "", "Asia/", None, 9])
def test_check_tz_refuses_anything_else_naming_the_parameter(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^--tz: "):
        t.check_tz(bad, name="--tz")


def test_the_clock_is_the_wall_clock_unless_pinned() -> None:
    before = wall.time() * 1000
    got = t.now_ms()
    after = wall.time() * 1000
    assert before - 1 <= got <= after + 1 and got == int(got)
    assert t.now_ms("2026-02-19T09:00:00Z") == 1_771_491_600_000.0
    assert t.now_ms(datetime(2026, 2, 19, 18, tzinfo=zoneinfo.ZoneInfo("Asia/Seoul"))) == (
        1_771_491_600_000.0
    )


def test_old_module_paths_are_the_same_objects() -> None:
    """``a2a_lab.timeparse``, ``a2a_lab._timefmt`` and ``a2a_lab.io._timestamps`` (issue 25
    item 6: old paths keep working) re-export the one module's functions."""
    import a2a_lab._timefmt as old_fmt
    import a2a_lab.io._timestamps as old_js
    import a2a_lab.timeparse as old_parse

    for old in (old_parse, old_fmt, old_js):
        names = [n for n in vars(old) if not n.startswith("_") and n != "annotations"]
        assert len(names) >= 3, old.__name__
        for name in names:
            assert getattr(old, name) is getattr(t, name), (old.__name__, name)
    assert set(vars(old_parse)) >= {"to_epoch_ms", "check_tz", "in_window"}
    assert al.to_epoch_ms is t.to_epoch_ms


# --------------------------------------------------------------------------- the CLI
def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = _build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _minimal_argv(name: str, parser: argparse.ArgumentParser) -> list[str]:
    """The sub-command with every positional and required option filled (parsed, not run)."""
    argv = [name]
    for action in parser._actions:
        if not action.option_strings:
            argv.append("x")
        elif action.required:
            argv += [action.option_strings[0], "x"]
    for group in parser._mutually_exclusive_groups:
        if group.required:
            argv += [group._group_actions[0].option_strings[0], "x"]
    return argv


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_takes_now_and_tz_with_one_meaning(name: str) -> None:
    parser = _build_parser()
    argv = _minimal_argv(name, _commands()[name])
    now = "2026-02-19T18:00+09:00"
    for spelling in (["--now", now], ["--now-ms", "1771491600000"], ["--now", "2026-02-19T09:00"]):
        args = parser.parse_args([*argv, *spelling, "--tz", "Asia/Seoul"])
        assert args.now == 1_771_491_600_000.0, spelling
        assert args.tz == "Asia/Seoul"
    args = parser.parse_args([*argv, "--tz", "Europe/Berlin"])
    assert args.now is None and args.tz == "Europe/Berlin"
    # resolved when parsed: the commands pass the Zone down, nothing checks it again
    assert isinstance(args.tz, t.Zone)
    helps = {a.dest: a.help for a in _commands()[name]._actions if a.dest in ("now", "tz")}
    assert "default: the wall clock" in str(helps["now"])
    assert "default: $A2A_LAB_TZ, else UTC" in str(helps["tz"])


@pytest.mark.parametrize("name", sorted(_commands()))
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--tz", "Mars/Olympus"], "argument --tz: unknown time zone 'Mars/Olympus'"),
        (["--now", "yesterday"], "argument --now/--now-ms: not an ISO 8601 date or time"),
        (["--now", "1e308"], "argument --now/--now-ms: 1e+308 is outside the representable"),
        (["--now", "1", "--now-ms", "2"], "--now-ms: given twice (also as --now)"),
    ],
)
def test_a_bad_clock_or_zone_is_the_same_one_line_error_everywhere(
    name: str, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_minimal_argv(name, _commands()[name]), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"a2a-lab: error: {name}: {message}"), err


def test_the_old_timezone_spelling_is_gone(capsys: pytest.CaptureFixture[str]) -> None:
    """``--timezone`` was the deprecated spelling of ``--tz`` (issue 25: one name per job)."""
    assert main(["load", "data/samples", "--timezone", "UTC"]) == 2
    assert capsys.readouterr().err == "a2a-lab: error: unrecognized arguments: --timezone UTC\n"


# --------------------------------------------------------------------------- one clock
@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clock") / "gen.ndjson"
    al.samples.write_log(path, 400, seed=7)
    return path


def _cli_statuses(log: Path, now: str | None, tmp: Path) -> dict[str, str]:
    out = tmp / "ws.csv"
    argv = ["work-sessions", str(log), "-o", str(out), "--limit", "1000"]
    assert main(argv if now is None else [*argv, "--now", now]) == 0
    frame = pl.read_csv(out)
    return dict(zip(frame["work_session_id"], frame["status"], strict=True))


def _report_statuses(log: Path, now: str | None) -> dict[str, str]:
    sessions = al.report(str(log), ReportOptions(embed_font=False), now=now).data.sessions.sessions
    sessions = sessions.filter(pl.col("work_session_id").is_not_null())
    return dict(zip(sessions["work_session_id"], sessions["status"], strict=True))


@pytest.mark.slow
def test_report_and_work_sessions_give_a_session_the_same_status(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """For the same log and the same ``--now``, every session has one status; without
    ``--now`` both read the wall clock (this log lies before it: all ARCHIVED)."""
    events = al.load(log).events
    last = events["event_ms"].max()
    first = events["event_ms"].min()
    seen: set[str] = set()
    nows: list[str | None] = [None]
    for ms in (last + 3_600_000, (first + last) / 2 + 86_400_000, last + 25 * 3_600_000):
        nows.append(datetime.fromtimestamp(ms / 1000, UTC).isoformat())
    for now in nows:
        cli = _cli_statuses(log, now, tmp_path)
        rep = _report_statuses(log, now)
        assert cli == rep, now
        seen |= set(cli.values())
        if now is None:
            assert set(cli.values()) == {"ARCHIVED"}
    capsys.readouterr()
    # the clocks chosen reach every status, so the comparison can fail on each
    assert seen == {"ACTIVE", "QUIET", "ARCHIVED"}


@pytest.mark.slow
def test_the_report_command_passes_now_to_the_report(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import a2a_lab.views.report as views_report

    seen: dict[str, Any] = {}
    real = views_report.report

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(views_report, "report", spy)
    out = tmp_path / "r.html"
    assert main(["report", str(log), "-o", str(out), "--now", "2030-01-01T00:00Z"]) == 0
    assert seen["now"] == 1_893_456_000_000.0
    assert json.dumps(seen["now"]) == "1893456000000.0"
