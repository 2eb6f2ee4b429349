"""Every sub-command of ``a2a-lab`` with arguments that run it on good input, for the tests
that run each command (tests/cli/test_cli_every_command.py, tests/project/test_follow_tz.py).
"""

from __future__ import annotations

import argparse

from a2a_lab.cli import _build_parser

#: Each command's arguments when all is well: ``{path}`` is the path it reads (a log, a
#: SimConfig file for ``simulate`` and ``sweep``, a log directory for ``ingest``), ``{tmp}``
#: a folder to write to.
GOOD: dict[str, list[str]] = {
    "load": ["{path}"],
    "enrich": ["{path}"],
    "work-sessions": ["{path}"],
    "events": ["{path}"],
    "conversations": ["{path}"],
    "graph": ["{path}", "-o", "{tmp}/g.json"],
    "check": ["{path}"],
    "ingest": ["{path}", "{tmp}/store"],
    "report": ["{path}", "-o", "{tmp}/r.html"],
    "simulate": ["{path}"],
    "sweep": ["{path}", "--grid", '{"rate_scale": [1]}'],
    "calibrate": ["{path}", "-o", "{tmp}/twin.json"],
    "export-otlp": ["{path}", "-o", "{tmp}/x.otlp.json", "--no-progress"],
    "serve": ["{path}", "--port", "0"],
}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """The CLI's sub-commands and their parsers, read from its own parser."""
    parser = _build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)
