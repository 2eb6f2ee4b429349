"""Fit the simulator to a recorded log: the twin's configuration and every fitted table."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from a2a_lab._frames import number
from a2a_lab.analysis.calibrate._exchanges import MS_COLUMNS, _enriched, _exchanges
from a2a_lab.analysis.calibrate._fits import Family, _median, fit_service_time
from a2a_lab.analysis.calibrate._hidden import behind_hidden, refit_behind_hidden
from a2a_lab.analysis.calibrate._occupancy import run_jobs, with_idle
from a2a_lab.analysis.calibrate._settings import fit_failures, fit_retry, fit_tasks
from a2a_lab.analysis.conversations import exchange_events
from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.sim.config import (
    ENDINGS,
    AgentConfig,
    MessageMix,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    SimConfig,
    WaitPolicy,
)
from a2a_lab.sim.distributions import ServiceTime
from a2a_lab.time import resolve_tz

__all__ = ["Calibration", "calibrate", "fit_log"]

#: How the log names the early endings of :data:`~a2a_lab.sim.config.ENDINGS`.
ENDING_REASONS: Final = {
    "conclusion": "conclusion_detected",
    "minimal": "minimal_content",
    "repetition": "repetition_detected",
    "explicit_skip": "explicit_skip",
    "empty_reply": "empty_reply",
    "agent_error": "agent_error",
}
#: Endings whose reply is not logged as a turn (the turn was attempted all the same).
_UNLOGGED_ENDINGS: Final = ("explicit_skip", "empty_reply", "agent_error")

_KEY = ["conversation_id", "from_agent", "to_agent", "exchange"]


# ----------------------------------------------------------------------------------------
# the calibration
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """A configuration fitted to a log, with every fitted table.

    Attributes
    ----------
    config
        The twin: today's policies, the fitted workload and agents.
    exchanges
        The ``sessions_send`` exchanges fitted (:func:`exchanges`, spawns left out) with
        ``idle`` (the target's run started at the send on an idle session: its latency is
        its service time, :mod:`~a2a_lab.analysis.calibrate._occupancy`).
    spawned
        Exchanges left out because they start a sub-agent.
    start, end
        The log's span (first and last event), UTC.
    rates
        Per directed pair: ``exchanges``, ``rate_per_s``, ``rate_per_h``.
    hourly
        Per local hour: ``exchanges``, ``exposure_h`` (hours of log in that hour of the
        day), ``rate_per_h``, ``multiplier`` (the profile; null without one).
    pair_hours
        Per directed pair and local hour: ``exchanges``, ``rate_per_h``.
    service
        Per agent: ``kind``, ``fit`` (``agent``, or ``pooled`` when it had fewer than
        ``min_samples`` idle replies), ``exchanges`` (as target), ``idle``, ``observed``,
        ``censored`` (idle exchanges used: seen to the end, censored), ``hidden`` (runs
        used with their start in distribution, behind a hidden run: :mod:`._hidden`),
        ``family``,
        ``mean_s``, ``cv``, ``median_s``.
    turns
        Per early ending: ``reason`` (as logged), ``count``, ``turns`` (attempted turns
        that could end so), ``probability``.
    turn_service
        The ping-pong turn time pooled over agents.
    turn_times
        Per agent, the turn-time fit (columns as :attr:`service`, from the turns it spoke
        that started on an idle session).
    failures
        Per error kind: ``kind``, ``level``, ``count``, ``exposure``, ``rate``
        (:func:`~a2a_lab.analysis.calibrate._settings.fit_failures`).
    tasks
        Per task of the log: ``agent_id``, ``task_id``, ``start_time``, ``end_time``,
        ``last_time`` (:func:`~a2a_lab.analysis.calibrate._settings.fit_tasks`).
    outcomes
        Per target agent and overall (``to_agent`` = ``*``): exchanges and shares
        ``replied``, ``timeout``, ``error`` (no reply for another reason), ``blocked``,
        ``incomplete``.
    """

    config: SimConfig
    exchanges: pl.DataFrame = field(repr=False)
    spawned: int
    start: datetime
    end: datetime
    rates: pl.DataFrame = field(repr=False)
    hourly: pl.DataFrame = field(repr=False)
    pair_hours: pl.DataFrame = field(repr=False)
    service: pl.DataFrame = field(repr=False)
    turns: pl.DataFrame = field(repr=False)
    turn_service: ServiceTime | None
    outcomes: pl.DataFrame = field(repr=False)
    turn_times: pl.DataFrame = field(repr=False)
    failures: pl.DataFrame = field(repr=False)
    tasks: pl.DataFrame = field(repr=False)

    @property
    def span_s(self) -> float:
        """The log's span in seconds."""
        return (self.end - self.start).total_seconds()

    @property
    def observed_median_latency_s(self) -> float:
        """Median send → first-reply time of the fitted exchanges that got a reply."""
        return float(self.exchanges.filter(pl.col("outcome") == "replied")["latency_s"].median())  # type: ignore[arg-type]


