"""``a2a-lab conversations`` and ``a2a-lab graph``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from a2a_lab.cli._common import (
    CliError,
    Commands,
    add_command,
    add_window_options,
    check_output,
    default_zone,
    in_window,
    write_output,
)
from a2a_lab.cli._format import add_format_option, print_frame

#: The columns of the readable table (every column: ``--format json`` or ``-o``).
TABLE_COLUMNS = (
    "start_time",
    "from_agent",
    "to_agent",
    "outcome",
    "first_reply_s",
    "turns",
    "duration_s",
    "ambiguous",
    "conversation_id",
)

if TYPE_CHECKING:
    import polars as pl

#: How ``conversations --json`` writes the frame's UTC ``*_time`` columns.
_JSON_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S%.3fZ"


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "conversations",
        run_conversations,
        help="one row per A2A exchange: who asked whom, how fast, how it ended",
        description=(
            "Reconstruct the A2A exchanges of SOURCE, one row each: the pair, the times, the "
            "first reply, the turns and the outcome. Print a table, JSON, or write a file."
        ),
        epilog="example:\n  a2a-lab conversations ~/.openclaw/logs -o conversations.csv",
    )
    out = p.add_mutually_exclusive_group()
    add_format_option(
        out, json_help="every column as a JSON array of objects (UTC times)", json_alias=True
    )
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write FILE.csv, .parquet, .json or .ndjson (every column; times as ISO 8601 with offset, in --tz)",
    )
    add_window_options(p)

    g = add_command(
        sub,
        "graph",
        run_graph,
        help="write the agent interaction graph as GraphML or node-link JSON",
        description=(
            "Build the directed agent interaction graph of SOURCE (nodes: agents; edges: who "
            "messaged whom, with counts and reply times) and write it to FILE."
        ),
        epilog="example:\n  a2a-lab graph ~/.openclaw/logs -o agents.graphml",
    )
    g.add_argument(
        "-o", "--output", metavar="FILE", required=True, help="FILE.graphml or FILE.json"
    )
    add_window_options(g)


#: Rows of the ``--format json`` output encoded at a time.
_JSON_ROWS = 5_000


#: The options of Polars' allocator (jemalloc) for ``conversations`` (read once, when
#: Polars loads; Polars puts its own defaults first, and later options win). Polars returns
#: freed pages to the system half a second after they are freed (``dirty_decay_ms:500``),
#: and the decode and the bucket-by-bucket matching free and allocate hundreds of MB over
#: and over: the pages were faulted in afresh, 6-7 CPU s of system time of about 35 on
#: the 860,000-event log (load ~20). Freed pages are kept instead, in two arenas (not one
#: per thread group: each arena keeps its own), which bounds what is kept whatever the
#: core count; the resident peak this costs is measured in BENCHMARKS.md.
ALLOCATOR_OPTIONS = "background_thread:true,narenas:2,dirty_decay_ms:-1,muzzy_decay_ms:-1"


def keep_freed_pages() -> bool:
    """Set :data:`ALLOCATOR_OPTIONS` for Polars' allocator, unless Polars is already loaded
    (a notebook, the tests: nothing changes) or the user set the options
    (``_RJEM_MALLOC_CONF``). Returns whether they were set."""
    if "polars" in sys.modules or "_RJEM_MALLOC_CONF" in os.environ:
        return False
    os.environ["_RJEM_MALLOC_CONF"] = ALLOCATOR_OPTIONS
    return True


def run_conversations(args: argparse.Namespace) -> int:
    keep_freed_pages()
    import polars as pl

    from a2a_lab.io import is_store

    check_output(args.output)
    tz = args.tz or default_zone()
    # a store whose conversations were materialised (a2a_lab.materialize, at ingest) gives
    # them as they are, when the whole log is asked for: a window changes the matching
    conv = (
        materialized_conversations(args.source, tz)
        if args.since is None and args.until is None
        else None
    )
    if conv is None:
        # imported here: the table above needs neither the loader nor the matcher
        from a2a_lab.analysis.conversations import conversations
        from a2a_lab.cli._source import lean_engine, log_conversations_of, scan_source
    if conv is None and not is_store(args.source):
        # a log is read once and matched a bucket of whole conversations at a time
        conv = log_conversations_of(args.source, tz, args.since, args.until)
    if conv is None:
        # a store is scanned lazily (no raw), collected by the streaming engine
        with lean_engine():
            conv = conversations(in_window(scan_source(args.source, tz=tz), args.since, args.until))
            if isinstance(conv, pl.LazyFrame):
                conv = conv.collect()
    if args.output is not None:
        write_output(conv, args.output, tz)
        print(f"{conv.height} conversations written to {args.output}", file=sys.stderr)
        return 0
    if args.format == "json":
        import polars.selectors as cs

        from a2a_lab.cli._json_rows import json_rows
        from a2a_lab.time import format_time

        utc = conv.with_columns(cs.datetime().dt.convert_time_zone("UTC"))
        utc = utc.with_columns(
            format_time(pl.col(c), _JSON_TIME_FORMAT) for c in utc.select(cs.datetime()).columns
        )
        # json.dumps's text of the rows, encoded by Polars 5,000 rows at a time (less memory
        # to map than 20,000: 1.6-1.7 CPU s against 1.8-1.9 at 860 k)
        sys.stdout.writelines(json_rows(utc, _JSON_ROWS))
        sys.stdout.write("\n")
    else:
        shown = conv.select(TABLE_COLUMNS).with_columns(
            pl.col("start_time").dt.convert_time_zone(tz),
            pl.col("first_reply_s", "duration_s").round(1),
        )
        print_frame(shown, args.format)
        if args.format == "table":
            print(
                f"{conv.height:,} exchanges; every column: --format json or -o FILE.csv",
                file=sys.stderr,
            )
    return 0


def materialized_conversations(source: str, tz: str) -> pl.DataFrame | None:
    """The materialised conversations of a store ``source`` (None: a log, or not current)."""
    from a2a_lab.io import is_store
    from a2a_lab.materialize import scan_conversations

    return scan_conversations(source, tz=tz) if is_store(source) else None


def run_graph(args: argparse.Namespace) -> int:
    from a2a_lab.analysis.graph import interaction_graph, write_graph
    from a2a_lab.cli._source import lean_engine, scan_source

    out = Path(args.output)
    if out.suffix not in (".graphml", ".json"):
        raise CliError(f"unknown graph format {out.suffix or out.name!r}: use .graphml or .json")
    with lean_engine():
        g = interaction_graph(
            in_window(
                scan_source(args.source, tz=args.tz or default_zone()), args.since, args.until
            )
        )
    try:
        write_graph(g, out)
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(
        f"{g.number_of_nodes()} agents, {g.number_of_edges()} edges written to {out}",
        file=sys.stderr,
    )
    return 0
