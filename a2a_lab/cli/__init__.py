"""The ``a2a-lab`` command line.

Each sub-command lives in its own module exposing ``register(subparsers)``; it sets
``func`` on its parser, a callable ``(args) -> int`` returning the exit status. Errors a
user can fix raise :class:`CliError`: one line on stderr, exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from a2a_lab.cli._common import CliError, OneLineArgumentParser

__all__ = ["CliError", "main"]


def _build_parser() -> argparse.ArgumentParser:
    from a2a_lab.cli import _commands

    parser = OneLineArgumentParser(
        prog="a2a-lab",
        description="Analyse, check and simulate A2A coordination event logs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineArgumentParser)
    sub.required = True
    for register in _commands.REGISTRY:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (also used by the console script)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"a2a-lab: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