def _hour_exposure(start_ms: float, end_ms: float, tz: str) -> np.ndarray:
    """Hours of ``[start_ms, end_ms]`` spent in each local hour of the day (24 values).

    The log is cut at whole UTC hours, each piece labelled with its local hour: exact in
    every time zone whose offset is a whole number of hours.
    """
    first = math.floor(start_ms / 3_600_000.0) * 3_600_000.0
    bounds = np.arange(first, end_ms, 3_600_000.0)
    spans = (np.minimum(bounds + 3_600_000.0, end_ms) - np.maximum(bounds, start_ms)) / 3_600_000.0
    hours = (
        pl.Series(bounds)
        .cast(pl.Int64)
        .cast(pl.Datetime("ms", "UTC"))
        .dt.convert_time_zone(tz)
        .dt.hour()
        .to_numpy()
    )
    return np.bincount(hours, weights=spans, minlength=24)


def _fit_table(
    obs: pl.DataFrame, agents: list[str], kinds: dict[str, str], family: Family, min_samples: int
) -> tuple[pl.DataFrame, dict[str, ServiceTime], ServiceTime]:
    """Fits per agent from ``obs`` (to_agent, time_s, censored), pooled where sparse; and the pooled fit."""
    pooled = fit_service_time(
        obs.filter(~pl.col("censored"))["time_s"].to_numpy(),
        obs.filter(pl.col("censored"))["time_s"].to_numpy(),
        family,
    )
    counts = obs.group_by("to_agent").agg(
        (~pl.col("censored")).sum().cast(pl.Int64).alias("observed"),
        pl.col("censored").sum().cast(pl.Int64).alias("censored"),
    )
    enough = set(counts.filter(pl.col("observed") >= min_samples)["to_agent"].to_list())
    fitted: dict[str, ServiceTime] = {}
    rows = []
    for agent in agents:
        if agent in enough:
            mine = obs.filter(pl.col("to_agent") == agent)
            d = fit_service_time(
                mine.filter(~pl.col("censored"))["time_s"].to_numpy(),
                mine.filter(pl.col("censored"))["time_s"].to_numpy(),
                family,
            )
        else:
            d = pooled
        fitted[agent] = d
        rows.append(
            {
                "agent": agent,
                "kind": kinds[agent],
                "fit": "agent" if agent in enough else "pooled",
                "family": family,
                "mean_s": d.mean,
                "cv": getattr(d, "cv", 1.0),
                "median_s": _median(d),
            }
        )
    table = (
        pl.DataFrame(rows)
        .join(counts.rename({"to_agent": "agent"}), on="agent", how="left")
        .with_columns(pl.col("observed", "censored").fill_null(0))
    )
    return table, fitted, pooled


