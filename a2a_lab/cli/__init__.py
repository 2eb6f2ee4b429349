"""The ``a2a-lab`` command line.

Each sub-command lives in its own module exposing ``register(subparsers)``; it sets
``func`` on its parser, a callable ``(args) -> int`` returning the exit status. Errors a
user can fix raise :class:`CliError`: one line on stderr, exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import codecs
import sys
from collections.abc import Sequence

from a2a_lab.cli._common import CliError, OneLineArgumentParser, report_error

__all__ = ["CliError", "main"]


def _build_parser() -> argparse.ArgumentParser:
    from a2a_lab._version import __version__
    from a2a_lab.cli import _commands

    parser = OneLineArgumentParser(
        prog="a2a-lab",
        description="Analyse, check and simulate A2A coordination event logs.",
        epilog="Run 'a2a-lab COMMAND --help' for a command's options and an example.",
    )
    parser.add_argument("--version", action="version", version=f"a2a-lab {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=OneLineArgumentParser
    )
    sub.required = True
    for register in _commands.REGISTRY:
        register(sub)
    return parser


def _bytes_safe(exc: UnicodeError) -> tuple[str | bytes, int]:
    """Encode error handler of the CLI's streams: a path byte that is not UTF-8 (held as a
    lone surrogate U+DC80-U+DCFF) is written back as that byte, as the shell gave it; any
    other lone surrogate as a ``\\uXXXX`` escape. Never a UnicodeEncodeError."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in bad):
        return bytes(ord(c) - 0xDC00 for c in bad), exc.end
    return "".join(f"\\u{ord(c):04x}" for c in bad), exc.end


codecs.register_error("a2a-lab-bytes-safe", _bytes_safe)


def _safe_streams() -> None:
    """Make stdout and stderr write any name the OS gave (see :func:`_bytes_safe`)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="a2a-lab-bytes-safe")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (also used by the console script)."""
    _safe_streams()
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
        return exc.code if isinstance(exc.code, int) else 2
    except CliError as exc:
        report_error("a2a-lab", str(exc))
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except RecursionError:
        report_error("a2a-lab", "input nested too deeply to process")
        return 2
    except Exception as exc:
        # Whatever slipped past the commands' own checks (a library's ValueError on odd
        # input, an OSError of an output file) is still the user's input to fix.
        report_error("a2a-lab", _describe(exc))
        return 2


def _describe(exc: BaseException) -> str:
    """A one-line message of an unexpected exception: its text, with its kind when terse."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f" {exc.filename}" if exc.filename is not None else ""
        return f"{exc.strerror}:{where}"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
