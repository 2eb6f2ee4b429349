"""``a2a-lab work-sessions SOURCE``: the body of the dashboard's ``GET /api/work-sessions``."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from a2a_lab.cli._common import (
    CliError,
    Commands,
    add_command,
    add_output_option,
    add_window_options,
    check_output,
    default_zone,
    in_window,
    one_line,
    read_input,
    write_output,
)
from a2a_lab.cli._enrich import add_main_agent_options, main_agents
from a2a_lab.cli._format import add_format_option, print_frame
from a2a_lab.cli._page import print_work_sessions

if TYPE_CHECKING:  # Polars loads when a command runs, not for --help
    import polars as pl


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "work-sessions",
        run,
        help="list the dashboard's work sessions (--format json: GET /api/work-sessions)",
        description=(
            "Build the Task-Monitor work sessions of SOURCE and print one line per session "
            "of the page (--format json: the JSON body of GET /api/work-sessions, byte for "
            "byte; csv: the table as CSV). --role, --type and --status take repeated options and "
            "comma-separated values; invalid roles and statuses are dropped, as the dashboard does."
        ),
        epilog="example:\n  a2a-lab work-sessions ~/.openclaw/logs --status ACTIVE,QUIET --now 2026-02-19T09:00Z\n"
        "  a2a-lab work-sessions ~/.openclaw/logs --format json > work-sessions.json\n"
        "  a2a-lab work-sessions ~/.openclaw/logs --since 2026-02-18 --until 2026-02-19 -o sessions.csv",
    )
    # the dashboard's query parameters: the repeated ones, then the single ones
    for flag, metavar, help in (
        ("--role", "R", "keep events of this role (before building)"),
        ("--type", "T", "keep events of this type (before building)"),
        ("--status", "S", "keep sessions: ACTIVE, QUIET, ARCHIVED"),
    ):
        p.add_argument(flag, action="append", metavar=metavar, help=help)
    for flag, metavar, help in (
        ("--view-category", "C", "keep sessions of this category ('all': every one)"),
        ("--sub-tag", "X", "keep sessions with this sub-tag (case-insensitive)"),
        ("--limit", "N", "at most this many sessions (default 100; 0 means 100)"),
        ("--overrides", "F", "category overrides file {workSessionId: {collabCategory, ...}}"),
    ):
        p.add_argument(flag, metavar=metavar, help=help)
    add_window_options(p)
    add_main_agent_options(p)
    add_output_option(p, "matched sessions (one row each, not only the --limit page)")
    add_format_option(p, json_help="the API's JSON body", json_alias=True)


#: The columns of the readable table (every column: ``-o FILE``).
TABLE_COLUMNS = (
    "status",
    "work_session_id",
    "collab_category",
    "start_time",
    "last_time",
    "duration_s",
    "thread_count",
    "event_count",
)


def print_summary(result: Any, fmt: str, limit: str | None, tz: str) -> None:
    """The page's sessions (the API's ``--limit`` page) as a table or CSV; counts on stderr."""
    import polars as pl

    from a2a_lab.sessions import limit_count

    page = limit_count(limit)
    counts = result.sessions.group_by("status").len().sort("status").rows()
    sessions = result.sessions if page is None else result.sessions.head(page)
    shown = sessions.select(TABLE_COLUMNS).with_columns(
        pl.col("start_time", "last_time").dt.convert_time_zone(tz),
        pl.col("duration_s").round(0),
    )
    print_frame(shown, fmt)
    if fmt == "table":
        by_status = ", ".join(f"{n:,} {s}" for s, n in counts)
        print(
            f"{shown.height:,} of {result.sessions.height:,} work sessions shown "
            f"({by_status or 'none'}); the API body: --format json",
            file=sys.stderr,
        )


def number_option(name: str, value: str) -> float:
    """A numeric option value as JavaScript's ``Number()`` reads it; anything else is an error."""
    from a2a_lab.sessions import js_number

    number = js_number(value)
    if math.isnan(number):
        raise CliError(f"{name} must be a number, not {value!r}")
    return number


