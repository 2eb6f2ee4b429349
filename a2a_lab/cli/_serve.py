"""``a2a-lab serve SOURCE``: the dashboard's read-only HTTP API (``/api/work-sessions``, ``/api/events``)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from a2a_lab.cli._common import (
    CliError,
    Commands,
    add_command,
    default_zone,
    int_option,
    read_input,
)
from a2a_lab.cli._enrich import add_main_agent_options, main_agents

if TYPE_CHECKING:
    from a2a_lab.serve import LiveEvents


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "serve",
        run,
        help="serve GET /api/work-sessions and /api/events over HTTP (read-only)",
        description=(
            "Serve the Task-Monitor dashboard's GET /api/work-sessions and GET /api/events "
            "for SOURCE, with the reference's query parameters and byte-identical JSON "
            "bodies. A history store is answered from its materialised tables, and each "
            "refresh ingests the new lines of its log directory into it; a log directory is "
            "followed into a store the same way (--store, default a temporary one removed "
            "at exit); a single log file is followed in memory. "
            "Binds 127.0.0.1 unless --host says otherwise. An unknown or repeated parameter "
            "gets a 400 JSON error."
        ),
        now_help=(
            "a fixed clock for the sessions' status: an ISO date/time or epoch ms, naive = UTC "
            "(default: the wall clock at each request, as the reference dashboard)"
        ),
        epilog=(
            "example:\n  a2a-lab serve ~/.openclaw/logs --port 8787\n"
            "  curl 'http://127.0.0.1:8787/api/work-sessions?status=ACTIVE,QUIET&limit=20'"
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int_option(0, 65535), default=8787, help="TCP port (default 8787; 0: any)"
    )
    p.add_argument(
        "--store",
        metavar="DIR",
        help="follow a log directory SOURCE into this history store (made by a first "
        "ingest, kept and reused by the next start; default: a temporary store)",
    )
    p.add_argument(
        "--overrides",
        metavar="F",
        help="category overrides file {workSessionId: {collabCategory, ...}}, re-read on change",
    )
    p.add_argument(
        "--refresh",
        type=float,
        default=0.25,
        metavar="S",
        help="seconds between two reads of the live log (default 0.25; each reads only "
        "the bytes appended since the last)",
    )
    p.add_argument(
        "--max-stale",
        type=float,
        default=10.0,
        metavar="S",
        help="serve a work-session body made at most S seconds ago while the new one is "
        "made after the log changes (default 10; 0: clients wait for a current body)",
    )
    add_main_agent_options(p)


def run(args: argparse.Namespace) -> int:
    from a2a_lab.io import SourceError, StoreError
    from a2a_lab.serve import LiveEvents
    from a2a_lab.sessions import load_overrides

    if not args.refresh > 0:
        raise CliError(f"--refresh must be a positive number of seconds, not {args.refresh}")
    if not args.max_stale >= 0 or args.max_stale == float("inf"):
        raise CliError(f"--max-stale must be a number of seconds >= 0, not {args.max_stale}")
    overrides = None
    if args.overrides is not None:
        overrides = Path(args.overrides)
        read_input(
            lambda: load_overrides(overrides),
            unreadable=f"overrides file {args.overrides}",
            invalid=f"overrides file {args.overrides}",
        )
    source = Path(args.source).expanduser()
    if not source.exists():
        raise CliError(f"no such log or store: {args.source}")
    with contextlib.ExitStack() as stack:
        store = _store_of(args, source, stack)
        try:
            live = LiveEvents(
                source,
                store=store,
                tz=args.tz or default_zone(),
                main_agents=main_agents(args.openclaw_config, args.main_agents),
                in_child=True,
            )
        except (SourceError, StoreError) as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:
            raise CliError(f"cannot read {args.source}: {exc.strerror or exc}") from None
        code = _serve(args, live, overrides, source)
    return code


def _store_of(args: argparse.Namespace, source: Path, stack: contextlib.ExitStack) -> Path | None:
    """The store a log directory is followed into (``--store``, else a temporary one,
    removed when ``stack`` closes); None for a store SOURCE or a single log file."""
    from a2a_lab.io import is_store

    if args.store is not None:
        return Path(args.store).expanduser()
    if is_store(source) or not source.is_dir():
        return None
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="a2a-lab-serve-"))
    return Path(folder) / "store"


def _serve(args: argparse.Namespace, live: LiveEvents, overrides: Path | None, source: Path) -> int:
    import uvicorn

    from a2a_lab.serve import ServeConfig, create_app

    app = create_app(
        ServeConfig(
            live=live,
            now_ms=args.now,
            overrides=overrides,
            refresh_s=args.refresh,
            max_stale_s=args.max_stale,
        )
    )
    # the socket is bound here, so a port in use is one CLI error line like any other
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    try:
        sock = socket.create_server((args.host, args.port), family=family)
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    host, port = sock.getsockname()[:2]
    events = live.snapshot.event_count
    print(
        f"a2a-lab serve: {events} events from {source}; http://{host}:{port}/api/work-sessions",
        file=sys.stderr,
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    # uvicorn stops gracefully on SIGTERM, then raises it again with the handler it found:
    # this one ends the process through its cleanup (the worker, a temporary store)
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.run(sockets=[sock])
    finally:
        live.close()
    return 0


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)
