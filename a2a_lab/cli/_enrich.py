"""``a2a-lab enrich SOURCE``: the reference's enriched event objects, one JSON per line.

Also the shared plumbing of the commands that enrich a log first (``work-sessions``,
``events``): the main-agent options and "load, then enrich".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from a2a_lab.cli._common import (
    CliError,
    Commands,
    add_command,
    default_zone,
    read_input,
    split_multi,
)

if TYPE_CHECKING:  # Polars loads when a command runs, not for --help
    import polars as pl

#: Rows serialised per batch, so that a large log never holds all its JSON text at once.
_BATCH = 50_000


def add_main_agent_options(parser: argparse.ArgumentParser) -> None:
    """``--main-agents a,b`` or ``--openclaw-config F`` (rules §1), mutually exclusive."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--main-agents",
        metavar="A,B",
        action="append",
        help="the main agents (comma-separated or repeated); default: main, ruda",
    )
    group.add_argument(
        "--openclaw-config",
        metavar="F",
        help="read the main agents from this openclaw.json (plus main and ruda, as the dashboard)",
    )


def main_agents(openclaw_config: str | None, given: list[str] | None) -> frozenset[str] | None:
    """The main-agent set ``--openclaw-config`` / ``--main-agents`` name (None: the rule
    set's default)."""
    if openclaw_config is None and given is None:
        return None  # without importing enrichment: a store's sessions table needs none
    from a2a_lab.enrich import resolve_main_agents

    if openclaw_config is not None:
        agents = read_input(
            lambda: resolve_main_agents(Path(openclaw_config)),
            unreadable=f"--openclaw-config {openclaw_config}",
            invalid="--openclaw-config",
        )
        _check_openclaw_config(openclaw_config)
        return agents
    if given is not None:
        ids = resolve_main_agents(split_multi(given) or [])
        if not ids:
            raise CliError("--main-agents needs at least one agent id")
        return ids
    return None


def _check_openclaw_config(path: str) -> None:
    """An ``openclaw.json`` that names no agent is an error: without an ``agents`` object
    the reference falls back to ``{main, ruda}`` silently, which a file the user names on
    the command line must not do."""
    from a2a_lab.reference.strict_json import loads

    with open(path, "rb") as fh:
        parsed = loads(fh.read().decode("utf-8", errors="replace"))
    agents = parsed.get("agents") if isinstance(parsed, dict) else None
    if not isinstance(agents, dict):
        raise CliError(
            f'--openclaw-config {path}: no "agents" object (expected '
            '{"agents": {"list": [{"id": ...}]}})'
        )


def load_enriched(
    source: str, tz: str, agents: frozenset[str] | None
) -> tuple[pl.DataFrame, list[str]]:
    """Load ``source`` and enrich it (``agents``: the main agents, :func:`main_agents`);
    returns the frame and the files in reading order."""
    from a2a_lab.cli._source import load_source
    from a2a_lab.enrich import enrich

    loaded = load_source(source, tz=tz)
    return enrich(loaded.events, main_agents=agents), list(loaded.report.files)


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "enrich",
        run,
        help="write every event enriched as the Task-Monitor dashboard does (one JSON object per line)",
        description=(
            "Write each event of SOURCE, in reading order, as the dashboard's enriched event "
            "object (rules §6) plus its source 'file' and 'line'."
        ),
        epilog="example:\n  a2a-lab enrich ~/.openclaw/logs --main-agents main,ruda -o enriched.ndjson",
    )
    p.add_argument(
        "-o", "--output", metavar="OUT.ndjson", help="write here instead of standard output"
    )
    add_main_agent_options(p)


def _write(frame: pl.DataFrame, out: TextIO) -> None:
    from a2a_lab.reference.jsstr import js_well_formed_json
    from a2a_lab.sessions import event_objects

    for batch in frame.iter_slices(_BATCH):
        objects = event_objects(batch)
        text = []
        for obj, (file, line) in zip(
            objects, batch.select("file", "line").iter_rows(), strict=True
        ):
            obj["file"] = file
            obj["line"] = line
            text.append(
                js_well_formed_json(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
            )
        out.write("\n".join(text) + "\n")


def run(args: argparse.Namespace) -> int:
    import polars as pl

    agents = main_agents(args.openclaw_config, args.main_agents)
    frame, files = load_enriched(args.source, args.tz or default_zone(), agents)
    rank = {name: i for i, name in enumerate(files)}
    frame = frame.sort(pl.col("file").replace_strict(rank, return_dtype=pl.Int64), "line")
    if args.output is None:
        _write(frame, sys.stdout)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as out:
            _write(frame, out)
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    return 0
