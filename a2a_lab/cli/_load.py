"""``a2a-lab load SOURCE --json``: load a log and print the load report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2a_lab.cli._common import Commands

from a2a_lab.cli._common import add_command, default_zone


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "load",
        run,
        help="load a log (file, glob or directory) and report what was read",
        description=(
            "Load SOURCE and report what was read: every physical line is an event, a reject "
            "(with file, line and reason) or a blank line."
        ),
        epilog="example:\n  a2a-lab load ~/.openclaw/logs --json",
    )
    p.add_argument("--json", action="store_true", help="print the load report as JSON")


def run(args: argparse.Namespace) -> int:
    from a2a_lab.cli._common import print_json
    from a2a_lab.cli._source import load_source

    result = load_source(args.source, tz=args.tz or default_zone())
    summary = result.report.summary()
    if args.json:
        print_json(summary)
    else:
        print(result.report)
    return 0
