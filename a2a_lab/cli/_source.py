"""Load a CLI SOURCE argument (a log or a history store), turning errors into one-line CLI errors."""

from __future__ import annotations

from a2a_lab.cli._common import CliError
from a2a_lab.io import LoadResult, SourceError, StoreError, is_store, load, load_store


def load_source(source: str, *, tz: str = "UTC") -> LoadResult:
    """``a2a_lab.load(source, tz=tz)``, or the history store at ``source``.

    A missing or unreadable source raises :class:`CliError`.
    """
    try:
        if is_store(source):
            return load_store(source, timezone=tz)
        return load(source, tz=tz)
    except (SourceError, StoreError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None
