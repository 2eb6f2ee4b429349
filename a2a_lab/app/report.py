"""What the HTML report shows, computed once with the library's public functions.

:func:`collect` runs the analyses (enrich, work sessions, conversations, check, the guard
replays, optionally the simulator) and derives what the page shows: the headline KPIs with
their intervals, the pair table ordered worst first with its percentiles gated by sample
size, the traffic per agent and the message index the page searches. The views
(:mod:`a2a_lab.views.report`) only format what this module returns.

**Percentile rule.** A q-quantile of first-reply latency is shown only where at least
:data:`MIN_TAIL` replies lie beyond it, i.e. ``n * (1 - q) >= 5``
(:func:`min_replies`): the median from 10 replies, p95 from 100, p99 from 500. Below that a
table shows "—" and n: a p99 of 7 replies would be the largest of them, not a percentile.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab._frames import number
from a2a_lab.analysis.checks import SEVERITIES, check, replay_guard
from a2a_lab.analysis.conversations import conversations, pair_stats
from a2a_lab.enrich import enrich
from a2a_lab.io import LoadResult, file_label
from a2a_lab.materialize import SEARCH_FIELDS, has_text, search_text
from a2a_lab.sessions import SessionQuery, WorkSessionsResult, work_sessions
from a2a_lab.time import MAX_TIME_MS, Instant, format_time, instant_ms, now_ms

__all__ = [
    "GUARDS",
    "MIN_TAIL",
    "SEARCH_FIELDS",
    "Computed",
    "ReportData",
    "Setting",
    "Twin",
    "collect",
    "finish",
    "guard_replays",
    "indexed_messages",
    "message_texts",
    "min_replies",
    "setting",
    "worst_first",
]

#: The safety limits replayed in the log-health section: (name, limit, window s, replay options).
GUARDS: tuple[tuple[str, int, float, dict[str, Any]], ...] = (
    ("loop guard", 6, 60.0, {}),
    ("collaborate limit", 10, 300.0, {"types": ("a2a.send",), "ping_pong_only": False}),
)
#: Quantiles of the twin comparison.
TWIN_QUANTILES: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
#: Replies that must lie beyond a shown quantile (the module's percentile rule).
MIN_TAIL = 5
#: Pairs ranked in the headline "worst pairs" need this many finished exchanges (replied or
#: not): a 1-of-1 no-reply is 100 % and says nothing.
MIN_FINISHED = 10


def min_replies(q: float) -> int:
    """The fewest replies for which the ``q``-quantile is shown: ``ceil(MIN_TAIL / (1 - q))``.

    >>> min_replies(0.5), min_replies(0.95), min_replies(0.99)
    (10, 100, 500)
    """
    return math.ceil(round(MIN_TAIL / (1 - q), 9))


@dataclass(frozen=True)
class Twin:
    """A simulated run beside the observed log: quantiles of both, long format."""

    config_name: str
    seed: int
    quantiles: pl.DataFrame  # measure, quantile, source, value
    rates: pl.DataFrame  # measure, observed, simulated


@dataclass(frozen=True)
class ReportData:
    """What the report shows (all frames collected, all figures plain Python numbers).

    ``pairs`` is ordered worst first (:func:`worst_first`), its percentiles gated
    (:func:`min_replies`); ``traffic`` is per agent (``agent, requests, received, total``,
    busiest first); ``messages`` is the search index (:func:`message_index`);
    ``title_events`` the events task titles are read from (None: ``enriched``).

    ``events`` and ``enriched`` are the whole frames when the report was computed from a
    loaded log (:func:`collect`). From a log file read a bucket at a time
    (:func:`a2a_lab.app.report_log.collect_log`), ``events`` is the lean projection the
    health rules read and ``enriched`` holds only the events of the sessions whose messages
    the page renders (``sessions`` is built from a lean projection of every event).
    """

    source: str
    tz: str
    since_ms: float | None
    until_ms: float | None
    now_ms: float
    load: LoadResult
    events: pl.DataFrame
    enriched: pl.DataFrame
    sessions: WorkSessionsResult
    conversations: pl.DataFrame
    pairs: pl.DataFrame
    traffic: pl.DataFrame
    findings: pl.DataFrame
    guards: pl.DataFrame  # name, limit, window_s, counted, blocked, pairs
    messages: pl.DataFrame
    twin: Twin | None
    title_events: pl.DataFrame | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    #: the page's instants as it shows them in ``tz`` (:func:`shown_times`): ``since``,
    #: ``until``, ``first``, ``last`` and ``clock`` (``now_ms``); "—" for none
    times: dict[str, str] = field(default_factory=dict)
    #: the sessions the page lists (:func:`session_rows`) with ``last``, their last
    #: activity as shown in ``tz`` (None: not computed)
    session_list: pl.DataFrame | None = None


@contextmanager
def _stages(total: int, progress: bool | None) -> Iterator[Any]:
    """A stage bar on stderr (tqdm), as the load's: None shows it on a terminal after two
    seconds, never when ``CI`` is set or ``A2A_LAB_PROGRESS=0``; True / False force it."""
    disable: bool | None = not progress
    if progress is None:
        quiet = bool(os.environ.get("CI")) or os.environ.get("A2A_LAB_PROGRESS") == "0"
        disable = True if quiet else None  # None: tqdm hides itself off a terminal
    from tqdm import tqdm  # the plain bar: it writes to stderr, in a kernel too

    bar = tqdm(total=total, desc="report", unit=" step", delay=2.0, disable=disable, leave=False)
    try:
        yield bar
    finally:
        bar.close()


def _agents(enriched: pl.DataFrame) -> list[str]:
    names = pl.concat(
        [enriched.get_column(c).cast(pl.String) for c in ("from_agent", "to_agent", "agent_id")]
    )
    return sorted(names.drop_nulls().filter(names.drop_nulls() != "unknown").unique().to_list())


def guard_replays(events: pl.DataFrame) -> pl.DataFrame:
    """The :data:`GUARDS` replayed on ``events``: per guard, the messages counted, blocked
    and the pairs blocked."""
    rows = []
    for name, limit, window_s, options in GUARDS:
        rep = replay_guard(events, limit=limit, window_s=window_s, **options)
        blocked = rep.filter(pl.col("blocked"))
        rows.append(
            {
                "name": name,
                "limit": limit,
                "window_s": window_s,
                "counted": rep.height,
                "blocked": blocked.height,
                "pairs": blocked["pair"].n_unique(),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "name": pl.String,
            "limit": pl.Int64,
            "window_s": pl.Float64,
            "counted": pl.Int64,
            "blocked": pl.Int64,
            "pairs": pl.Int64,
        },
    )


def worst_first(pairs: pl.DataFrame) -> pl.DataFrame:
    """Pairs ordered worst first by the numbers a table shows: no-reply rate, then blocked
    rate, then p95 latency, then volume (nulls last; ties by pair)."""
    return pairs.sort(
        [
            "no_reply_rate",
            "blocked_rate",
            "p95_first_reply_s",
            "exchanges",
            "from_agent",
            "to_agent",
        ],
        descending=[True, True, True, True, False, False],
        nulls_last=True,
    )


def pair_table(conv: pl.DataFrame) -> pl.DataFrame:
    """:func:`pair_stats` plus ``replies`` (latencies measured) and ``finished`` (replied or
    not), percentiles nulled below :func:`min_replies`, ordered :func:`worst_first`."""
    measured = conv.group_by("from_agent", "to_agent").agg(
        pl.col("first_reply_s").count().cast(pl.Int64).alias("replies")
    )
    gated = [
        pl.when(pl.col("replies") >= min_replies(q)).then(pl.col(name)).alias(name)
        for q, name in (
            (0.5, "p50_first_reply_s"),
            (0.95, "p95_first_reply_s"),
            (0.99, "p99_first_reply_s"),
        )
    ]
    table = (
        pair_stats(conv)
        .join(measured, on=["from_agent", "to_agent"], how="left", nulls_equal=True)
        .with_columns(*gated, (pl.col("replied") + pl.col("no_reply")).alias("finished"))
    )
    return worst_first(table)


def traffic(conv: pl.DataFrame) -> pl.DataFrame:
    """Exchanges per agent as requester and as target, busiest first."""
    sent = conv.group_by(pl.col("from_agent").alias("agent")).len("requests")
    received = conv.group_by(pl.col("to_agent").alias("agent")).len("received")
    return (
        sent.join(received, on="agent", how="full", coalesce=True)
        .fill_null(0)
        .drop_nulls("agent")
        .with_columns((pl.col("requests") + pl.col("received")).alias("total"))
        .sort("total", "agent", descending=[True, False])
    )


def _ci_proportion(k: int, n: int) -> tuple[float, float] | None:
    """Wilson 95 % interval of ``k / n`` (scipy)."""
    if n == 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def _quantile_kpi(latency: pl.Series, q: float) -> dict[str, Any]:
    """The ``q``-quantile with its distribution-free 95 % interval (order statistics,
    :func:`scipy.stats.quantile_test`), or nulls below :func:`min_replies`."""
    n = latency.len()
    if n < min_replies(q):
        return {"value": None, "ci": None, "n": n}
    from scipy.stats import quantile_test

    values = latency.to_numpy()
    value = number(latency.quantile(q, "linear"))
    ci = quantile_test(values, q=value, p=q).confidence_interval(0.95)
    low, high = float(ci.low), float(ci.high)
    return {
        "value": value,
        "ci": None if not (math.isfinite(low) and math.isfinite(high)) else (low, high),
        "n": n,
    }


def kpis(
    conv: pl.DataFrame, pairs: pl.DataFrame, flow: pl.DataFrame, findings: pl.DataFrame
) -> dict[str, Any]:
    """The headline answers: outcomes, no-reply rate (Wilson 95 %), p50 / p95 first reply
    (95 % order-statistic intervals), the five worst pairs, the five busiest agents and the
    five rules with the most findings (most severe first)."""
    rank = pl.col("severity").replace_strict(
        {s: i for i, s in enumerate(SEVERITIES)}, return_dtype=pl.Int8
    )
    rules = (
        findings.group_by("rule", "severity")
        .len("findings")
        .sort(rank, "findings", "rule", descending=[True, True, False])
        .head(5)
        .to_dicts()
    )
    counts = dict(conv.group_by("outcome").len().iter_rows())
    replied, no_reply = int(counts.get("replied", 0)), int(counts.get("no_reply", 0))
    finished = replied + no_reply
    latency = conv["first_reply_s"].drop_nulls()
    worst = pairs.filter((pl.col("finished") >= MIN_FINISHED) & (pl.col("no_reply") > 0))
    return {
        "replied": replied,
        "no_reply": no_reply,
        "blocked": int(counts.get("concurrency_blocked", 0)),
        "incomplete": int(counts.get("incomplete", 0)),
        "finished": finished,
        "no_reply_rate": no_reply / finished if finished else None,
        "no_reply_ci": _ci_proportion(no_reply, finished),
        "p50": _quantile_kpi(latency, 0.5),
        "p95": _quantile_kpi(latency, 0.95),
        "worst_pairs": worst.head(5)
        .select("from_agent", "to_agent", "finished", "no_reply", "no_reply_rate")
        .to_dicts(),
        "busiest": flow.head(5).to_dicts(),
        "top_rules": rules,
    }


def message_texts(
    enriched: pl.DataFrame | pl.LazyFrame, keep: tuple[str, ...] = ()
) -> pl.LazyFrame:
    """The events with a text (row by row, so a chunk at a time gives the same rows):
    ``file, line, event_ms, sender, receiver, text`` (the :data:`SEARCH_FIELDS` present,
    each distinct text once, joined by a newline), then the columns ``keep``."""
    schema = enriched.collect_schema() if isinstance(enriched, pl.LazyFrame) else enriched.schema
    present = set(schema["data"].to_schema()) if "data" in schema else set()  # type: ignore[attr-defined]
    fields = [f for f in SEARCH_FIELDS if f in present]
    text = search_text(fields)
    return (
        enriched.lazy()
        .select(
            "file",
            "line",
            "event_ms",
            pl.col("from_agent").alias("sender"),
            pl.col("to_agent").alias("receiver"),
            text.alias("text"),
            *keep,
        )
        .filter(has_text())
    )


def indexed_messages(texts: pl.LazyFrame, sessions: WorkSessionsResult) -> pl.DataFrame:
    """The search index of :func:`message_texts` (in the load's order): ``session`` (row of
    ``sessions.sessions``, null outside every thread), ``thread`` (thread id), ``event_ms``,
    ``sender``, ``receiver`` and ``text``."""
    row_of = sessions.sessions.select("work_session_id").with_row_index("session")
    members = (
        sessions.thread_events.select("work_session_id", "thread_id", "file", "line")
        .unique(["file", "line"], keep="first", maintain_order=True)
        .join(row_of, on="work_session_id", how="left", nulls_equal=True)
    )
    return (
        texts.join(members.lazy(), on=["file", "line"], how="left", maintain_order="left")
        .select(
            "session",
            pl.col("thread_id").alias("thread"),
            "event_ms",
            "sender",
            "receiver",
            "text",
        )
        .collect()
    )


def message_index(enriched: pl.DataFrame, sessions: WorkSessionsResult) -> pl.DataFrame:
    """Every event with a text, for the page's search: ``session`` (row of
    ``sessions.sessions``, null outside every thread), ``thread`` (thread id), ``event_ms``,
    ``sender``, ``receiver`` and ``text`` (the :data:`SEARCH_FIELDS` present, joined by a
    newline), in time order."""
    return indexed_messages(message_texts(enriched), sessions)


def _measures(conv: pl.DataFrame) -> pl.DataFrame:
    """Per exchange the measures compared with a twin: first reply (s) and turns."""
    return conv.select(
        pl.col("first_reply_s").alias("first reply (s)"),
        pl.col("turns").cast(pl.Float64).alias("turns"),
    )


def _quantiles(conv: pl.DataFrame, source: str) -> pl.DataFrame:
    measures = _measures(conv)
    return pl.DataFrame(
        [
            {
                "measure": m,
                "quantile": q,
                "source": source,
                "value": measures[m].drop_nulls().quantile(q, "linear"),
            }
            for m in measures.columns
            for q in TWIN_QUANTILES
        ],
        schema={
            "measure": pl.String,
            "quantile": pl.Float64,
            "source": pl.String,
            "value": pl.Float64,
        },
    )


def _rates(conv: pl.DataFrame, hours: float) -> dict[str, float | None]:
    n = conv.height
    outcome = conv["outcome"]
    return {
        "exchanges per hour": n / hours if hours > 0 else None,
        "no-reply rate": float((outcome == "no_reply").sum()) / n if n else None,
        "blocked rate": float((outcome == "concurrency_blocked").sum()) / n if n else None,
        "retries per exchange": float(conv["retries"].sum()) / n if n else None,
    }


def _timed(events: pl.DataFrame) -> pl.DataFrame:
    """The events with a time: positive and an instant JavaScript's ``Date`` holds.

    A time beyond ±8.64e15 ms (``ts`` 1e308) is no instant (the load reports it as an
    ``out_of_range`` warning): it is left out of the span, the first/last times and the
    default ``now``, which describe what the log holds, not its extremes.
    """
    return events.filter((pl.col("event_ms") > 0) & (pl.col("event_ms") <= MAX_TIME_MS))


def _span_hours(events: pl.DataFrame) -> float:
    timed = _timed(events)["event_ms"]
    return (number(timed.max()) - number(timed.min())) / 3_600_000 if timed.len() > 1 else 0.0


def _twin(sim: Any, seed: int, observed: pl.DataFrame, observed_hours: float) -> Twin:
    from a2a_lab.sim import SimConfig, simulate

    if isinstance(sim, SimConfig):
        config, name = sim, "SimConfig"
    else:
        path = Path(sim)
        # the name is shown in the page: a byte that is not UTF-8 is shown as \xNN
        config = SimConfig.model_validate_json(path.read_text(encoding="utf-8"))
        name = file_label(path.name)
    simulated_events = simulate(config, seed=seed).events
    simulated = conversations(enrich(simulated_events))
    quantiles = pl.concat([_quantiles(observed, "observed"), _quantiles(simulated, "simulated")])
    obs, sim_rates = (
        _rates(observed, observed_hours),
        _rates(simulated, _span_hours(simulated_events)),
    )
    rates = pl.DataFrame(
        [{"measure": k, "observed": obs[k], "simulated": sim_rates[k]} for k in obs],
        schema={"measure": pl.String, "observed": pl.Float64, "simulated": pl.Float64},
    )
    return Twin(config_name=name, seed=seed, quantiles=quantiles, rates=rates)


def _figures(
    loaded: LoadResult,
    events: pl.DataFrame,
    enriched: pl.DataFrame,
    sessions: WorkSessionsResult,
    conv: pl.DataFrame,
    findings: pl.DataFrame,
) -> dict[str, Any]:
    timed = _timed(events)
    severity_counts = dict(findings.group_by("severity").len().iter_rows())
    return {
        "events": events.height,
        "agents": len(_agents(enriched)),
        # the events without a work session form a pseudo-session row: not counted
        "sessions": int(sessions.sessions["work_session_id"].is_not_null().sum()),
        "exchanges": conv.height,
        # exchanges the log cannot tell from another under the same conversation id
        "ambiguous_exchanges": int(conv["ambiguous"].sum()),
        "rejects": loaded.report.rejects.height,
        "warnings": loaded.report.warnings,
        "blank": loaded.report.total_blank,
        "findings": findings.height,
        **{f"findings_{s}": int(severity_counts.get(s, 0)) for s in SEVERITIES},
        "first_ms": None if timed.height == 0 else number(timed["event_ms"].min()),
        "last_ms": None if timed.height == 0 else number(timed["event_ms"].max()),
        "untimed": events.height - timed.height,
    }


@dataclass(frozen=True)
class Computed:
    """What the whole-load and the bucketed paths compute each in their own way (the
    fields of :class:`ReportData` of the same names); :func:`finish` derives the rest."""

    load: LoadResult
    events: pl.DataFrame
    enriched: pl.DataFrame
    sessions: WorkSessionsResult
    conversations: pl.DataFrame
    findings: pl.DataFrame
    messages: pl.DataFrame
    title_events: pl.DataFrame | None = None
    #: every enriched event of the window when ``enriched`` holds only some (None: enriched)
    every_enriched: pl.DataFrame | None = None
    #: the guard replays when computed already (None: from ``events``)
    guards: pl.DataFrame | None = None


@dataclass(frozen=True)
class Setting:
    """How a report is computed: the page's naming, window, zone, clock and twin run."""

    source: str
    since_ms: float | None
    until_ms: float | None
    tz: str
    now_ms: float
    sim: Any = None
    seed: int = 1