def limit_option(value: str) -> float:
    """``--limit N``: a number >= 0 (0 means the default page).

    The HTTP API keeps the reference's reading of a negative ``limit`` (the byte-equal
    handler bodies of the peer-api conformance cases); on the command line a negative
    count is a mistake, refused with one line.
    """
    number = number_option("--limit", value)
    if number < 0:
        raise CliError(f"--limit must be a number >= 0, not {value!r}")
    return number


#: The ``data`` fields work sessions read (rules §7-§8); the events of the output are written
#: from their original lines, re-read from the files.
SESSION_DATA_FIELDS = ("workSessionId", "conversationId", "status")

#: The ``data`` fields :func:`a2a_lab.enrich` reads with the reference rules (agents,
#: session keys and types, role, category; the haystack's fields are added from the rule
#: set). ``tests/io/test_load_data_fields.py`` checks the list against enrich's query plan.
ENRICH_DATA_FIELDS = (
    "fromAgent",
    "senderAgentId",
    "toAgent",
    "targetAgentId",
    "parentConversationId",
    "depth",
    "hop",
    "sourceSessionKey",
    "requesterSessionKey",
    "sessionKey",
    "targetSessionKey",
    "fromSessionType",
    "toSessionType",
    "eventRole",
    "collabCategory",
    "collabSubTags",
    "categoryVersion",
)


def loaded_data_fields() -> tuple[str, ...]:
    """The ``data`` fields ``work-sessions`` loads from a log: what enrich and the sessions
    read (issue 12: the others, about a third of the frame, are never kept)."""
    from a2a_lab.reference.rules import TASK_MONITOR_V1

    return (*ENRICH_DATA_FIELDS, *TASK_MONITOR_V1.haystack_fields, *SESSION_DATA_FIELDS)


def session_columns(enriched: pl.DataFrame) -> pl.DataFrame:
    """``enriched`` with ``data`` narrowed to :data:`SESSION_DATA_FIELDS` (issue 12: memory).

    The other ``data`` fields (messages, previews, keys: most of the frame's memory) are
    released before the sessions are built. The events in the output come from the
    original lines, re-read from the files (the frame has no ``raw``); only for a line
    that can no longer be read (a file changed since the load) would the narrowed ``data``
    be written instead.
    """
    import polars as pl

    data = pl.col("data")
    narrow = pl.struct([data.struct.field(f) for f in SESSION_DATA_FIELDS])
    return enriched.with_columns(pl.when(data.is_not_null()).then(narrow).alias("data"))


def materialized_source(source: str, agents: frozenset[str] | None, tz: str) -> pl.LazyFrame | None:
    """The materialised enriched frame of a store ``source`` (None: a log, or not current)."""
    from a2a_lab.io import is_store
    from a2a_lab.materialize import scan_materialized

    return scan_materialized(source, main_agents=agents, tz=tz) if is_store(source) else None


