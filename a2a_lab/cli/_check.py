"""``a2a-lab check SOURCE [--json] [--fail-on warning|error]``: log health for CI gates."""

from __future__ import annotations

import argparse

from a2a_lab.cli._common import CliError, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check the log's health (sequences, lifecycles, safety limits, clocks, ids)")
    p.add_argument("source", help="an NDJSON file, a glob, or a log directory")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--fail-on", choices=["info", "warning", "error"], default=None,
                   help="exit with status 1 when a finding of this severity or worse exists")
    p.add_argument("--now-ms", type=int, default=None, help="the clock for future-timestamp findings (epoch ms)")
    p.add_argument("--loop-limit", type=int, default=6, help="loop guard: messages per window per pair (default 6)")
    p.add_argument("--loop-window", type=float, default=60.0, help="loop guard window in seconds (default 60)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    import polars as pl

    from a2a_lab.analysis.checks import SEVERITIES, check
    from a2a_lab.cli._source import load_source

    if args.loop_limit < 1:
        raise CliError("--loop-limit must be at least 1")
    if args.loop_window <= 0:
        raise CliError("--loop-window must be positive")
    res = load_source(args.source)
    now = args.now_ms if args.now_ms is not None else int(time.time() * 1000)
    found = check(res.events, now=now, loop_limit=args.loop_limit, loop_window_s=args.loop_window)
    by_sev = {s: int(found.filter(pl.col("severity") == s).height) for s in SEVERITIES}
    if args.json:
        print_json(
            {
                "findings": found.to_dicts(),
                "count": found.height,
                "by_severity": by_sev,
                "by_rule": dict(found.group_by("rule").len().sort("rule").iter_rows()),
                "load": res.report.summary(),
            }
        )
    else:
        if found.height == 0:
            print("no findings")
        for row in found.iter_rows(named=True):
            lines = ",".join(map(str, row["lines"][:10])) + ("…" if len(row["lines"]) > 10 else "")
            print(f"{row['severity']:7} {row['rule']:30} {row['file']}:{lines}  {row['message']}")
    if args.fail_on is not None:
        worst = SEVERITIES.index(args.fail_on)
        if any(by_sev[s] for s in SEVERITIES[worst:]):
            return 1
    return 0