def _jobs(
    ev: pl.DataFrame, all_ex: pl.DataFrame, turn_timeout_ms: float = 120_000.0
) -> pl.DataFrame:
    """Every run the log shows, with whether it started on an idle session (:mod:`._occupancy`).

    ``all_ex`` holds every exchange (spawns too: they occupy sessions all the same), with
    ``_row``.
    """
    turn = pl.col("data").struct.field("turn")
    xe = exchange_events(ev.lazy()).collect()
    # where the requester's side of an exchange runs (its turns): the send's fromSessionType
    # names the session; an agent whose incoming sends all run on its main session shares
    # that session with its requester side only when the requester side is `main` too
    types = xe.filter(pl.col("type") == "a2a.send").select(
        "conversation_id",
        pl.col("requester").alias("from_agent"),
        pl.col("target").alias("to_agent"),
        "exchange",
        js_trim_expr(pl.col("data").struct.field("fromSessionType")).alias("_from_type"),
        js_trim_expr(pl.col("data").struct.field("toSessionType")).alias("_to_type"),
    )
    main_targets = (
        types.group_by("to_agent")
        .agg((pl.col("_to_type") == "main").all().alias("_main"))
        .filter("_main")
        .select(pl.col("to_agent").alias("from_agent"), "_main")
    )
    sides = (
        types.join(main_targets, on="from_agent", how="left")
        .select(
            *_KEY,
            pl.when(pl.col("_main").is_null() | pl.col("_from_type").is_null())
            .then(pl.lit(None, pl.String))
            .when(pl.col("_from_type") == "main")
            .then(pl.lit("target"))
            .otherwise(pl.lit("elsewhere"))
            .alias("requester_side"),
        )
        .unique(_KEY, keep="first", maintain_order=True)
    )
    all_ex = all_ex.join(sides, on=_KEY, how="left")
    replies = (
        xe.lazy()
        .filter((pl.col("type") == "a2a.response") & turn.is_not_null())
        .select(
            "conversation_id",
            pl.col("requester").alias("from_agent"),
            pl.col("target").alias("to_agent"),
            "exchange",
            turn.cast(pl.Int64).alias("turn"),
            "event_ms",
        )
        .collect()
        .join(all_ex.select(*_KEY, "_row"), on=_KEY, how="inner")
        .select("_row", "turn", "event_ms")
    )
    d = pl.col("data")
    skipped = (
        ev.filter(pl.col("type") == "a2a.complete")
        .select(
            js_trim_expr(d.struct.field("conversationId")).alias("conversation_id"),
            "from_agent",
            "to_agent",
            pl.col("event_ms").cast(pl.Float64).alias("_end_ms"),
            (~d.struct.field("announceSkipped")).alias("announce_ran"),
        )
        .unique(["conversation_id", "from_agent", "to_agent", "_end_ms"], keep="first")
    )
    with_announce = (
        all_ex.with_columns(pl.col("_end_ms").cast(pl.Float64))
        .join(skipped, on=["conversation_id", "from_agent", "to_agent", "_end_ms"], how="left")
        .with_columns(
            pl.when(pl.col("announced") == True)  # noqa: E712 (a Polars expression)
            .then(True)
            .otherwise("announce_ran")
            .alias("announce_ran")
        )
    )
    return with_idle(run_jobs(with_announce, replies, turn_timeout_ms))


def _endings(conv: pl.DataFrame) -> pl.DataFrame:
    """The per-turn chance of each early ending of :data:`~a2a_lab.sim.config.ENDINGS`."""
    replied = conv.filter(pl.col("outcome") == "replied")
    # turns attempted per exchange: the logged ones, plus the attempt whose ending left no reply
    unlogged = [ENDING_REASONS[e] for e in _UNLOGGED_ENDINGS]
    with_turns = replied.filter(pl.col("turns").is_not_null()).select(
        "termination_reason",
        (
            pl.col("turns")
            + pl.col("termination_reason").is_in(unlogged).fill_null(False).cast(pl.Float64)
        ).alias("attempts"),
    )
    total = float(with_turns["attempts"].sum())
    after_first = float((with_turns["attempts"] - 1.0).clip(lower_bound=0.0).sum())
    counts = with_turns.group_by("termination_reason").len()
    rows = []
    for ending in ENDINGS:
        reason = ENDING_REASONS[ending]
        count = int(counts.filter(pl.col("termination_reason") == reason)["len"].sum())
        exposed = after_first if ending == "repetition" else total
        rows.append(
            {
                "ending": ending,
                "reason": reason,
                "count": count,
                "turns": exposed,
                "probability": count / exposed if exposed > 0 else 0.0,
            }
        )
    return pl.DataFrame(rows)