def _check_overrides(path: str, kept: dict[str, Any]) -> None:
    """A named overrides file whose entries are all unusable is an error, some a warning.

    The reference's reader skips an entry whose ``collabCategory`` is no known category, as
    :func:`~a2a_lab.sessions.load_overrides` does; a file the user names on the command line
    that changes nothing is a mistake to report, not to ignore.
    """
    import json

    from a2a_lab.reference.strict_json import loads

    with open(path, "rb") as fh:
        parsed = loads(fh.read())
    skipped = [str(k) for k in parsed if str(k) not in kept]
    if not skipped:
        return
    shown = ", ".join(json.dumps(k, ensure_ascii=False) for k in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    what = (
        f"overrides file {path}: {len(skipped)} of {len(parsed)} entries have no known "
        f"collabCategory ({shown}{more}); expected {{workSessionId: {{collabCategory, ...}}}}"
    )
    if not kept:
        raise CliError(what)
    sys.stderr.write(f"a2a-lab: warning: {one_line(what)} (ignored)\n")


def run(args: argparse.Namespace) -> int:
    import polars as pl

    from a2a_lab.sessions import SessionQuery, load_overrides, work_sessions
    from a2a_lab.time import now_ms

    now = now_ms(args.now)
    if args.limit is not None:
        limit_option(args.limit)
    check_output(args.output)
    overrides = None
    if args.overrides is not None:
        overrides = read_input(
            lambda: load_overrides(args.overrides),
            unreadable=f"overrides file {args.overrides}",
            invalid=f"overrides file {args.overrides}",
        )
        _check_overrides(args.overrides, overrides)
    agents = main_agents(args.openclaw_config, args.main_agents)
    tz = args.tz or default_zone()
    filtered = bool(args.role or args.type) or args.since is not None or args.until is not None
    stored = None if filtered else stored_sessions(args.source, agents, tz)
    if stored is not None:
        snap, enriched = stored
        from a2a_lab.materialize import stored_work_sessions

        result = stored_work_sessions(
            snap,
            enriched,
            SessionQuery(
                status=args.status,
                view_category=args.view_category,
                sub_tag=args.sub_tag,
                limit=args.limit,
            ),
            now=now,
            overrides=overrides,
            threads=args.format == "json" and args.output is None,
        )
        return _print_result(result, args.output, args.format, args.limit, tz)
    # imported only here: the sessions table above needs neither the loader nor enrichment
    from a2a_lab.cli._source import lean_engine, scan_source
    from a2a_lab.enrich import enrich

    # a store is scanned lazily: only the columns and data fields work sessions select
    # are read, collected by the streaming engine (the page's event objects re-read their
    # lines from the log files, as for a loaded directory)
    frame: pl.DataFrame | pl.LazyFrame
    # a store whose enriched columns were materialised for this rule set and these main
    # agents (a2a_lab.materialize, made at ingest) is read as it is: nothing to enrich
    materialized = materialized_source(args.source, agents, tz)
    events = (
        scan_source(args.source, tz=tz, data_fields=loaded_data_fields())
        if materialized is None
        else materialized
    )
    if materialized is not None:
        frame = in_window(materialized, args.since, args.until)
    elif isinstance(events, pl.LazyFrame):
        frame = in_window(enrich(events, main_agents=agents), args.since, args.until)
    else:
        # rebind: the full frame must not outlive the narrowing (it would keep every field)
        frame = in_window(
            session_columns(enrich(events, main_agents=agents)), args.since, args.until
        )
    # nor must the loaded frame: it holds every ``data`` field (messages, previews, keys)
    # while the sessions are built
    del events
    with lean_engine():
        query = SessionQuery(
            roles=args.role,
            types=args.type,
            status=args.status,
            view_category=args.view_category,
            sub_tag=args.sub_tag,
            limit=args.limit,
        )
        result = work_sessions(frame, query, now=now, overrides=overrides)
        return _print_result(result, args.output, args.format, args.limit, tz)


def stored_sessions(source: str, agents: frozenset[str] | None, tz: str) -> Any:
    """The store and its enriched frame when ``source`` is a store (None: build the
    sessions from the events).

    Its sessions table (``a2a_lab.materialize``, made at ingest) holds each work session
    built from all its events: a role, type or time filter changes which events make a
    session, so the caller asks only for a query without them.
    """
    from a2a_lab.io import is_store

    if not is_store(source):
        return None
    from a2a_lab.materialize import sessions_query_source

    return sessions_query_source(source, main_agents=agents, tz=tz)


def _print_result(result: Any, output: str | None, fmt: str, limit: Any, tz: str) -> int:
    """Write the sessions (``-o``), the API body (``--format json``) or the table."""
    if output is not None:
        write_output(result.sessions, output, tz)
        print(f"{result.sessions.height} work sessions written to {output}", file=sys.stderr)
        return 0
    if fmt == "json":
        print_work_sessions(result)
    else:
        print_summary(result, fmt, limit, tz)
    return 0
