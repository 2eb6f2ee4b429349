"""``a2a-lab events SOURCE``: the body of the dashboard's ``GET /api/events``."""

from __future__ import annotations

import argparse
import sys

from a2a_lab.cli._common import (
    Commands,
    add_command,
    add_output_option,
    check_output,
    default_zone,
    print_json,
    write_output,
)
from a2a_lab.cli._enrich import add_main_agent_options, load_enriched, main_agents
from a2a_lab.cli._sessions import limit_option


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "events",
        run,
        help="print the dashboard's event list (GET /api/events) as JSON",
        description=(
            "Filter the enriched events of SOURCE as GET /api/events does and print its JSON "
            "body: the LAST --limit matching events in reading order (rotated files oldest "
            "first, the live file last)."
        ),
        epilog="example:\n  a2a-lab events ~/.openclaw/logs --type a2a.send,a2a.response --since 2026-02-18 --limit 50\n"
        "  a2a-lab events ~/.openclaw/logs --limit 1e9 -o events.parquet",
    )
    p.add_argument(
        "--since",
        metavar="ISO",
        help=(
            "keep events at or after this time, as the dashboard's Date.parse reads it: "
            "an unparsable date matches none; without an offset it is in --tz"
        ),
    )
    p.add_argument("--role", metavar="R", help="keep events of exactly this role (one value)")
    p.add_argument(
        "--type", action="append", metavar="T", help="keep events of this type (repeated or a,b)"
    )
    p.add_argument(
        "--view-category", metavar="C", help="keep events of this category ('all': every one)"
    )
    p.add_argument(
        "--limit", metavar="N", help="at most this many events, the last ones (default 100)"
    )
    add_main_agent_options(p)
    add_output_option(p, "kept events (the enriched frame's rows)")


def run(args: argparse.Namespace) -> int:
    from a2a_lab.sessions import events_query

    if args.limit is not None:
        limit_option(args.limit)
    check_output(args.output)
    tz = args.tz or default_zone()
    agents = main_agents(args.openclaw_config, args.main_agents)
    frame, files = load_enriched(args.source, tz, agents)
    result = events_query(
        frame,
        since=args.since,
        role=args.role,
        types=args.type,
        view_category=args.view_category,
        limit=args.limit,
        files=files,
        tz=tz,
    )
    if args.output is not None:
        write_output(result.events, args.output, tz)
        print(f"{result.events.height} events written to {args.output}", file=sys.stderr)
        return 0
    print_json(result.to_api())
    return 0