def fit_log(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    tz: str | None = None,
    family: Family = "lognormal",
    min_samples: int = 8,
    hourly: bool | None = None,
    only_idle: bool = True,
    wait: WaitPolicy | None = None,
    ping_pong: PingPongPolicy | None = None,
    timezone: str | None = None,
) -> Calibration:
    """Fit the simulator to a recorded log and return the twin with every fitted table.

    Parameters
    ----------
    events
        The log's event frame (:func:`a2a_lab.load`), enriched or not; a LazyFrame is
        collected.
    tz
        The gateway's local time zone: hours of the day, and the simulated clock's start
        (the fitted hourly profile is in this zone). Default UTC, like every ``tz`` of the
        package; ``timezone`` is its deprecated name.
    family
        Service and turn time family (:func:`fit_service_time`).
    min_samples
        Fewest uncensored idle replies for a target's own service fit.
    hourly
        Fit an hourly arrival profile (None: when the log covers every hour of the day).
    only_idle
        Fit service times from exchanges that found the target idle (True), or from all.
    wait, ping_pong
        The wait and ping-pong policies the log was written under (default: today's); their
        limits are the censoring points of the service and turn times.

    Returns
    -------
    Calibration
        Exchanges of agents whose ids the simulator cannot take (with ``:`` or white space)
        are left out of it.

    Examples
    --------
    >>> import a2a_lab as al
    >>> cal = fit_log(al.load(al.samples.sample_dir()).events)
    >>> cal.spawned, cal.exchanges.height, cal.config.target_session
    (131, 496, 'main')
    >>> round(cal.config.total_rate_per_s * cal.span_s) == cal.exchanges.height
    True
    """
    timezone = resolve_tz(tz, timezone, where="fit_log")
    if isinstance(events, pl.LazyFrame):
        events = events.collect()
    wait = wait if wait is not None else WaitPolicy()
    ping_pong = ping_pong if ping_pong is not None else PingPongPolicy()
    ev = _enriched(events)
    times = ev.filter(pl.col("event_ms") > 0)["event_ms"]
    if times.is_empty():
        raise ValueError("the log has no timed events")
    log_start, log_end = float(times.min()), float(times.max())  # type: ignore[arg-type]
    span_s = (log_end - log_start) / 1000.0
    all_ex = _exchanges(ev).with_row_index("_row")
    spawned = int(all_ex["spawned"].sum())
    conv = all_ex.filter(
        ~pl.col("spawned")
        & pl.col("has_send")
        & pl.col("from_agent").is_not_null()
        & pl.col("to_agent").is_not_null()
    )
    if conv.is_empty() or span_s <= 0:
        raise ValueError("the log has no sessions_send exchanges over a positive span to fit")
    jobs = _jobs(ev, all_ex, ping_pong.turn_timeout_s * 1000.0)
    first_run = jobs.filter(pl.col("job") == "first").select("_row", "idle", "run_start")
    conv = conv.join(first_run, on="_row", how="left").with_columns(pl.col("idle").fill_null(False))

    # -- agents ----------------------------------------------------------------------------
    spawn_targets = set(ev.filter(pl.col("type") == "a2a.spawn")["to_agent"].drop_nulls().to_list())
    agents = sorted(set(conv["from_agent"].to_list()) | set(conv["to_agent"].to_list()))
    bad = [a for a in agents if not a or any(ch.isspace() for ch in a) or ":" in a]
    if bad:
        conv = conv.filter(~pl.col("from_agent").is_in(bad) & ~pl.col("to_agent").is_in(bad))
        agents = [a for a in agents if a not in bad]
    # a sub-agent only ever runs as spawned sessions: spawned and never sent to, or every
    # session type the sends give it is `subagent`
    received = set(conv["to_agent"].to_list())
    d = pl.col("data")
    typed = pl.concat(
        [
            ev.filter(pl.col("type") == "a2a.send").select(
                pl.col(agent).alias("agent"), js_trim_expr(d.struct.field(field)).alias("kind")
            )
            for agent, field in (("from_agent", "fromSessionType"), ("to_agent", "toSessionType"))
        ]
    ).filter(pl.col("kind").is_not_null() & (pl.col("kind") != "unknown"))
    only_sub = set(
        typed.group_by("agent")
        .agg((pl.col("kind") == "subagent").all().alias("sub"))
        .filter("sub")["agent"]
        .to_list()
    )
    kinds = {
        a: "subagent" if (a in spawn_targets and a not in received) or a in only_sub else "main"
        for a in agents
    }

    # -- arrivals ----------------------------------------------------------------------------
    rates = (
        conv.group_by("from_agent", "to_agent")
        .agg(pl.len().cast(pl.Int64).alias("exchanges"))
        .with_columns((pl.col("exchanges") / span_s).alias("rate_per_s"))
        .with_columns((pl.col("rate_per_s") * 3600.0).alias("rate_per_h"))
        .sort("from_agent", "to_agent")
    )
    exposure = _hour_exposure(log_start, log_end, timezone)
    local_hour = (
        pl.col("start_time").dt.convert_time_zone(timezone).dt.hour().cast(pl.Int64).alias("hour")
    )
    hours = pl.DataFrame({"hour": np.arange(24, dtype=np.int64), "exposure_h": exposure})
    pair_hours = (
        conv.group_by("from_agent", "to_agent", local_hour)
        .agg(pl.len().cast(pl.Int64).alias("exchanges"))
        .join(hours, on="hour", how="left")
        .with_columns((pl.col("exchanges") / pl.col("exposure_h")).alias("rate_per_h"))
        .sort("from_agent", "to_agent", "hour")
    )
    use_profile = bool((exposure >= 1.0).all()) if hourly is None else hourly
    if use_profile and not (exposure > 0).all():
        raise ValueError("an hourly profile needs a log that covers every hour of the day")
    per_hour = hours.join(
        conv.group_by(local_hour).agg(pl.len().cast(pl.Int64).alias("exchanges")),
        on="hour",
        how="left",
    ).with_columns(pl.col("exchanges").fill_null(0))
    per_hour = per_hour.with_columns(
        (pl.col("exchanges") / pl.col("exposure_h")).alias("rate_per_h")
    )
    profile: list[float] | None = None
    if use_profile:
        per_hour = per_hour.with_columns(
            (pl.col("rate_per_h") / pl.col("rate_per_h").mean()).alias("multiplier")
        )
        profile = per_hour["multiplier"].to_list()
    else:
        per_hour = per_hour.with_columns(pl.lit(None, dtype=pl.Float64).alias("multiplier"))
    per_hour = per_hour.select("hour", "exchanges", "exposure_h", "rate_per_h", "multiplier")

    # -- service times (queueing taken out: runs that started on an idle session) --------------
    # an error says nothing about the run's length (it came at a random point of it)
    # from the run's start where the log tells it (only_idle), else from the send
    began = pl.col("run_start") if only_idle else pl.col("_start_ms").cast(pl.Float64)
    fitted = conv.filter(began.is_not_null()).with_columns(began.alias("_began"))
    reply_ms = pl.col("_start_ms") + pl.col("_first_reply_ms")
    obs = pl.concat(
        [
            fitted.filter(pl.col("_first_reply_ms").is_not_null()).select(
                "to_agent",
                ((reply_ms - pl.col("_began")) / 1000.0).alias("time_s"),
                pl.lit(False).alias("censored"),
            ),
            # no reply within the wait limit: the run took longer than the rest of the wait
            fitted.filter(
                (pl.col("outcome") == "no_reply") & (pl.col("outcome_reason") == "timeout")
            ).select(
                "to_agent",
                (
                    (pl.col("_start_ms") + wait.max_wait_s * 1000.0 - pl.col("_began")) / 1000.0
                ).alias("time_s"),
                pl.lit(True).alias("censored"),
            ),
            # still waiting when the log ends; an older exchange without reply or outcome lost
            # its events (the wait limit would have ended it), so it tells nothing
            fitted.filter(
                (pl.col("outcome") == "incomplete")
                & pl.col("_first_reply_ms").is_null()
                & (pl.col("_start_ms") > log_end - wait.max_wait_s * 1000.0)
            ).select(
                "to_agent",
                ((log_end - pl.col("_began")) / 1000.0).alias("time_s"),
                pl.lit(True).alias("censored"),
            ),
        ]
    ).filter(pl.col("time_s") > 0)
    service, service_of, _ = _fit_table(obs, agents, kinds, family, min_samples)
    service = (
        conv.group_by(pl.col("to_agent").alias("agent"))
        .agg(
            pl.len().cast(pl.Int64).alias("exchanges"),
            pl.col("idle").sum().cast(pl.Int64).alias("idle"),
        )
        .join(service, on="agent", how="right")
        .with_columns(pl.col("exchanges", "idle").fill_null(0))
        .select(
            "agent",
            "kind",
            "fit",
            "exchanges",
            "idle",
            "observed",
            "censored",
            "family",
            "mean_s",
            "cv",
            "median_s",
        )
        .sort("agent")
    )

    # -- turns -----------------------------------------------------------------------------------
    began = (
        pl.coalesce("run_start", pl.when(pl.col("idle")).then("request"))
        if only_idle
        else pl.col("request")
    ).alias("_began")
    turn_jobs = jobs.with_columns(began).filter(pl.col("_began").is_not_null())
    turn_obs = pl.concat(
        [
            turn_jobs.filter(pl.col("job") == "turn").select(
                pl.col("agent").alias("to_agent"),
                ((pl.col("end") - pl.col("_began")) / 1000.0).alias("time_s"),
                pl.lit(False).alias("censored"),
            ),
            turn_jobs.filter(pl.col("timed_out")).select(
                pl.col("agent").alias("to_agent"),
                (
                    (pl.col("request") + ping_pong.turn_timeout_s * 1000.0 - pl.col("_began"))
                    / 1000.0
                ).alias("time_s"),
                pl.lit(True).alias("censored"),
            ),
        ]
    ).filter(pl.col("to_agent").is_in(agents) & (pl.col("time_s") > 0))
    turn_times, turn_of, turn_time = (
        _fit_table(turn_obs, agents, kinds, family, min_samples)
        if not turn_obs.filter(~pl.col("censored")).is_empty()
        else (turn_obs.clear(), dict(service_of), None)
    )
    # -- runs queued behind a turn that timed out: their start in distribution (:mod:`._hidden`) --
    refit = service.filter(pl.col("fit") == "agent")["agent"].to_list() if only_idle else []
    hidden = behind_hidden(jobs, all_ex, ping_pong.turn_timeout_s * 1000.0).filter(
        pl.col("_row").is_in(conv["_row"].implode())
    )
    used = refit_behind_hidden(
        hidden, obs, service_of, turn_of, refit, family, wait.max_wait_s * 1000.0
    )
    refitted = pl.DataFrame(
        {
            "agent": agents,
            "hidden": [used.get(a, 0) for a in agents],
            "mean_s": [service_of[a].mean for a in agents],
            "cv": [float(getattr(service_of[a], "cv", 1.0)) for a in agents],
            "median_s": [_median(service_of[a]) for a in agents],
        },
        schema_overrides={"hidden": pl.Int64},
    )
    service = service.drop("mean_s", "cv", "median_s").join(refitted, on="agent", how="left")
    service = service.select(
        *("agent", "kind", "fit", "exchanges", "idle", "observed", "censored", "hidden"),
        *("family", "mean_s", "cv", "median_s"),
    )
    endings = _endings(conv)
    logged_max = conv["configured_max_turns"].drop_nulls()
    max_turns = int(logged_max.mode().sort()[-1]) if logged_max.len() else ping_pong.max_turns
    pp = ping_pong.model_copy(
        update={
            "max_turns": max_turns,
            "endings": dict(zip(endings["ending"], endings["probability"], strict=True)),
        }
    )
    payloads = conv.filter(pl.col("payload_type").is_not_null())
    plain = conv.filter(pl.col("payload_type").is_null() & pl.col("intent").is_not_null())
    intents = dict(plain.group_by("intent").len().iter_rows())
    mix_fields: dict[str, Any] = {"payload_share": payloads.height / conv.height}
    if intents:
        mix_fields["intents"] = {k: float(v) for k, v in intents.items()}
    if payloads.height:
        mix_fields["payload_types"] = {
            k: float(v) for k, v in payloads.group_by("payload_type").len().iter_rows()
        }
    mix = MessageMix.model_validate(mix_fields)

    # -- sessions ----------------------------------------------------------------------------------
    d = pl.col("data")
    sends = (
        ev.filter((pl.col("type") == "a2a.send") & pl.col("from_agent").is_in(agents))
        .select(
            "from_agent",
            js_trim_expr(d.struct.field("fromSessionType")).alias("from_type"),
            js_trim_expr(d.struct.field("targetSessionKey")).alias("target_key"),
        )
        .filter(~pl.col("target_key").fill_null("").str.contains(":subagent:", literal=True))
    )
    main_sends = sends.filter(pl.col("from_agent").replace_strict(kinds, default="main") == "main")
    typed = main_sends.filter(pl.col("from_type").is_not_null())
    channel_share = (
        number((~typed["from_type"].is_in(["main", "subagent"])).mean())
        if typed.height
        else SimConfig().channel_share
    )
    keyed = sends.filter(pl.col("target_key").is_not_null())
    a2a_share = (
        number(keyed["target_key"].str.contains(":a2a:", literal=True).mean())
        if keyed.height
        else 0.0
    )

    # -- outcomes -------------------------------------------------------------------------------------
    outcome = pl.col("outcome")
    shares = [
        pl.len().cast(pl.Int64).alias("exchanges"),
        (outcome == "replied").mean().alias("replied"),
        ((outcome == "no_reply") & (pl.col("outcome_reason") == "timeout")).mean().alias("timeout"),
        ((outcome == "no_reply") & (pl.col("outcome_reason") != "timeout")).mean().alias("error"),
        (outcome == "concurrency_blocked").mean().alias("blocked"),
        (outcome == "incomplete").mean().alias("incomplete"),
    ]
    outcomes = pl.concat(
        [
            conv.group_by("to_agent").agg(*shares).sort("to_agent"),
            conv.select(pl.lit("*").alias("to_agent"), *shares),
        ]
    )

    # -- failures, retries, tasks ------------------------------------------------------------------------
    retry_events = ev.filter(pl.col("type") == "a2a.retry").select(
        pl.col("data").struct.field("errorCode").alias("code"),
        pl.col("data").struct.field("maxAttempts").alias("max_attempts"),
    )
    failure_policy, failures = fit_failures(conv, retry_events["code"], wait)
    task_policy, tasks = fit_tasks(ev, kinds)

    # -- the configuration -----------------------------------------------------------------------------
    zone = ZoneInfo(timezone)
    start = datetime.fromtimestamp(log_start / 1000.0, tz=UTC)
    config = SimConfig(
        agents=[
            AgentConfig(id=a, kind=kinds[a], service=service_of[a], turn_service=turn_of[a])
            for a in agents
        ],
        workload=PoissonArrivals(
            pairs=[
                PairRate(from_agent=f, to_agent=t, rate_per_s=r)
                for f, t, r in rates.select("from_agent", "to_agent", "rate_per_s").iter_rows()
            ],
            hourly_profile=profile,
        ),
        n_messages=None,
        duration_s=span_s,
        mix=mix,
        channel_share=channel_share,
        wait=wait,
        ping_pong=pp,
        target_session="a2a" if a2a_share > 0.5 else "main",
        start=start.astimezone(zone),
        tasks=task_policy,
        failures=failure_policy,
        retry=fit_retry(retry_events["max_attempts"]),
    )
    return Calibration(
        config=config,
        exchanges=conv.drop(MS_COLUMNS),
        spawned=spawned,
        start=start,
        end=datetime.fromtimestamp(log_end / 1000.0, tz=UTC),
        rates=rates,
        hourly=per_hour,
        pair_hours=pair_hours,
        service=service,
        turns=endings,
        turn_service=turn_time,
        outcomes=outcomes,
        turn_times=turn_times.select(
            "agent", "kind", "fit", "observed", "censored", "family", "mean_s", "cv", "median_s"
        )
        if turn_times.height
        else turn_times,
        failures=failures,
        tasks=tasks,
    )


def calibrate(events: pl.DataFrame, **options: Any) -> SimConfig:
    """The simulator configuration fitted to a recorded log (a digital twin).

    Parameters
    ----------
    events
        The log's event frame (:func:`a2a_lab.load`).
    **options
        The options of :func:`fit_log` (time zone, distribution family, …).

    Returns
    -------
    SimConfig
        Today's policies with the log's arrival rates (per directed pair, with an hourly
        profile), service times per target agent (censored at the wait limit, queueing
        taken out), turn times, early-ending chances and message mix. The module
        documentation says how each is fitted.

    Examples
    --------
    >>> import a2a_lab as al
    >>> from a2a_lab.sim import simulate
    >>> twin = calibrate(al.load(al.samples.sample_dir()).events)
    >>> sorted(a.id for a in twin.agents if a.kind == "main")
    ['bada', 'eden', 'haneul', 'main', 'ruda', 'seum']
    >>> simulate(twin, seed=1).summary()["messages"] > 400
    True
    """
    return fit_log(events, **options).config
