"""Following the CLI's ``--tz`` (issue 25 goal): at most 8 stays, and at most 3 returns.

``tools/follow_option.py`` records every call into an a2a_lab function that holds the zone
(its name, the resolved :class:`a2a_lab.time.Zone`, or ``args`` holding it); a *stay* is a
run of consecutive calls in one module, a *return* a stay in a module already left. Every
sub-command that takes ``--tz`` (read from the CLI's own parser; the arguments that run
it are tests/support/commands.py's) is run on the committed sample with
``--tz Pacific/Chatham`` and the clock pinned.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import a2a_lab as al
from tests.support.commands import GOOD, subcommands
from tests.support.paths import ROOT

#: The goal's bounds (issue 25: ≤ 8 stays; ≤ 3 returns, the bound it sets for simulate).
MAX_STAYS = 8
MAX_RETURNS = 3

#: More arguments: simulate writes its log (the zone names its rotated files).
EXTRA = {"simulate": ["-o", "{tmp}/simulated"]}

#: Commands measured above the goal (tools/follow_option.py, data/samples): the report's
#: trail (14 stays, 3 returns) runs, after the load (decoded with the zone's event time,
#: resolved once in analysis._check_log) and the application layer (which makes the
#: times the page shows), through the views that still take the zone: the family
#: timeline (plots, _chart_data), the thread messages, the page shell's clock and the
#: zone's name escaped between them. Strict: a fix shows. (ingest: 6 stays, 0 returns;
#: serve: 8 stays, 1 return, now that the store's state records its zone as data.)
OVER = {"report"}

#: Commands over 5 s of CPU under the tracer.
SLOW = {"report", "calibrate", "sweep"}


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("follow_option", ROOT / "tools/follow_option.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tz_commands() -> list[str]:
    return sorted(
        name
        for name, p in subcommands().items()
        if any("--tz" in a.option_strings for a in p._actions)
    )


def test_every_tz_command_is_followed() -> None:
    assert set(_tz_commands()) <= set(GOOD)


def _case(command: str) -> Any:
    marks = []
    if command in OVER:
        marks.append(pytest.mark.xfail(strict=True, reason="above the goal (see OVER)"))
    if command in SLOW:
        marks.append(pytest.mark.slow)
    return pytest.param(command, marks=marks)


@pytest.mark.parametrize("command", [_case(c) for c in _tz_commands()])
def test_tz_stays_in_at_most_8_rooms(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    tool = _tool()
    monkeypatch.delenv("A2A_LAB_TZ", raising=False)
    # serve: everything up to the listening server, which is not started
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    config = tmp_path / "cfg.json"
    config.write_text(al.SimConfig(n_messages=20).model_dump_json(), encoding="utf-8")
    path = config if command in ("simulate", "sweep") else ROOT / "data/samples"
    argv = [command] + [
        a.replace("{path}", str(path)).replace("{tmp}", str(tmp_path))
        for a in GOOD[command] + EXTRA.get(command, [])
    ]
    status, calls = tool.follow([*argv, "--now", "2026-03-01T00:00:00Z", "--tz", tool.TZ])
    runs, returns = tool.stays(calls)
    trail = " > ".join(runs)
    assert status == 0, trail
    # the zone is followed at all: parsed in the CLI, resolved in a2a_lab.time
    assert runs[:2] == ["a2a_lab.cli._common", "a2a_lab.time._js"], trail
    assert len(runs) <= MAX_STAYS, f"{len(runs)} stays: {trail}"
    assert returns <= MAX_RETURNS, f"{returns} returns: {trail}"


def test_the_tracer_follows_the_resolved_zone() -> None:
    """The zone resolved (a2a_lab.time.Zone), a ZoneInfo of it and args holding it are the
    zone; another zone and derived values are not."""
    from zoneinfo import ZoneInfo

    from a2a_lab.time import check_tz

    tool = _tool()
    zone = check_tz(tool.TZ)
    assert tool._holds(zone) and tool._holds(ZoneInfo(tool.TZ))
    assert tool._holds(argparse.Namespace(tz=zone))
    assert not tool._holds(check_tz("UTC")) and not tool._holds(zone.event_time)
    assert tool.stays(["a", "a", "b", "a", "c", "b"]) == (["a", "b", "a", "c", "b"], 2)
