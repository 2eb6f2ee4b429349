"""Every sub-command of ``a2a-lab``, with a bad path, a bad option value and a bad time: one
line on stderr and exit status 2 (issue 23).

The commands are read from the CLI's own parser, so a new sub-command fails
:func:`test_every_command_is_covered` until it has its arguments in tests/support/commands.py
and its cases here. The broader matrix of bad
inputs per command is tests/cli/test_cli_errors.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import a2a_lab as al
from a2a_lab.cli import main
from tests.support.commands import GOOD, subcommands

#: What each case changes (the path read, or one option given a bad value), and what its
#: error line must name: the failure is the one the case makes, not another.
BAD = {
    "bad-path": ("{tmp}/missing/nothing.ndjson", [], "nothing.ndjson"),
    "bad-option-value": (None, ["--tz", "Nowhere/City"], "Nowhere/City"),
    "bad-time": (None, ["--now", "2026-13-01T00:00Z"], "2026-13-01T00:00Z"),
}


def _commands() -> list[str]:
    return sorted(subcommands())


def test_every_command_is_covered() -> None:
    assert sorted(GOOD) == _commands()


@pytest.fixture(scope="module")
def good_paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A readable path of each kind: a log file, its directory, a SimConfig file."""
    tmp = tmp_path_factory.mktemp("every_command")
    logs = tmp / "logs"
    logs.mkdir()
    al.samples.write_log(logs / "coordination-events.ndjson", 200, seed=3)
    (tmp / "cfg.json").write_text(al.SimConfig(n_messages=20).model_dump_json(), encoding="utf-8")
    return {
        "log": str(logs / "coordination-events.ndjson"),
        "logdir": str(logs),
        "config": str(tmp / "cfg.json"),
    }


def _good_path(command: str, paths: dict[str, str]) -> str:
    if command in ("simulate", "sweep"):
        return paths["config"]
    return paths["logdir"] if command == "ingest" else paths["log"]


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", sorted(GOOD))
def test_error_is_one_line_and_exit_2(
    command: str,
    case: str,
    good_paths: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad_path, extra, named = BAD[case]
    path = (bad_path or _good_path(command, good_paths)).replace("{tmp}", str(tmp_path))
    argv = [command] + [
        a.replace("{path}", path).replace("{tmp}", str(tmp_path)) for a in GOOD[command]
    ]
    status = main([*argv, *extra])
    err = capsys.readouterr().err
    assert status == 2, (argv, extra, err)
    assert err.startswith("a2a-lab: error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert named in err, err
