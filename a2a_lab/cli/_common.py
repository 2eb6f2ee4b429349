"""Shared CLI plumbing: one-line errors, source resolution, JSON output."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar

if TYPE_CHECKING:
    from a2a_lab.time import Zone

T = TypeVar("T")


class CliError(Exception):
    """An error the user can fix; reported as one line with exit status 2."""


def one_line(text: str) -> str:
    """``text`` made safe for one stderr line.

    Control characters (a newline in a path, ``\\u0001`` in an agent id) are escaped as
    ``repr`` would, and characters the terminal cannot encode (a non-UTF-8 file name
    arrives as lone surrogates) become backslash escapes, so the message is always exactly
    one printable line.
    """
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out).encode("utf-8", "backslashreplace").decode("utf-8")


def report_error(prog: str, message: str) -> None:
    """Write ``prog: error: message`` as one line on stderr."""
    sys.stderr.write(f"{one_line(prog)}: error: {one_line(message)}\n")
    sys.stderr.flush()


class OneLineArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is ONE line on stderr and exit status 2.

    Every error reads ``a2a-lab: error: ...``, a sub-command's usage errors too (named
    after the prefix: ``a2a-lab: error: sweep: argument --replications: ...``).
    """

    def error(self, message: str) -> NoReturn:
        program, _, command = self.prog.partition(" ")
        report_error(program, f"{command}: {message}" if command else message)
        raise SystemExit(2)


#: The sub-command table every command module's ``register`` adds its parsers to.
Commands: TypeAlias = "argparse._SubParsersAction[OneLineArgumentParser]"


@contextlib.contextmanager
def errors_as_cli(*expected: type[Exception], os_error: str) -> Iterator[None]:
    """Run the block; an exception of ``expected`` (a library's error a user can fix) becomes
    a :class:`CliError` of its text, any other OSError ``"{os_error}: {reason}"``."""
    try:
        yield
    except expected as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"{os_error}: {exc.strerror or exc}") from None


def print_json(obj: Any) -> None:
    """Write one JSON document to stdout (UTF-8, no ASCII escaping)."""
    from a2a_lab.reference.jsstr import js_well_formed_json

    sys.stdout.write(js_well_formed_json(json.dumps(obj, ensure_ascii=False)))
    sys.stdout.write("\n")


def split_multi(values: list[str] | None) -> list[str] | None:
    """Repeated options and comma-separated values, as the reference's query parser does."""
    if values is None:
        return None
    out: list[str] = []
    for v in values:
        out.extend(v.split(","))
    return out


def int_option(minimum: int = 0, maximum: int = 10**9) -> Callable[[str], int]:
    """An argparse ``type=`` for an integer in ``[minimum, maximum]`` (decimal digits only)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, not {text!r}") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{value} is outside [{minimum}, {maximum}]")
        return value

    return parse


def float_option(
    minimum: float = 0.0, maximum: float = 1e9, *, open_min: bool = True
) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite number above ``minimum`` (NaN and inf refused)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
        low_ok = value > minimum if open_min else value >= minimum
        if not math.isfinite(value) or not low_ok or value > maximum:
            bound = "(" if open_min else "["
            raise argparse.ArgumentTypeError(
                f"{text!r} is outside {bound}{minimum:g}, {maximum:g}]"
            )
        return value

    return parse


def _argument_type(check: Callable[..., T], value: Any, name: str) -> T:
    """``check(value, name=name)``, its ``ValueError`` an argparse type error without the name."""
    try:
        return check(value, name=name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{name}: ")) from None


def add_number_option(
    parser: Any, flag: str, parse: Callable[[str], float], default: float, help: str, **kw: Any
) -> None:
    """``flag N``: a number read by ``parse`` (:func:`int_option`, :func:`float_option`); its
    help ends with the default, so the two cannot disagree."""
    shown = default if isinstance(default, int) else f"{default:g}"
    parser.add_argument(flag, type=parse, default=default, help=f"{help} (default {shown})", **kw)


def add_seed_option(parser: Any, of: str) -> None:
    """``--seed``: the seed of ``of`` (``"the run's"``), any 63-bit integer; default 0."""
    add_number_option(parser, "--seed", int_option(0, 2**63 - 1), 0, f"{of} seed")


def add_output_file(parser: Any, metavar: str, help: str, *, required: bool = False) -> None:
    """``-o``/``--output``: the file a command writes (one spelling on every command)."""
    parser.add_argument("-o", "--output", required=required, metavar=metavar, help=help)


def instant_option(text: str) -> float:
    """An argparse ``type=`` for ``--since``/``--until``/``--now``: ISO date or epoch ms, naive = UTC."""
    from a2a_lab.time import to_epoch_ms

    value: str | float = text
    with contextlib.suppress(ValueError):
        value = float(text)
    return _argument_type(to_epoch_ms, value, "time")


def add_window_options(parser: argparse.ArgumentParser, what: str = "only events") -> None:
    """``--since`` / ``--until``: an inclusive time window (ISO date/time or epoch ms, naive = UTC)."""
    parser.add_argument(
        "--since",
        type=instant_option,
        metavar="TIME",
        help=f"{what} at or after TIME (ISO date/time or epoch ms; naive = UTC)",
    )
    parser.add_argument(
        "--until", type=instant_option, metavar="TIME", help=f"{what} at or before TIME"
    )


def in_window(events: Any, since: float | None, until: float | None) -> Any:
    """The events of ``--since`` … ``--until`` (epoch ms; both inclusive, on ``event_ms``)."""
    import polars as pl

    if since is not None and until is not None and since > until:
        raise CliError("--since is after --until")
    if since is not None:
        events = events.filter(pl.col("event_ms") >= since)
    if until is not None:
        events = events.filter(pl.col("event_ms") <= until)
    return events


#: What ``--now`` means on every command (one text, so the meaning cannot drift).
NOW_HELP = (
    "the clock for session statuses and future-time findings: an ISO date/time or epoch ms, "
    "naive = UTC (default: the wall clock, as the reference dashboard; pin it to reproduce; "
    "--now-ms is its deprecated old spelling)"
)
#: What ``--tz`` means on every command.
TZ_HELP = (
    "IANA time zone of log timestamps without an offset and of every time shown or "
    "written (default: $A2A_LAB_TZ, else UTC)"
)
# The old spelling --now-ms (scripts and the parity tests use it) stays as a silent alias,
# named deprecated in --help: a warning line would break the one-line error. --timezone,
# the old spelling of --tz, is removed (issue 25: one name per job).


class _Once(argparse.Action):
    """Store an option given once: giving it twice, under any of its spellings, is an error."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        seen = f"_given_{self.dest}"
        if getattr(namespace, seen, None) is not None:
            parser.error(
                f"{option_string}: given twice (also as {getattr(namespace, seen)}); "
                f"{', '.join(o for o in self.option_strings)} are one option"
            )
        setattr(namespace, seen, option_string)
        setattr(namespace, self.dest, values)


