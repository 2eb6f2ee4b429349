"""One offline HTML file that shows a log to people who will not open a notebook.

:func:`report` loads a log (or takes a :class:`~a2a_lab.io.LoadResult`), has the
application layer compute what it shows (:func:`a2a_lab.app.report.collect`) and renders it
as one self-contained page (:mod:`._page`): the answers first (no-reply rate, first-reply
p50 / p95, worst pairs, busiest agents, log health, with n and intervals), a search over
every message, every work session as one collapsed line (paged, filterable), conversations,
interaction graph, log health and, with a simulator run, the twin comparison. Tables sort
by the numbers they show. Charts are the package's Altair specs drawn by one inlined Vega
runtime with a PNG fallback where scripts are off; nothing is fetched from the network;
every untrusted text is escaped and control / bidi characters are shown, not obeyed
(:mod:`a2a_lab.views.safe_html`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from a2a_lab.app.report import ReportData, collect
from a2a_lab.io import LoadResult, file_label, load
from a2a_lab.time import check_tz
from a2a_lab.views.report import _sections, _sessions
from a2a_lab.views.report._page import cjk_glyphs, page

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
        (:class:`~a2a_lab.app.report.ReportData`).
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


def _loaded(
    source: str | os.PathLike[str] | list[str | os.PathLike[str]] | LoadResult,
    progress: bool | None,
) -> tuple[LoadResult, str]:
    """The loaded log and how the page names it: its paths (a LoadResult's files)."""
    if isinstance(source, LoadResult):
        loaded = source
        files = [str(f) for f in loaded.report.files]
    else:
        loaded = load(source, progress=progress)
        files = [str(f) for f in (source if isinstance(source, list) else [source])]
    # file_label: a name with bytes that are not UTF-8 shows them as \xNN (the page is UTF-8)
    return loaded, ", ".join(map(file_label, files)) or "(events given in memory)"


def _render(
    data: ReportData,
    title: str,
    limits: dict[str, int],
    discord_users: Mapping[str, str] | None,
    embed_font: bool,
) -> str:
    """The page of ``data``: the sections in order, the table of contents, the font."""
    body = "".join(
        (
            _sections.overview(data),
            _sessions.search(data),
            _sessions.sessions(
                data,
                max_sessions=limits["sessions"],
                max_messages=limits["messages"],
                discord_users=discord_users,
            ),
            _sections.conversations(data, max_rows=limits["rows"]),
            _sections.graph(data),
            _sections.health(data, max_per_rule=limits["rows"]),
            _sections.twin(data),
        )
    )
    f = data.figures
    subtitle = (
        f"{f['events']:,} events · {f['sessions']:,} work sessions · {f['exchanges']:,} exchanges"
        f" · times in {data.tz}"
    )
    return page(
        title=title,
        subtitle=subtitle,
        nav=_sections.sections(data),
        body=body,
        tz=data.tz,
        embed_font=embed_font,
        glyphs=cjk_glyphs(data.messages["text"]) if embed_font else "",
    )


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
    max_rows: int = 200,
    discord_users: Mapping[str, str] | None = None,
    embed_font: bool = True,
    progress: bool | None = None,
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
        The clock for session statuses and future-time findings; default the wall clock
        (:func:`a2a_lab.time.now_ms`, the reference dashboard's ``Date.now()``), the same
        default as every CLI command and ``a2a-lab work-sessions``. Pin it to build the
        same report of the same log on any day.
    max_sessions
        Work sessions whose threads and messages are rendered in the page (the dashboard's
        order: most recent activity first). Every session is listed, and opening any other
        shows its messages from the search index (as plain text).
    max_messages
        Messages rendered per such work session (the search covers all of them).
    max_rows
        Rows of the table of pairs (paged in the page) and per finding rule.
    discord_users
        Discord user id → name, to resolve ``<@id>`` mentions.
    embed_font
        Embed the Noto Sans KR glyphs the page uses (a subset), so Korean renders on a
        machine without a Korean font.
    progress
        Show the steps on stderr (tqdm); None: unless ``CI`` is set or
        ``A2A_LAB_PROGRESS=0``.

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
    loaded, label = _loaded(source, progress)
    data = collect(
        loaded,
        source=label,
        window=(since, until),
        tz=tz,
        now=now,
        sim=sim,
        seed=seed,
        progress=progress,
    )
    limits = {"sessions": max_sessions, "messages": max_messages, "rows": max_rows}
    html = _render(data, title or f"A2A log report: {label}", limits, discord_users, embed_font)
    return Report(html=html, data=data)
