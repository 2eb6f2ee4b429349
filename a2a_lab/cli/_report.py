"""``a2a-lab report SOURCE -o report.html``: one offline HTML file of a log (issue 15)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from a2a_lab.cli._common import CliError, Commands, add_command, default_zone

#: The file names ``-o`` accepts (compared case-insensitively).
HTML_SUFFIXES = (".html", ".htm")


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "report",
        run,
        help="write a shareable, offline HTML report of a log",
        description=(
            "Write one self-contained HTML file (no network needed to open it): overview, work "
            "sessions with search and filters, conversations, interaction graph, log health and, "
            "with --sim, a comparison with a simulator run."
        ),
        epilog="example:\n  a2a-lab report ~/.openclaw/logs -o report.html --since 2026-02-18 --tz Asia/Seoul",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the HTML file to write (.html or .htm; any other suffix is refused)",
    )
    p.add_argument(
        "--since",
        metavar="TIME",
        help="keep events at or after TIME (ISO time or epoch ms; naive = UTC)",
    )
    p.add_argument(
        "--until",
        metavar="TIME",
        help="keep events before TIME (ISO time or epoch ms; naive = UTC)",
    )
    p.add_argument("--title", metavar="TEXT", help="the page title")
    p.add_argument(
        "--sim", metavar="CONFIG", help="a SimConfig JSON file: adds the twin comparison"
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the simulator run (default 1)")
    p.add_argument(
        "--max-sessions", type=int, default=30, metavar="N", help="work sessions shown (default 30)"
    )
    p.add_argument(
        "--max-messages",
        type=int,
        default=200,
        metavar="N",
        help="messages shown per work session (default 200)",
    )
    p.add_argument(
        "--discord-users",
        metavar="FILE",
        help='a JSON object {"<discord user id>": "<name>"} to resolve <@id> mentions',
    )


def _discord_users(path: str | None) -> dict[str, str] | None:
    """The ``--discord-users`` mapping; a file that is not a JSON object of strings is an error."""
    import json

    if path is None:
        return None
    try:
        users = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CliError(f"--discord-users: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CliError(f"--discord-users: {path} is not JSON: {exc}") from None
    if not isinstance(users, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in users.items()
    ):
        raise CliError(
            f"--discord-users: {path} must hold a JSON object of strings (user id to name)"
        )
    return users


def _instant(value: str | None) -> str | float | None:
    """A CLI time: epoch ms when it is a number, else the ISO text (checked by the report)."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def run(args: argparse.Namespace) -> int:
    # altair loads jsonschema, whose optional IRI format checker (rfc3987_syntax) builds a
    # grammar when imported: 0.77 CPU s of this command's 15 s goal, for a check the report
    # never makes (its charts are validated without formats). Not loaded in this process.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    import pydantic

    from a2a_lab.io import SourceError, StoreError, file_label
    from a2a_lab.time import instant_ms, now_ms
    from a2a_lab.views.report import ReportOptions, report

    out = Path(args.output)
    tz = args.tz or default_zone()
    try:  # the options are checked before a long load
        instant_ms(_instant(args.since), "--since")
        instant_ms(_instant(args.until), "--until")
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if out.suffix.lower() not in HTML_SUFFIXES:
        # the report is one HTML file: a .pdf or .png name would get HTML under a false name
        raise CliError(
            f"--output: cannot write {out.name!r}: the report is HTML, name it *.html "
            "(print it to PDF from a browser)"
        )
    if not out.parent.is_dir():
        raise CliError(f"--output: directory {str(out.parent)!r} does not exist")
    if args.sim is not None and not Path(args.sim).is_file():
        raise CliError(f"--sim: no such file {args.sim!r}")
    users = _discord_users(args.discord_users)
    options = ReportOptions(
        since=_instant(args.since),
        until=_instant(args.until),
        title=file_label(args.title or f"A2A log report: {args.source}"),
        sim=args.sim,
        seed=args.seed,
        max_sessions=args.max_sessions,
        max_messages=args.max_messages,
        discord_users=users,
    )
    # a history store is read from the tables made at ingest; a log once, a bucket at a time
    try:
        result = report(args.source, options, tz=tz, now=now_ms(args.now))
    except (SourceError, StoreError) as exc:
        raise CliError(str(exc)) from None
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "(root)"
        raise CliError(f"--sim {args.sim}: {where}: {first['msg']}") from None
    except ValueError as exc:
        raise CliError(" ".join(str(exc).split())) from None
    except OSError as exc:
        raise CliError(
            f"{exc.filename or args.sim or args.source}: {exc.strerror or exc}"
        ) from None
    try:
        result.write(out)
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    f = result.figures
    print(
        f"{out}: {len(result.html.encode('utf-8')):,} bytes · {f['events']:,} events, {f['sessions']:,} work sessions, "
        f"{f['exchanges']:,} exchanges, {f['findings']:,} findings",
        file=sys.stderr,
    )
    return 0
