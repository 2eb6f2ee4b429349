"""Load a CLI SOURCE argument (a log or a history store), turning errors into one-line CLI errors."""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator

import polars as pl

from a2a_lab.cli._common import CliError, in_window
from a2a_lab.io import (
    LoadResult,
    SourceError,
    StoreError,
    is_store,
    load,
    load_store,
    scan_store,
)


def load_source(
    source: str, *, tz: str = "UTC", data_fields: Collection[str] | None = None
) -> LoadResult:
    """``a2a_lab.load(source, tz=tz, data_fields=data_fields)``, or the history store at
    ``source`` (all its ``data`` fields).

    A missing or unreadable source raises :class:`CliError`.
    """
    try:
        if is_store(source):
            return load_store(source, tz=tz)
        return load(source, tz=tz, data_fields=data_fields)
    except (SourceError, StoreError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None


def scan_source(
    source: str,
    *,
    tz: str = "UTC",
    raw: bool = False,
    data_fields: Collection[str] | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """The events of ``source`` for an analysis that accepts a LazyFrame.

    A history store gives the lean lazy scan (:func:`a2a_lab.io.scan_store`: only the
    columns and ``data`` fields the analysis selects are read, ``raw`` only if asked and
    selected); run its collects inside :func:`lean_engine`. A log gives the loaded frame,
    its ``data`` cut to ``data_fields`` when given (the fields the analysis reads).
    """
    try:
        if is_store(source):
            return scan_store(source, tz=tz, raw=raw)
    except (SourceError, StoreError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None
    return load_source(source, tz=tz, data_fields=data_fields).events


def log_conversations_of(
    source: str, tz: str, since: float | None, until: float | None
) -> pl.DataFrame:
    """The conversations of the log ``source`` in ``--since``/``--until`` (epoch ms),
    matched a bucket of whole conversations at a time (:mod:`a2a_lab.analysis._chunked`)."""
    from a2a_lab.analysis.logs import log_conversations

    in_window(pl.DataFrame({"event_ms": []}, schema={"event_ms": pl.Float64}), since, until)
    try:
        return log_conversations(source, tz=tz, since=since, until=until)
    except SourceError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def lean_engine() -> Iterator[None]:
    """Collect lazy frames with Polars' streaming engine (bounded memory) in this block."""
    with pl.Config(engine_affinity="streaming"):
        yield
