"""Load a CLI SOURCE argument, turning source errors into one-line CLI errors."""

from __future__ import annotations

from a2a_lab.cli._common import CliError
from a2a_lab.io import LoadResult, SourceError, load


def load_source(source: str, *, timezone: str = "UTC") -> LoadResult:
    """``a2a_lab.load(source)``; a missing or unreadable source raises :class:`CliError`."""
    try:
        return load(source, timezone=timezone)
    except SourceError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None
