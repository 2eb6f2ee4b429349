"""``a2a-lab ingest LOGDIR STORE``: add a log directory's new lines to a history store."""

from __future__ import annotations

import argparse

from a2a_lab.cli._common import CliError, OneLineArgumentParser, add_command, print_json


def register(sub: argparse._SubParsersAction[OneLineArgumentParser]) -> None:
    p = add_command(
        sub,
        "ingest",
        run,
        help="add the new lines of a log directory to a Parquet history store (safe from cron)",
        description=(
            "Convert the live and rotated logs of LOGDIR (.gz too) into the Parquet history "
            "STORE, reading only what is new since the last ingest; a partial last line "
            "waits for its newline. Every sub-command accepts STORE where it accepts a log "
            "directory. One ingest at a time; an interrupted one leaves the store as it was."
        ),
        epilog=(
            "example:\n  a2a-lab ingest ~/.openclaw/logs ~/a2a-store --tz Asia/Seoul\n"
            "  a2a-lab check ~/a2a-store --fail-on error"
        ),
        source=False,
    )
    p.add_argument("logdir", help="the log directory (or its live coordination-events.ndjson)")
    p.add_argument("store", help="the store directory (created on the first ingest)")
    p.add_argument(
        "--tz",
        "--timezone",
        dest="timezone",
        metavar="ZONE",
        help="zone of ISO timestamps without offset (first ingest; default UTC)",
    )
    p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when interactive)",
    )


def run(args: argparse.Namespace) -> int:
    from a2a_lab.io import StoreError, ingest

    if args.timezone is not None:
        _check_timezone(args.timezone)
    _check_has_logs(args.logdir)
    try:
        report = ingest(args.logdir, args.store, tz=args.timezone, progress=args.progress)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(
            f"cannot ingest {args.logdir} into {args.store}: {exc.strerror or exc}"
        ) from None
    if args.json:
        print_json(report.summary())
    else:
        print(report)
    return 0


def _check_has_logs(logdir: str) -> None:
    """A directory without any log is an error (a wrong path), not "0 file(s)" and exit 0.

    A path that does not exist yet stays a directory to come (see ``split_target``).
    """
    from pathlib import Path

    from a2a_lab.io._sources import SourceError, resolve_source

    if not Path(logdir).expanduser().is_dir():
        return
    try:
        resolve_source(logdir)
    except SourceError as exc:
        raise CliError(f"nothing to ingest: {exc}") from None


def _check_timezone(name: str) -> None:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise CliError(f"--tz: unknown time zone {name!r}") from None
