"""One offline HTML file that shows a log to people who will not open a notebook.

:func:`report` loads a log (or takes a :class:`~a2a_lab.io.LoadResult`), computes the
sections with the library's own functions (:mod:`._data`) and writes them as one
self-contained page (:mod:`._page`): Overview, Work sessions (searchable and filterable in
the browser), Conversations, Interaction graph, Log health and Twin comparison. Charts are
the package's Altair specs drawn by one inlined Vega runtime with a PNG fallback where
scripts are off; nothing is fetched from the network; every untrusted text is escaped and
control / bidi characters are shown, not obeyed (:mod:`a2a_lab.views.safe_html`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from a2a_lab.io import LoadResult, load
from a2a_lab.io._decode import file_label
from a2a_lab.views.report import _sections
from a2a_lab.views.report._data import ReportData, check_tz, collect
from a2a_lab.views.report._page import page

__all__ = ["Report", "report"]

Instant = str | int | float | datetime | None


@dataclass(frozen=True, repr=False)
class Report:
    """A rendered report.

    Attributes
    ----------
    html
        The whole page.
    data
        What it shows: frames and the headline ``figures``
        (:class:`~a2a_lab.views.report._data.ReportData`).
    """

    html: str
    data: ReportData

    @property
    def figures(self) -> dict[str, Any]:
        """The headline numbers of the Overview (events, agents, sessions, …)."""
        return dict(self.data.figures)

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the page (UTF-8) and return its path."""
        out = Path(path)
        out.write_text(self.html, encoding="utf-8")
        return out

    def __repr__(self) -> str:
        f = self.data.figures
        return f"Report({f['events']} events, {f['sessions']} sessions, {f['findings']} findings, {len(self.html):,} bytes)"


def report(
    source: str | os.PathLike[str] | list[str | os.PathLike[str]] | LoadResult,
    *,
    since: Instant = None,
    until: Instant = None,
    tz: str = "UTC",
    title: str | None = None,
    sim: Any = None,
    seed: int = 1,
    now: Instant = None,
    max_sessions: int = 30,
    max_messages: int = 200,
    max_rows: int = 50,
    discord_users: Mapping[str, str] | None = None,
    embed_font: bool = True,
) -> Report:
    """Build the shareable HTML report of a log.

    Parameters
    ----------
    source
        A log directory, file, glob or list of files (as :func:`a2a_lab.load`), or an
        already loaded :class:`~a2a_lab.io.LoadResult`.
    since, until
        Keep events with ``since <= time < until``: an ISO string, a datetime or epoch ms;
        naive means UTC. Rejected lines of the load are all reported (they have no time).
    tz
        IANA time zone every time is shown in.
    title
        The page title; default ``"A2A log report: <source>"``.
    sim
        A :class:`~a2a_lab.sim.SimConfig` or the path of one as JSON: adds the twin
        comparison (simulated vs observed quantiles).
    seed
        Seed of the simulator run.
    now
        The clock for session statuses and future-time findings; default the last event
        time, so a report of the same log is the same whatever day it is built.
    max_sessions
        Work sessions shown (the dashboard's order: most recent activity first).
    max_messages
        Messages shown per work session.
    max_rows
        Rows shown per table of pairs and per finding rule.
    discord_users
        Discord user id → name, to resolve ``<@id>`` mentions.
    embed_font
        Embed the Noto Sans KR glyphs the page uses (a subset), so Korean renders on a
        machine without a Korean font.

    Returns
    -------
    Report
        ``.html`` (write it with ``.write(path)``) and ``.data``.

    Raises
    ------
    ValueError
        A time, time zone, limit or simulator configuration that is not valid, naming it.
    """
    for name, value in (
        ("max_sessions", max_sessions),
        ("max_messages", max_messages),
        ("max_rows", max_rows),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}: expected an integer >= 0, not {value!r}")
    check_tz(tz)
    if isinstance(source, LoadResult):
        loaded, label = source, "(loaded events)"
    else:
        loaded = load(source)
        # file_label: a name with bytes that are not UTF-8 shows them as \xNN (the page is UTF-8)
        label = ", ".join(map(file_label, source if isinstance(source, list) else [source]))
    data = collect(
        loaded, source=label, since=since, until=until, tz=tz, now=now, sim=sim, seed=seed
    )
    body = "".join(
        (
            _sections.overview(data),
            _sections.sessions(
                data,
                max_sessions=max_sessions,
                max_messages=max_messages,
                discord_users=discord_users,
            ),
            _sections.conversations(data, max_rows=max_rows),
            _sections.graph(data),
            _sections.health(data, max_per_rule=max_rows),
            _sections.twin(data),
        )
    )
    f = data.figures
    subtitle = f"{f['events']:,} events · {f['sessions']:,} work sessions · {f['exchanges']:,} exchanges · times in {tz}"
    html = page(
        title=title or f"A2A log report: {label}",
        subtitle=subtitle,
        nav=list(_sections.SECTIONS),
        body=body,
        embed_font=embed_font,
    )
    return Report(html=html, data=data)