def setting(
    source: str,
    window: tuple[Instant | None, Instant | None],
    tz: str,
    now: Instant | None,
    sim: Any = None,
    seed: int = 1,
) -> Setting:
    """The :class:`Setting` of a report; a window ending before it starts raises ValueError."""
    since_ms, until_ms = instant_ms(window[0], "since"), instant_ms(window[1], "until")
    if since_ms is not None and until_ms is not None and until_ms < since_ms:
        raise ValueError("until: it lies before since")
    return Setting(source, since_ms, until_ms, tz, now_ms(now), sim, seed)


def finish(c: Computed, s: Setting, bar: Any) -> ReportData:
    """The report of what was computed: pair table, traffic, guard replays, twin, figures."""
    pairs, flow = pair_table(c.conversations), traffic(c.conversations)
    guards = guard_replays(c.events) if c.guards is None else c.guards
    bar.update()
    twin = None if s.sim is None else _twin(s.sim, s.seed, c.conversations, _span_hours(c.events))
    bar.update()
    every = c.enriched if c.every_enriched is None else c.every_enriched
    figures = _figures(c.load, c.events, every, c.sessions, c.conversations, c.findings)
    figures["kpis"] = kpis(c.conversations, pairs, flow, c.findings)
    # the computed parts under their names, but the two that only feed the figures
    parts = {f.name: getattr(c, f.name) for f in fields(c)}
    del parts["every_enriched"], parts["guards"]
    named = {k: getattr(s, k) for k in ("source", "tz", "since_ms", "until_ms", "now_ms")}
    # the times shown in the zone, made here once: the views only print them
    shown: dict[str, Any] = {
        "figures": figures,
        "times": shown_times(s.tz, (s.since_ms, s.until_ms), figures, s.now_ms),
        "session_list": listed_sessions(c.sessions, s.tz),
    }
    return ReportData(
        **named, **parts, **shown, pairs=pairs, traffic=flow, guards=guards, twin=twin
    )