def tz_option(text: str) -> Zone:
    """An argparse ``type=`` for ``--tz``: the IANA name resolved, once, into a :class:`Zone`
    (the commands pass it down; nothing checks it again)."""
    from a2a_lab.time import check_tz

    return _argument_type(check_tz, text, "tz")


def add_tz_option(parser: argparse.ArgumentParser) -> None:
    """``--tz ZONE``, resolved when parsed; the default is ``$A2A_LAB_TZ``, else UTC."""
    parser.add_argument("--tz", dest="tz", type=tz_option, metavar="ZONE", help=TZ_HELP)


def add_now_option(parser: argparse.ArgumentParser, help: str = NOW_HELP) -> None:
    """``--now TIME`` (old spelling ``--now-ms``): the clock; the default is the wall clock."""
    parser.add_argument(
        "--now",
        "--now-ms",
        dest="now",
        action=_Once,
        type=instant_option,
        metavar="TIME",
        help=help,
    )


def add_clock_options(parser: argparse.ArgumentParser, now_help: str = NOW_HELP) -> None:
    """``--now`` and ``--tz``, the same on every command (docs/api.md, "One clock")."""
    add_now_option(parser, now_help)
    add_tz_option(parser)


def default_zone() -> Zone:
    """The time zone of a command given no ``--tz``: ``$A2A_LAB_TZ``, else UTC.

    A command's zone is ``args.tz or default_zone()``: ``--tz`` was resolved when parsed
    (:func:`tz_option`) and is passed down as it is.
    """
    from a2a_lab.time import default_tz

    try:
        return default_tz()
    except ValueError as exc:
        raise CliError(str(exc)) from None


def read_input(read: Callable[[], T], *, unreadable: str, invalid: str) -> T:
    """``read()``; an OSError is "cannot read {unreadable}", a ValueError "{invalid}: …"."""
    try:
        return read()
    except OSError as exc:
        raise CliError(f"cannot read {unreadable}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CliError(f"{invalid}: {exc}") from None


def add_output_option(parser: Any, what: str) -> None:
    """``-o FILE``: write the command's frame to .csv, .parquet, .json or .ndjson."""
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=(
            f"write the {what} to FILE.csv, .parquet, .json or .ndjson instead (every column; "
            "times as ISO 8601 with offset, in --tz)"
        ),
    )


def check_output(path: str | None) -> None:
    """Refuse an unknown output suffix before any work is done."""
    from pathlib import Path

    from a2a_lab.export import FORMATS

    if path is None:
        return
    out = Path(path)
    if out.suffix not in FORMATS:
        raise CliError(
            f"unknown output format {out.suffix or out.name!r}: use {', '.join(FORMATS)}"
        )


def printable(frame: Any) -> Any:
    """``frame`` as ``print`` can show it: instants beyond the years ±262142 (JavaScript's
    Date holds them, Polars' display panics on them) as ISO text, the frame otherwise as is."""
    import polars as pl
    import polars.selectors as cs

    from a2a_lab.time import STRFTIME_MAX_MS, format_time

    cols = frame.select(cs.datetime()).columns
    far = [
        c
        for c in cols
        if frame.select(
            (~pl.col(c).dt.epoch("ms").is_between(-STRFTIME_MAX_MS, STRFTIME_MAX_MS)).any()
        ).item()
    ]
    if not far:
        return frame
    return frame.with_columns(format_time(pl.col(c), "%Y-%m-%d %H:%M:%S%.3f") for c in far)


def write_output(frame: Any, path: str, tz: str) -> None:
    """Write ``frame`` with :func:`a2a_lab.write_frame`, its instants shown in ``tz``."""
    import polars.selectors as cs

    from a2a_lab.export import write_frame

    check_output(path)
    frame = frame.with_columns(cs.datetime(time_zone="*").dt.convert_time_zone(tz))
    try:
        write_frame(frame, path)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


#: The help of the SOURCE argument most commands take.
SOURCE_HELP = "an NDJSON file, a glob, or a log directory"


def add_command(
    sub: Commands,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    epilog: str,
    source: bool = True,
    now_help: str = NOW_HELP,
) -> OneLineArgumentParser:
    """A sub-command's parser: its texts (the example kept as written), ``source``, ``run``,
    and ``--now`` / ``--tz``, which every command takes with the same meaning."""
    parser = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if source:
        parser.add_argument("source", help=SOURCE_HELP)
    add_clock_options(parser, now_help)
    parser.set_defaults(func=run)
    return parser
