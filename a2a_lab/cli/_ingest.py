"""``a2a-lab ingest LOGDIR STORE``: add a log directory's new lines to a history store."""

from __future__ import annotations

import argparse
import os
import sys

from a2a_lab.cli._common import CliError, Commands, add_command, default_zone, print_json
from a2a_lab.time import TZ_ENV


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "ingest",
        run,
        help="add the new lines of a log directory to a Parquet history store (safe from cron)",
        description=(
            "Convert the live and rotated logs of LOGDIR (.gz too) into the Parquet history "
            "STORE, reading only what is new since the last ingest; a partial last line "
            "waits for its newline. Every sub-command accepts STORE where it accepts a log "
            "directory. One ingest at a time; an interrupted one leaves the store as it was "
            "and the next one recovers it. A damaged store (a part missing, changed or "
            "unlisted, a damaged state) is an error naming the file: --repair rebuilds the "
            "state from the parts and their kept lines, reading lost lines again from LOGDIR, "
            "and moves what it cannot use to STORE/damaged/ (it deletes nothing)."
        ),
        epilog=(
            "example:\n  a2a-lab ingest ~/.openclaw/logs ~/a2a-store --tz Asia/Seoul\n"
            "  a2a-lab check ~/a2a-store --fail-on error\n"
            "  a2a-lab ingest ~/.openclaw/logs ~/a2a-store --repair"
        ),
        source=False,
    )
    p.add_argument("logdir", help="the log directory (or its live coordination-events.ndjson)")
    p.add_argument("store", help="the store directory (created on the first ingest)")
    p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild a damaged store's state from its parts and kept lines, then ingest",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="check every part's checksum first (not only those whose size or time changed)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when interactive)",
    )


def run(args: argparse.Namespace) -> int:
    from a2a_lab.io import StoreError, ingest

    # the zone is the store's from its first ingest: only --tz or $A2A_LAB_TZ given set it
    tz = args.tz or (default_zone() if os.environ.get(TZ_ENV) else None)
    _check_has_logs(args.logdir)
    try:
        report = ingest(
            args.logdir,
            args.store,
            tz=tz,
            progress=args.progress,
            repair=args.repair,
            verify=args.verify,
        )
    except StoreError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(
            f"cannot ingest {args.logdir} into {args.store}: {exc.strerror or exc}"
        ) from None
    from a2a_lab.materialize import materialize

    # the enriched columns work sessions read, for the new events only (issue 24)
    try:
        materialized = materialize(args.store)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    print(materialized, file=sys.stderr)
    if args.json:
        print_json(report.summary())
    else:
        print(report)
        for note in report.recovered:
            print(f"recovered: {note}")
    return 0


def _check_has_logs(logdir: str) -> None:
    """A directory without any log is an error (a wrong path), not "0 file(s)" and exit 0.

    A path that does not exist yet stays a directory to come (see ``split_target``).
    """
    from pathlib import Path

    from a2a_lab.io import SourceError, resolve_source

    if not Path(logdir).expanduser().is_dir():
        return
    try:
        resolve_source(logdir)
    except SourceError as exc:
        raise CliError(f"nothing to ingest: {exc}") from None
