"""Large logs of the sample's shape, simulated: :func:`write_log`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO, Final

import numpy as np
import polars as pl

from a2a_lab.io import write_events
from a2a_lab.sim import simulate
from a2a_lab.sim.output.inject import REJECT_REASONS, MalformedKind, malformed
from a2a_lab.sim.workload.presets import sample_like

__all__ = ["LOG_START", "LogSummary", "write_log"]

#: Midnight KST of the Monday the simulated logs start on.
LOG_START: Final = datetime(2026, 3, 2, tzinfo=timezone(timedelta(hours=9)))
#: Events the :func:`~a2a_lab.sim.workload.presets.sample_like` deployment writes per message at the
#: benchmark pace (measured: 4.6); it turns ``events_per_day`` into a message rate.
_EVENTS_PER_MESSAGE: Final = 4.5
#: The most messages one simulation run sends: longer logs are simulated day after day in
#: runs of at most this size, so memory stays bounded whatever the log's length.
_MESSAGES_PER_RUN: Final = 20_000
_LINES_PER_WRITE: Final = 50_000
#: The kinds of malformed lines a benchmark log gets: those the loader rejects.
_BAD_KINDS: Final[tuple[MalformedKind, ...]] = tuple(REJECT_REASONS)


@dataclass(frozen=True)
class LogSummary:
    """What :func:`write_log` wrote."""

    path: Path
    lines: int
    events: int
    bad_lines: int
    bytes: int
    #: 1-based line numbers of the malformed lines, ascending.
    bad_line_numbers: tuple[int, ...]


def _event_lines(frame: pl.DataFrame) -> pl.DataFrame:
    """``event_ms`` and the NDJSON line of every event, in write order."""
    text = write_events(frame) or ""
    # split on LF only: str.splitlines would also split at U+2028 inside a message
    lines = text.split("\n")[:-1]
    return pl.DataFrame(
        {"event_ms": frame["event_ms"], "line": lines},
        schema={"event_ms": pl.Int64, "line": pl.String},
    )


def _simulated_chunks(
    n: int, seed: np.random.SeedSequence, start: datetime, messages_per_day: float
) -> Iterator[pl.Series]:
    """The first ``n`` event lines of the ``sample_like`` deployment running from ``start``,
    one simulation run's finished lines at a time.

    Runs follow each other (the next starts when the previous one stops sending); exchanges
    still running at a run's end are merged, in time order, with the next run's events. The
    log is cut after ``n`` events, as a live log is, mid-exchange. What is held at once is
    one run (at most :data:`_MESSAGES_PER_RUN` messages) and the exchanges it carries over,
    whatever ``n``: a caller writing each chunk as it comes writes any size in bounded memory.
    """
    rate_per_s = messages_per_day / 86_400.0
    written = 0
    carry = pl.DataFrame(schema={"event_ms": pl.Int64, "line": pl.String})
    run_start = start
    while written < n:
        wanted = max((n - written) / _EVENTS_PER_MESSAGE * 1.25, 50.0)
        duration_s = min(86_400.0, _MESSAGES_PER_RUN / rate_per_s, wanted / rate_per_s)
        config = sample_like(messages_per_day, duration_s=duration_s, start=run_start)
        events = simulate(config, seed=seed.spawn(1)[0]).events
        run_start = run_start + timedelta(seconds=duration_s)
        boundary = int(run_start.timestamp() * 1000)
        merged = pl.concat([carry, _event_lines(events)]).sort("event_ms", maintain_order=True)
        done = merged.filter(pl.col("event_ms") < boundary)
        carry = merged.filter(pl.col("event_ms") >= boundary)
        chunk = done["line"].head(n - written)
        written += chunk.len()
        yield chunk


def _simulated_lines(
    n: int, seed: np.random.SeedSequence, start: datetime, messages_per_day: float
) -> pl.Series:
    """All of :func:`_simulated_chunks` as one series."""
    parts = list(_simulated_chunks(n, seed, start, messages_per_day))
    return pl.concat(parts) if parts else pl.Series("line", [], dtype=pl.String)


def _write_lines(file: BinaryIO, lines: pl.Series) -> None:
    """Append ``lines`` (String or Binary), each ended by LF, to ``file``."""
    # in slices: the whole log as Python bytes objects would double the memory it needs
    for start_at in range(0, lines.len(), _LINES_PER_WRITE):
        chunk = lines.slice(start_at, _LINES_PER_WRITE).cast(pl.Binary).to_list()
        file.write(b"\n".join(chunk) + b"\n")


def write_log(
    path: str | os.PathLike[str],
    n_events: int,
    seed: int,
    bad_line_fraction: float = 0.0,
    *,
    start: datetime = LOG_START,
    events_per_day: int = 60_000,
) -> LogSummary:
    """Write one large coordination log of the sample's shape, simulated (for benchmarks).

    The :func:`~a2a_lab.sim.workload.presets.sample_like` deployment (fifteen agents, tasks and their
    work sessions, failures, retries and no-reply outcomes, a KST working day) runs at
    ``events_per_day``; its events are written by :func:`a2a_lab.io.write_events`, in time
    order, and cut after the events needed (exchanges still running at the end stay
    incomplete, as in a live log). ``round(n_events * bad_line_fraction)`` malformed lines
    the loader rejects (not JSON, torn writes, ``[1,2,3]``, ``"ts":NaN``, a missing or blank
    ``type``; :func:`a2a_lab.sim.output.inject.malformed`) are inserted at random events, so the
    file has exactly ``n_events`` lines.

    Parameters
    ----------
    path
        Output file (parent directories are created).
    n_events
        Number of lines to write.
    seed
        Seed of the simulation and of the injection; the same arguments give the same bytes.
    bad_line_fraction
        Fraction of the lines that are malformed, in ``[0, 1)``.
    start
        Time the simulated deployment starts (time-zone aware).
    events_per_day
        Average event rate, which sets the span of the log.

    Returns
    -------
    LogSummary
        Line, event and bad-line counts, the file size and the bad line numbers.

    Raises
    ------
    ValueError
        On an argument out of range, naming it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     summary = write_log(Path(tmp) / "big.ndjson", 2_000, seed=1, bad_line_fraction=0.01)
    >>> summary.lines, summary.events, summary.bad_lines
    (2000, 1980, 20)
    """
    if n_events < 1:
        raise ValueError(f"n_events: must be at least 1, got {n_events}")
    if not 0.0 <= bad_line_fraction < 1.0:
        raise ValueError(f"bad_line_fraction: must be in [0, 1), got {bad_line_fraction}")
    if events_per_day <= 0:
        raise ValueError(f"events_per_day: must be positive, got {events_per_day}")
    if start.tzinfo is None:
        raise ValueError("start: must be time-zone aware")
    n_bad = round(n_events * bad_line_fraction)
    simulation, kinds_seed, places_seed = np.random.SeedSequence(seed).spawn(3)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    messages_per_day = events_per_day / _EVENTS_PER_MESSAGE
    if n_bad == 0:
        # nothing to place among all the lines: each run's lines are written as they come,
        # so a log of any size (10 M events: issue 24) is written in bounded memory
        with out.open("wb") as file:
            for chunk in _simulated_chunks(n_events, simulation, start, messages_per_day):
                _write_lines(file, chunk)
        marks: tuple[int, ...] = ()
    else:
        lines = _simulated_lines(n_events - n_bad, simulation, start, messages_per_day)
        kinds = [
            _BAD_KINDS[k]
            for k in np.random.default_rng(kinds_seed).integers(len(_BAD_KINDS), size=n_bad)
        ]
        injected = malformed(lines, kinds, seed=places_seed)
        with out.open("wb") as file:
            _write_lines(file, injected.lines)
        marks = tuple(injected.marks["line"].to_list())
    return LogSummary(
        path=out,
        lines=n_events,
        events=n_events - n_bad,
        bad_lines=n_bad,
        bytes=out.stat().st_size,
        bad_line_numbers=marks,
    )