def _local(ms: pl.Expr, tz: str, fmt: str) -> pl.Expr:
    """Epoch ms as wall-clock text in ``tz`` (:func:`a2a_lab.time.format_time`: beyond the
    years Polars' strftime reaches, formatted without the zone's rules, no panic)."""
    return format_time(
        ms.cast(pl.Int64).cast(pl.Datetime("ms", "UTC")).dt.convert_time_zone(tz), fmt
    )


def shown_times(
    tz: str,
    window: tuple[float | None, float | None],
    figures: dict[str, Any],
    now_ms: float,
) -> dict[str, str]:
    """The report's instants as the page shows them in ``tz``: the window's ``since`` and
    ``until`` (seconds), the log's ``first`` and ``last`` timed events and the ``clock``
    of session statuses (minutes); "—" for none (:func:`a2a_lab.time.format_time` shows any instant Date holds)."""
    wanted = {
        "since": (window[0], "%Y-%m-%d %H:%M:%S"),
        "until": (window[1], "%Y-%m-%d %H:%M:%S"),
        "first": (figures["first_ms"], "%Y-%m-%d %H:%M"),
        "last": (figures["last_ms"], "%Y-%m-%d %H:%M"),
        "clock": (now_ms, "%Y-%m-%d %H:%M"),
    }
    present = {k: v for k, v in wanted.items() if v[0] is not None}
    row = (
        pl.select(
            _local(pl.lit(int(ms)), tz, fmt).alias(k) for k, (ms, fmt) in present.items()
        ).row(0, named=True)
        if present
        else {}
    )
    return {k: row.get(k) or "—" for k in wanted}


