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
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from a2a_lab.io import LIVE_NAME, write_events
from a2a_lab.time import check_tz

__all__ = ["ROTATE_BYTES", "write_logdir"]

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
    lines = text.splitlines(keepends=True)
    times = events["event_ms"].to_list()
    files: list[tuple[str, list[str]]] = []
    current: list[str] = []
    size = 0
    month = None
    for line, ms in zip(lines, times, strict=True):
        local_month = datetime.fromtimestamp(ms / 1000, tz=zone).strftime("%Y-%m")
        if rotate and current:
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
    written = []
    for name, chunk in files:
        path = out / name
        path.write_text("".join(chunk), encoding="utf-8")
        written.append(path)
    return written
