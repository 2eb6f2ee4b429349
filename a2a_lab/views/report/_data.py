"""The figures and frames a report shows, computed once with the library's public functions.

Everything is aggregated in Polars here; the section renderers only format what this
module returns. Column names of the analysis frames are read in one place each, so the
snake_case rename of the analysis layer is a local edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab._frames import number
from a2a_lab.analysis.checks import SEVERITIES, check, replay_guard
from a2a_lab.analysis.conversations import conversations, pair_stats
from a2a_lab.enrich import enrich
from a2a_lab.io import LoadResult
from a2a_lab.io._decode import file_label
from a2a_lab.sessions import WorkSessionsResult, work_sessions
from a2a_lab.time import MAX_TIME_MS, Instant, instant_ms, now_ms

__all__ = ["GUARDS", "ReportData", "Twin", "collect"]

#: The safety limits replayed in the log-health section: (name, limit, window s, replay options).
GUARDS: tuple[tuple[str, int, float, dict[str, Any]], ...] = (
    ("loop guard", 6, 60.0, {}),
    ("collaborate limit", 10, 300.0, {"types": ("a2a.send",), "ping_pong_only": False}),
)
#: Quantiles of the twin comparison.
TWIN_QUANTILES: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)


@dataclass(frozen=True)
class Twin:
    """A simulated run beside the observed log: quantiles of both, long format."""

    config_name: str
    seed: int
    quantiles: pl.DataFrame  # measure, quantile, source, value
    rates: pl.DataFrame  # measure, observed, simulated


@dataclass(frozen=True)
class ReportData:
    """What the report shows (all frames collected, all figures plain Python numbers)."""

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
    findings: pl.DataFrame
    guards: pl.DataFrame  # name, limit, window_s, counted, blocked, pairs
    twin: Twin | None
    figures: dict[str, Any] = field(default_factory=dict)


def _agents(enriched: pl.DataFrame) -> list[str]:
    names = pl.concat(
        [enriched.get_column(c).cast(pl.String) for c in ("from_agent", "to_agent", "agent_id")]
    )
    return sorted(names.drop_nulls().filter(names.drop_nulls() != "unknown").unique().to_list())


def _guards(events: pl.DataFrame) -> pl.DataFrame:
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


def collect(
    loaded: LoadResult,
    *,
    source: str,
    since: Instant | None,
    until: Instant | None,
    tz: str,
    now: Instant | None,
    sim: Any,
    seed: int,
) -> ReportData:
    """Compute everything the report shows (see :func:`a2a_lab.views.report.report`, which
    has checked ``tz``)."""
    since_ms, until_ms = instant_ms(since, "since"), instant_ms(until, "until")
    if since_ms is not None and until_ms is not None and until_ms < since_ms:
        raise ValueError("until: it lies before since")
    events = loaded.events
    if since_ms is not None:
        events = events.filter(pl.col("event_ms") >= since_ms)
    if until_ms is not None:
        events = events.filter(pl.col("event_ms") < until_ms)
    enriched = enrich(events)
    # the package's one clock (a2a_lab.time.now_ms): the wall clock unless ``now`` pins it,
    # so the report and ``a2a-lab work-sessions`` give a session the same status
    clock_ms = now_ms(now)
    sessions = work_sessions(enriched, now=clock_ms, unassigned=True)
    conv = conversations(enriched)
    pairs = pair_stats(conv)
    findings = check(events, now=clock_ms)
    hours = _span_hours(events)
    twin = None if sim is None else _twin(sim, seed, conv, hours)
    timed = _timed(events)
    severity_counts = dict(findings.group_by("severity").len().iter_rows())
    figures: dict[str, Any] = {
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
    return ReportData(
        source=source,
        tz=tz,
        since_ms=since_ms,
        until_ms=until_ms,
        now_ms=clock_ms,
        load=loaded,
        events=events,
        enriched=enriched,
        sessions=sessions,
        conversations=conv,
        pairs=pairs,
        findings=findings,
        guards=_guards(events),
        twin=twin,
        figures=figures,
    )
