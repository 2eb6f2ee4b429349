"""``a2a-lab check SOURCE``: log health as a CI gate.

The load itself is checked too: an empty source and rejected lines are ``load.*`` errors,
so ``--fail-on error`` never passes a log it could not read.
"""

from __future__ import annotations

import argparse
import sys

from a2a_lab.cli._common import (
    CliError,
    OneLineArgumentParser,
    add_command,
    add_window_options,
    check_output,
    default_zone,
    float_option,
    int_option,
    print_json,
    split_multi,
    write_output,
)

_EXAMPLE = """example:
  a2a-lab check ~/.openclaw/logs --fail-on error --ignore guard.loop --format github
  a2a-lab check run.ndjson --since 2026-02-18 --until 2026-02-19T12:00 --json"""


def register(sub: argparse._SubParsersAction[OneLineArgumentParser]) -> None:
    p = add_command(
        sub,
        "check",
        run,
        help="check the log's health (load, sequences, lifecycles, safety limits, clocks, ids)",
        description=(
            "Run the health rules (a2a_lab.analysis.checks.RULES) on SOURCE and print the findings. "
            "An empty source and rejected lines are error-level findings (load.empty, "
            "load.rejects). Text output ends with one summary line."
        ),
        epilog=_EXAMPLE,
    )
    p.add_argument(
        "--format",
        choices=["text", "json", "github"],
        default=None,
        help="text (default), json, or github (workflow annotations ::error file=…,line=…::)",
    )
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the findings to FILE.csv, .parquet, .json or .ndjson",
    )
    p.add_argument(
        "--fail-on",
        choices=["info", "warning", "error"],
        default=None,
        help="exit with status 1 when a finding of this severity or worse exists",
    )
    p.add_argument(
        "--select",
        action="append",
        metavar="RULE",
        help="run only these rules (repeated or a,b; 'guard.' or 'guard.*' names a family)",
    )
    p.add_argument(
        "--ignore", action="append", metavar="RULE", help="skip these rules (same syntax)"
    )
    add_window_options(p, "check only events")
    p.add_argument(
        "--loop-limit",
        type=int_option(1),
        default=6,
        help="loop guard: messages per window per pair (default 6)",
    )
    p.add_argument(
        "--loop-window",
        type=float_option(0.0),
        default=60.0,
        help="loop guard window in seconds (default 60)",
    )


def _github(text: str) -> str:
    """A value escaped for a workflow command (GitHub's ``%``, CR, LF encoding)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github(text).replace(":", "%3A").replace(",", "%2C")


def run(args: argparse.Namespace) -> int:

    import polars as pl

    from a2a_lab.analysis.checks import (
        SEVERITIES,
        CheckLimits,
        CheckOptions,
        run_checks,
        select_rules,
    )
    from a2a_lab.analysis.logs import log_check
    from a2a_lab.cli._source import load_source
    from a2a_lab.io import SourceError, is_store

    fmt = args.format or ("json" if args.json else "text")
    if args.json and args.format not in (None, "json"):
        raise CliError(f"--json contradicts --format {args.format}")
    check_output(args.output)
    tz = args.tz or default_zone()
    from a2a_lab.time import now_ms

    opts = CheckOptions(
        limits=CheckLimits(loop_limit=args.loop_limit, loop_window_s=args.loop_window),
        now=now_ms(args.now),
        select=split_multi(args.select),
        ignore=split_multi(args.ignore),
        since=args.since,
        until=args.until,
    )
    try:
        select_rules(opts.select, opts.ignore)  # a bad rule name fails before the log is read
        if is_store(args.source):
            from a2a_lab.materialize import stored_check

            # the tables made at ingest answer the whole log with the limits they replayed
            stored = stored_check(args.source, opts, tz=tz)
            if stored is not None:
                found, res = stored
            else:
                res = load_source(args.source, tz=tz)
                found = run_checks(res.events, opts, res.report)
        else:
            # a log: read once, its exchanges matched a bucket of conversations at a time
            found, res = log_check(args.source, opts, tz=tz)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except SourceError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read {args.source}: {exc.strerror or exc}") from None
    if args.output is not None:
        write_output(found, args.output, tz)
    by_sev = {s: int(found.filter(pl.col("severity") == s).height) for s in SEVERITIES}
    rejects = int(res.report.rejects.height)
    if fmt == "json":
        print_json(
            {
                "findings": found.to_dicts(),
                "count": found.height,
                "by_severity": by_sev,
                "by_rule": dict(found.group_by("rule").len().sort("rule").iter_rows()),
                "load": res.report.summary(),
                "summary": {"events": res.report.events, "rejects": rejects},
            }
        )
    else:
        for row in found.iter_rows(named=True):
            lines = row["lines"] or []
            if fmt == "github":
                level = {"info": "notice", "warning": "warning", "error": "error"}[row["severity"]]
                props = [] if row["file"] is None else [f"file={_github_property(row['file'])}"]
                if lines:
                    props.append(f"line={lines[0]}")
                props.append(f"title={_github_property(row['rule'])}")
                where = ",".join(props)
                print(f"::{level} {where}::{_github(row['message'])}")
            else:
                shown = ",".join(map(str, lines[:10])) + ("…" if len(lines) > 10 else "")
                print(
                    f"{row['severity']:7} {row['rule']:30} {row['file']}:{shown}  {row['message']}"
                )
        summary = (
            f"{res.report.events} events, {rejects} rejects, {found.height} findings ("
            + ", ".join(f"{by_sev[s]} {s}" for s in reversed(SEVERITIES))
            + ")"
        )
        print(summary if fmt == "text" else f"::notice title=a2a-lab check::{_github(summary)}")
    sys.stdout.flush()
    if args.fail_on is not None:
        worst = SEVERITIES.index(args.fail_on)
        if any(by_sev[s] for s in SEVERITIES[worst:]):
            return 1
    return 0
