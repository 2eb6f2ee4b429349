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
from typing import Any, Never

from a2a_lab._options import reject_removed_keywords
from a2a_lab.app.report import ReportData, Setting, collect, setting
from a2a_lab.app.report_log import collect_log
from a2a_lab.app.report_store import collect_store
from a2a_lab.io import LoadResult, file_label, is_store, load_store
from a2a_lab.time import Zone, check_tz
from a2a_lab.views.report import _sections, _sessions
from a2a_lab.views.report._page import cjk_glyphs, page

__all__ = ["Report", "ReportOptions", "report"]

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


def _label(source: str | os.PathLike[str] | list[str | os.PathLike[str]] | LoadResult) -> str:
    """How the page names the log: its paths (a LoadResult's files)."""
    if isinstance(source, LoadResult):
        files = [str(f) for f in source.report.files]
    else:
        files = [str(f) for f in (source if isinstance(source, list) else [source])]
    # file_label: a name with bytes that are not UTF-8 shows them as \xNN (the page is UTF-8)
    return ", ".join(map(file_label, files)) or "(events given in memory)"


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """What the report shows and how (:func:`report`'s ``options``).

    Attributes
    ----------
    since, until
        Keep events with ``since <= time < until``: an ISO string, a datetime or epoch ms;
        naive means UTC. Rejected lines of the load are all reported (they have no time).
    title
        The page title; default ``"A2A log report: <source>"``.
    sim
        A :class:`~a2a_lab.sim.SimConfig` or the path of one as JSON: adds the twin
        comparison (simulated vs observed quantiles).
    seed
        Seed of the simulator run.
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
    """

    since: Instant = None
    until: Instant = None
    title: str | None = None
    sim: Any = None
    seed: int = 1
    max_sessions: int = 30
    max_messages: int = 200
    max_rows: int = 200
    discord_users: Mapping[str, str] | None = None
    embed_font: bool = True

    def check(self) -> None:
        """Raise ValueError naming a limit that is not an integer >= 0."""
        for name in ("max_sessions", "max_messages", "max_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}: expected an integer >= 0, not {value!r}")


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


def _from_store(
    store: str | os.PathLike[str], s: Setting, shown: int, progress: bool | None
) -> ReportData:
    """The report of a history store: from its materialised tables when they answer
    (:func:`a2a_lab.app.report_store.collect_store`), else from its events loaded whole."""
    data = collect_store(store, s, shown=shown, progress=progress)
    if data is not None:
        return data
    loaded = load_store(store, tz=s.tz)
    window = (s.since_ms, s.until_ms)
    return collect(
        loaded,
        source=s.source,
        window=window,
        tz=s.tz,
        now=s.now_ms,
        sim=s.sim,
        seed=s.seed,
        progress=progress,
    )


def report(
    source: str | os.PathLike[str] | list[str | os.PathLike[str]] | LoadResult,
    options: ReportOptions | None = None,
    *,
    tz: str = "UTC",
    now: Instant = None,
    progress: bool | None = None,
    **removed: Never,
) -> Report:
    """Build the shareable HTML report of a log.

    Parameters
    ----------
    source
        A log directory, file, glob or list of files (as :func:`a2a_lab.load`), or an
        already loaded :class:`~a2a_lab.io.LoadResult`. A log is read once, a bucket of
        whole conversations at a time, never holding its event frame
        (:func:`a2a_lab.app.report_log.collect_log`); a LoadResult is computed whole
        (:func:`a2a_lab.app.report.collect`). Both give the same report. A history store
        (``a2a-lab ingest``) is read from the tables it materialised at ingest
        (:func:`a2a_lab.app.report_store.collect_store`: nothing matched or enriched again,
        the fast path), or, when they do not answer (a time window, tables not current,
        another zone), loaded whole.
    options
        What the page shows (:class:`ReportOptions`: window, title, twin run, limits,
        Discord names, font); default: all of the log, 30 sessions rendered.
    tz
        IANA time zone every time is shown in.
    now
        The clock for session statuses and future-time findings; default the wall clock
        (:func:`a2a_lab.time.now_ms`, the reference dashboard's ``Date.now()``), the same
        default as every CLI command and ``a2a-lab work-sessions``. Pin it to build the
        same report of the same log on any day.
    progress
        Show the steps on stderr (tqdm); None: unless ``CI`` is set or
        ``A2A_LAB_PROGRESS=0``.
    **removed
        None accepted: an option passed as a keyword (``since=…``, the form before
        :class:`ReportOptions`) raises a ``TypeError`` naming it.

    Returns
    -------
    Report
        ``.html`` (write it with ``.write(path)``) and ``.data``.

    Raises
    ------
    ValueError
        A time, time zone, limit or simulator configuration that is not valid, naming it.
    TypeError
        ``options`` is not a :class:`ReportOptions`, or an option is passed as a keyword.
    """
    reject_removed_keywords("report", removed, ReportOptions, parameter="options")
    if options is None:
        options = ReportOptions()
    elif not isinstance(options, ReportOptions):
        raise TypeError(f"options must be a ReportOptions, not {type(options).__name__}")
    o = options
    o.check()
    # resolved once (the CLI's --tz already is): no session or message checks it again
    tz = tz if isinstance(tz, Zone) else check_tz(tz)
    label = _label(source)
    s = setting(label, (o.since, o.until), tz, now, o.sim, o.seed)
    if isinstance(source, LoadResult):
        data = collect(
            source,
            source=label,
            window=(o.since, o.until),
            tz=tz,
            now=s.now_ms,
            sim=o.sim,
            seed=o.seed,
            progress=progress,
        )
    elif not isinstance(source, list) and is_store(source):
        data = _from_store(source, s, o.max_sessions, progress)
    else:
        data = collect_log(source, s, shown=o.max_sessions, progress=progress)
    limits = {"sessions": o.max_sessions, "messages": o.max_messages, "rows": o.max_rows}
    html = _render(
        data, o.title or f"A2A log report: {label}", limits, o.discord_users, o.embed_font
    )
    return Report(html=html, data=data)
