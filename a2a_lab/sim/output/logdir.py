"""Write a simulated (or any) event frame as a log directory, rotated like the reference.

The reference appends one JSON line per event to ``coordination-events.ndjson`` and, before
each write (rules §9), renames the live file ``coordination-events-YYYY-MM.ndjson`` when the
local month has changed, or ``coordination-events-<ISO time, ':' and '.' → '-'>.ndjson``
when it has grown beyond 10 MiB. :func:`write_logdir` replays that rule on the events' times, so
the dashboard (which reads the live file only) and :func:`a2a_lab.load` (which reads them
all) see exactly what they would see on the gateway.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from a2a_lab.io import LIVE_NAME, write_events
from a2a_lab.time import check_tz

__all__ = ["ROTATE_BYTES", "split_log", "write_logdir"]

#: The reference's size threshold (10 MiB).
ROTATE_BYTES = 10 * 1024 * 1024


def _iso(ms: float) -> str:
    """JavaScript ``new Date(ms).toISOString()``."""
    moment = datetime.fromtimestamp(int(ms) / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ms) % 1000:03d}Z"


def write_logdir(
    events: pl.DataFrame,
    directory: str | os.PathLike[str],
    *,
    rotate: bool = True,
    rotate_bytes: int = ROTATE_BYTES,
    tz: str | None = None,
) -> list[Path]:
    """Write events into a log directory, with the reference's month and size rotation.

    Parameters
    ----------
    events
        An event frame in write order (a loaded, enriched or simulated one).
    directory
        Created if missing; existing log files in it are overwritten.
    rotate
        False writes everything into the live file.
    rotate_bytes
        The size rotation threshold.
    tz
        The gateway's local time zone, which decides the month of a rotated file; default
        UTC, like every ``tz`` of the package (the reference's gateway runs in
        ``"Asia/Seoul"``: pass it to name the files as it does).

    Returns
    -------
    list of Path
        The files written, oldest first, the live file last.

    Examples
    --------
    >>> import tempfile
    >>> from a2a_lab.io import load
    >>> from a2a_lab.sim import simulate, SimConfig
    >>> ev = simulate(SimConfig(n_messages=300), seed=1).events
    >>> with tempfile.TemporaryDirectory() as d:
    ...     files = write_logdir(ev, d, rotate_bytes=50_000)
    ...     reread = load(d).events
    >>> len(files) > 1, files[-1].name, reread.drop("file", "line").equals(ev.drop("file", "line", "raw"))
    (True, 'coordination-events.ndjson', True)
    """
    zone = ZoneInfo(check_tz("UTC" if tz is None else tz))  # checked before any write
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    text = write_events(events) or ""
    files = split_log(
        text.splitlines(keepends=True),
        events["event_ms"].to_list(),
        rotate_bytes=rotate_bytes if rotate else None,
        tz=zone.key,
    )
    written = []
    for name, chunk in files:
        path = out / name
        path.write_text("".join(chunk), encoding="utf-8")
        written.append(path)
    return written


def split_log(
    lines: Sequence[str], times_ms: Sequence[int], *, rotate_bytes: int | None, tz: str
) -> list[tuple[str, list[str]]]:
    """Split lines (with their newlines) into the files of a log directory, as the reference rotates.

    Parameters
    ----------
    lines
        The event lines in write order, each with its newline.
    times_ms
        Each line's event time (epoch ms).
    rotate_bytes
        The size rotation threshold; ``None`` writes everything into the live file.
    tz
        The gateway's local time zone, which decides the month of a rotated file.

    Returns
    -------
    list of (str, list of str)
        File names and their lines, oldest first, the live file last.

    Examples
    --------
    >>> jan, feb = 1769900000000, 1769990000000
    >>> [(name, len(chunk)) for name, chunk in split_log(["a\\n", "b\\n", "c\\n"], [jan, jan, feb], rotate_bytes=1, tz="UTC")]
    [('coordination-events-2026-01-31T22-53-20-000Z.ndjson', 1), ('coordination-events-2026-01.ndjson', 1), ('coordination-events.ndjson', 1)]
    """
    zone = ZoneInfo(check_tz(tz))
    files: list[tuple[str, list[str]]] = []
    current: list[str] = []
    size = 0
    month = None
    for line, ms in zip(lines, times_ms, strict=True):
        local_month = datetime.fromtimestamp(ms / 1000, tz=zone).strftime("%Y-%m")
        if rotate_bytes is not None and current:
            if local_month != month:
                files.append((f"coordination-events-{month}.ndjson", current))
                current, size = [], 0
            elif size > rotate_bytes:
                stamp = _iso(ms).replace(":", "-").replace(".", "-")
                files.append((f"coordination-events-{stamp}.ndjson", current))
                current, size = [], 0
        month = local_month
        current.append(line)
        size += len(line.encode("utf-8"))
    files.append((LIVE_NAME, current))
    return files