def listed_sessions(sessions: WorkSessionsResult, tz: str) -> pl.DataFrame:
    """:func:`session_rows` with ``last``: each session's last activity as shown in ``tz``
    (minutes; null without one)."""
    return session_rows(sessions).with_columns(
        _local(pl.col("last_ms"), tz, "%Y-%m-%d %H:%M").alias("last")
    )


def collect(
    loaded: LoadResult,
    *,
    source: str,
    window: tuple[Instant | None, Instant | None] = (None, None),
    tz: str = "UTC",
    now: Instant | None = None,
    sim: Any = None,
    seed: int = 1,
    progress: bool | None = None,
) -> ReportData:
    """Compute everything the report shows (:func:`a2a_lab.views.report.report`) from a
    loaded log (the whole frame at once; :func:`a2a_lab.app.report_log.collect_log` reads a
    log file a bucket at a time and gives the same report).

    Parameters
    ----------
    loaded
        The loaded log.
    source
        How the page names the log (its paths).
    window
        ``(since, until)``: keep events with ``since <= time < until`` (None: open).
    tz
        The display time zone (checked by the caller).
    now
        The clock of session statuses and future-time findings (:func:`a2a_lab.time.now_ms`:
        the wall clock unless pinned), the same as ``a2a-lab work-sessions``.
    sim, seed
        A SimConfig (or the path of its JSON) for the twin comparison, and its seed.
    progress
        A stage bar on stderr; None: on unless ``CI`` is set or ``A2A_LAB_PROGRESS=0``.

    Returns
    -------
    ReportData
        Frames and figures; ``figures["kpis"]`` holds the headline answers (:func:`kpis`).
    """
    s = setting(source, window, tz, now, sim, seed)
    events = in_report_window(loaded.events, s)
    with _stages(8, progress) as bar:
        enriched = enrich(events)
        bar.update()
        # the package's one clock: the report and `a2a-lab work-sessions` agree on a status
        sessions = work_sessions(enriched, SessionQuery(unassigned=True), now=s.now_ms)
        bar.update()
        conv = conversations(enriched)
        bar.update()
        findings = check(events, now=s.now_ms)
        bar.update()
        messages = message_index(enriched, sessions)
        bar.update(2)
        computed = Computed(loaded, events, enriched, sessions, conv, findings, messages)
        return finish(computed, s, bar)


def in_report_window(events: pl.DataFrame, s: Setting) -> pl.DataFrame:
    """The events with ``since <= event_ms < until``."""
    if s.since_ms is not None:
        events = events.filter(pl.col("event_ms") >= s.since_ms)
    if s.until_ms is not None:
        events = events.filter(pl.col("event_ms") < s.until_ms)
    return events


def session_rows(sessions: WorkSessionsResult) -> pl.DataFrame:
    """The sessions the page lists, in the dashboard's order (the events without a work
    session last): ``row`` (row of ``sessions.sessions``), ``id, work_session_id, status,
    collab_category, thread_count, event_count``, ``last_ms`` and ``agents`` (sorted, every
    requester and target of its threads, ``unknown`` left out)."""
    per = (
        sessions.threads.select(
            "work_session_id", pl.concat_list(pl.col("from_agent"), pl.col("to_agent")).alias("a")
        )
        .explode("a")
        .filter(pl.col("a").is_not_null() & (pl.col("a") != "unknown"))
        .group_by("work_session_id")
        .agg(pl.col("a").unique().sort().alias("agents"))
    )
    return (
        sessions.sessions.with_row_index("row")
        .select(
            "row",
            "id",
            "work_session_id",
            "status",
            "collab_category",
            "thread_count",
            "event_count",
            pl.col("last_time").dt.epoch("ms").cast(pl.Float64).alias("last_ms"),
        )
        .join(per, on="work_session_id", how="left", nulls_equal=True, maintain_order="left")
        .with_columns(pl.col("agents").fill_null(pl.lit([], dtype=pl.List(pl.String))))
        .sort(pl.col("work_session_id").is_null(), maintain_order=True)
    )
