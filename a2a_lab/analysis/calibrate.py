"""Fit the simulator to a recorded log (a digital twin), then compare the twin with the log.

:func:`calibrate` reads a coordination log and returns a :class:`~a2a_lab.sim.SimConfig` of
today's policies whose workload and agents are fitted to it; :func:`fit_log` returns the
same configuration with every fitted table (:class:`Calibration`). :func:`compare` holds a
simulated log against the recorded one (quantiles and Kolmogorov-Smirnov statistics of the
first-reply latency per pair and of the turns), :func:`comparison_chart` draws it::

    import a2a_lab as al
    from a2a_lab.analysis.calibrate import calibrate, compare
    from a2a_lab.sim import simulate

    events = al.load(logs).events
    twin = calibrate(events)
    cmp = compare([simulate(twin, seed=k) for k in range(5)], events)
    cmp.overall, cmp.latency, cmp.turns

**What is fitted, and how.** The unit is the ``sessions_send`` exchange of
:func:`a2a_lab.analysis.conversations.conversations`: a send, the target's first reply, ping-pong
turns, the complete. Exchanges that start a sub-agent (``sessions_spawn``: an ``a2a.spawn``
event of the same conversation and direction at most :data:`SPAWN_WINDOW_MS` before the
send) are left out: their result comes back when the sub-agent's whole run ends, with no
wait limit, a path the simulator does not model (:attr:`Calibration.spawned` counts them).

- *Arrivals*: Poisson rates per directed pair, the pair's exchanges over the log's span
  (first to last event); with a day or more of log, an hourly profile (local hour in
  ``timezone``): exchanges per hour of the day over the time the log covered that hour,
  as multipliers of mean 1 (:attr:`Calibration.hourly`, and per pair
  :attr:`Calibration.pair_hours`).
- *Service time per target agent* (the agent's run for a received message): the send →
  first reply time (``first_reply_s``), fitted by maximum likelihood with
  :class:`scipy.stats.CensoredData`. An exchange that timed out (``no_reply``, reason
  ``timeout``) is right-censored at the wait limit: the run took longer than the requester
  waited. One still unanswered when the log ends is censored at the end of the log. Other
  failures (errors, gate refusals) say nothing about the run time and are left out.
  **Queueing is taken out by fitting only exchanges that found the target idle**: no other
  exchange of the target (as target or requester) had started and not yet completed when
  the send arrived, so the measured time is the run itself (plus the gateway's overhead of
  well under a second). A target with fewer than ``min_samples`` such replies gets the fit
  pooled over all targets.
- *Ping-pong turns*: the time of a turn (from the previous reply to the turn's reply),
  pooled over agents, right-censored at the turn timeout for turns that timed out; the
  maximum turns (the logged ``configuredMaxTurns``); per turn, the chance of each early
  ending of :data:`~a2a_lab.sim.config.ENDINGS` — its count over the turns that could have
  ended that way (a repetition needs a previous ping-pong reply, so only turns from the
  second on count for it). The intents and payload types of the messages, which decide
  each exchange's turn budget by the reference rules, are their shares in the log.
- *Sessions*: the share of main-agent sends from a channel session (``fromSessionType``
  neither ``main`` nor ``subagent``), and the target session (``main``, unless most sends
  target ``agent:<id>:a2a:<conversation>`` sessions). Agents that the log only spawns
  (never a ``sessions_send`` target) run as sub-agents.
- *Policies* (gate, wait limit, turn timeout, announce step, tasks) stay at today's
  reference values; outcome shares (:attr:`Calibration.outcomes`) are reported, and the
  twin's timeouts and refusals come from its fitted times and its gate.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal
from zoneinfo import ZoneInfo

import altair as alt
import numpy as np
import polars as pl
from scipy import stats

from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab._frames import same_kind
from a2a_lab.analysis.conversations import _conversations_of, exchange_events
from a2a_lab.enrich import enrich
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
from a2a_lab.sim.distributions import Exponential, Gamma, Lognormal, ServiceTime
from a2a_lab.sim.run import SimResult

__all__ = [
    "SPAWN_WINDOW_MS",
    "Calibration",
    "Comparison",
    "calibrate",
    "compare",
    "comparison_chart",
    "exchanges",
    "fit_log",
    "fit_service_time",
]

#: Most time between an ``a2a.spawn`` and the send of the exchange it starts.
SPAWN_WINDOW_MS: Final = 60_000.0
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
Family = Literal["lognormal", "gamma", "exponential"]

_KEY = ["conversation_id", "from_agent", "to_agent", "exchange"]


# ----------------------------------------------------------------------------------------
# exchanges of a log
# ----------------------------------------------------------------------------------------


def _enriched(events: pl.DataFrame) -> pl.DataFrame:
    return events if "from_agent" in events.columns and "to_agent" in events.columns else enrich(events)


@same_kind(collect=True)
def exchanges(events: pl.DataFrame) -> pl.DataFrame:
    """The exchanges of a log with what calibration needs: spawns flagged, times in seconds.

    Parameters
    ----------
    events
        An event frame: loaded, enriched or simulated.

    Returns
    -------
    pl.DataFrame
        :func:`~a2a_lab.analysis.conversations.conversations` plus ``spawned`` (the exchange starts a
        sub-agent: an ``a2a.spawn`` of its conversation and direction came at most
        :data:`SPAWN_WINDOW_MS` before its send) and ``latency_s`` (send → first reply).

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...   {"type": "a2a.spawn", "ts": 0, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "w"}},
    ...   {"type": "a2a.send", "ts": 5, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "w", "message": "go"}},
    ...   {"type": "a2a.response", "ts": 900000, "data": {"conversationId": "c", "fromAgent": "w", "toAgent": "a", "message": "done"}},
    ...   {"type": "a2a.send", "ts": 1000, "data": {"conversationId": "d", "fromAgent": "a", "toAgent": "b", "message": "hi"}},
    ...   {"type": "a2a.response", "ts": 4000, "data": {"conversationId": "d", "fromAgent": "b", "toAgent": "a", "message": "ok"}},
    ... ])
    >>> exchanges(ev).select("to_agent", "spawned", "latency_s").rows()
    [('w', True, 899.995), ('b', False, 3.0)]
    """
    return _exchanges(events).drop(_MS_COLUMNS)


#: The exact float-ms times :func:`_exchanges` adds for the busy-time arithmetic.
_MS_COLUMNS = ("_start_ms", "_end_ms", "_first_reply_ms")


def _exchanges(events: pl.DataFrame) -> pl.DataFrame:
    """:func:`exchanges` plus the :data:`_MS_COLUMNS`."""
    ev = _enriched(events)
    conv = _conversations_of(exchange_events(ev.lazy()), with_ms=True).with_row_index("_row")
    spawns = ev.filter(pl.col("type") == "a2a.spawn").select(
        js_trim_expr(pl.col("data").struct.field("conversationId")).alias("conversation_id"),
        "from_agent",
        "to_agent",
        pl.col("event_ms").alias("_spawn_ms"),
    )
    spawned_rows = (
        conv.select("_row", "conversation_id", "from_agent", "to_agent", "_start_ms")
        .join(spawns, on=["conversation_id", "from_agent", "to_agent"], how="inner")
        .filter((pl.col("_start_ms") - pl.col("_spawn_ms")).is_between(0.0, SPAWN_WINDOW_MS))
        .get_column("_row")
    )
    return conv.with_columns(
        pl.col("_row").is_in(spawned_rows.implode()).alias("spawned"),
        pl.col("first_reply_s").alias("latency_s"),
    ).drop("_row")


# ----------------------------------------------------------------------------------------
# censored fits
# ----------------------------------------------------------------------------------------


def fit_service_time(
    observed_s: Sequence[float] | np.ndarray,
    censored_s: Sequence[float] | np.ndarray = (),
    family: Family = "lognormal",
) -> ServiceTime:
    """Maximum-likelihood fit of a service-time distribution to right-censored times.

    Parameters
    ----------
    observed_s
        Times seen to the end (seconds, positive).
    censored_s
        Lower bounds of times that were still running when observation stopped.
    family
        ``lognormal`` and ``gamma`` (location 0, fitted with
        :class:`scipy.stats.CensoredData`) or ``exponential`` (closed form: total time over
        completed runs).

    Returns
    -------
    ServiceTime
        The simulator's distribution (:class:`~a2a_lab.sim.Lognormal` and
        :class:`~a2a_lab.sim.Gamma` by mean and coefficient of variation).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.lognormal(np.log(30.0), 0.8, 4000)
    >>> cut = 60.0  # a wait limit: a fifth of the runs take longer and are censored
    >>> d = fit_service_time(x[x <= cut], np.full(int((x > cut).sum()), cut))
    >>> true_mean = 30.0 * math.exp(0.8**2 / 2)
    >>> abs(d.mean / true_mean - 1) < 0.03, round(d.sigma, 2)
    (True, 0.8)
    >>> biased = fit_service_time(x[x <= cut])  # dropping the censored runs underestimates
    >>> biased.mean < 0.7 * d.mean
    True
    """
    x = np.asarray(observed_s, dtype=float)
    c = np.asarray(censored_s, dtype=float)
    if x.size == 0:
        raise ValueError("a fit needs at least one observed (uncensored) time")
    if (x <= 0).any() or (c <= 0).any() or not (np.isfinite(x).all() and np.isfinite(c).all()):
        raise ValueError("times must be positive and finite")
    if family == "exponential":
        return Exponential(mean_s=float((x.sum() + c.sum()) / x.size))
    data = stats.CensoredData(uncensored=x, right=c)
    if family == "lognormal":
        sigma, _, scale = stats.lognorm.fit(data, floc=0)
        return Lognormal(mean_s=float(scale * math.exp(sigma**2 / 2)), cv=float(math.sqrt(math.expm1(sigma**2))))
    if family == "gamma":
        shape, _, scale = stats.gamma.fit(data, floc=0)
        return Gamma(mean_s=float(shape * scale), cv=float(1.0 / math.sqrt(shape)))
    raise ValueError(f"unknown family {family!r}: choose lognormal, gamma or exponential")


def _median(d: ServiceTime) -> float:
    return float(d.ppf(np.array([0.5]))[0])


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
        ``idle`` (the target was idle at the send: used for the service fit).
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
        ``censored`` (idle exchanges used: seen to the end, censored), ``family``,
        ``mean_s``, ``cv``, ``median_s``.
    turns
        Per early ending: ``reason`` (as logged), ``count``, ``turns`` (attempted turns
        that could end so), ``probability``; and the turn-time fit in :attr:`turn_service`.
    turn_service
        The pooled ping-pong turn time.
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
    turn_service: ServiceTime
    outcomes: pl.DataFrame = field(repr=False)

    @property
    def span_s(self) -> float:
        """The log's span in seconds."""
        return (self.end - self.start).total_seconds()

    @property
    def observed_median_latency_s(self) -> float:
        """Median send → first-reply time of the fitted exchanges that got a reply."""
        return float(self.exchanges.filter(pl.col("outcome") == "replied")["latency_s"].median())  # type: ignore[arg-type]


def _quiet_flags(conv: pl.DataFrame, log_end_ms: float, hidden_ms: float) -> pl.DataFrame:
    """Whether each exchange found its target idle, and whether it ran alone.

    An exchange occupies both its agents from its send until its complete (else its first
    reply, else the end of the log). A run whose requester got no reply (no reply in time,
    refused by the gate) is not cancelled: it may go on after the complete, so such an
    exchange occupies its target for ``hidden_ms`` longer. Sorted by start, an agent is
    busy at a send when the latest end among its earlier exchanges is after that send.

    Returns ``idle`` (the target was not busy at the send) and ``isolated`` (neither agent
    was busy at the send, and neither started another exchange before this one ended).
    """
    stop = pl.coalesce("_end_ms", pl.col("_start_ms") + pl.col("_first_reply_ms"), pl.lit(log_end_ms))
    unanswered = pl.col("outcome").is_in(["no_reply", "concurrency_blocked"])
    rows = conv.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"),
        "from_agent",
        "to_agent",
        pl.col("_start_ms").alias("start"),
        stop.alias("stop"),
        (stop + pl.when(unanswered).then(pl.lit(hidden_ms)).otherwise(0.0)).alias("target_stop"),
    )
    occupancy = (
        pl.concat(
            [
                rows.select(
                    "_row", pl.col("to_agent").alias("agent"), "start", pl.col("target_stop").alias("stop"),
                    pl.lit(True).alias("as_target"),
                ),
                rows.filter(pl.col("from_agent") != pl.col("to_agent")).select(
                    "_row", pl.col("from_agent").alias("agent"), "start", "stop", pl.lit(False).alias("as_target")
                ),
            ]
        )
        .sort("agent", "start", "_row")
        .with_columns(
            pl.col("stop").cum_max().shift(1).over("agent").alias("busy_until"),
            pl.col("start").shift(-1).over("agent").alias("next_start"),
        )
        .with_columns(
            (pl.col("busy_until").is_null() | (pl.col("busy_until") <= pl.col("start"))).alias("free"),
            (pl.col("next_start").is_null() | (pl.col("next_start") >= pl.col("stop"))).alias("alone"),
        )
    )
    return (
        occupancy.group_by("_row")
        .agg(
            pl.col("free").filter(pl.col("as_target")).first().alias("idle"),
            (pl.col("free") & pl.col("alone")).all().alias("isolated"),
        )
        .sort("_row")
        .select("idle", "isolated")
    )


def _hour_exposure(start_ms: float, end_ms: float, tz: str) -> np.ndarray:
    """Hours of ``[start_ms, end_ms]`` spent in each local hour of the day (24 values).

    The log is cut at whole UTC hours, each piece labelled with its local hour: exact in
    every time zone whose offset is a whole number of hours.
    """
    first = math.floor(start_ms / 3_600_000.0) * 3_600_000.0
    bounds = np.arange(first, end_ms, 3_600_000.0)
    spans = (np.minimum(bounds + 3_600_000.0, end_ms) - np.maximum(bounds, start_ms)) / 3_600_000.0
    hours = (
        pl.Series(bounds).cast(pl.Int64).cast(pl.Datetime("ms", "UTC")).dt.convert_time_zone(tz).dt.hour().to_numpy()
    )
    return np.bincount(hours, weights=spans, minlength=24)


def _fit_table(
    obs: pl.DataFrame, agents: list[str], kinds: dict[str, str], family: Family, min_samples: int
) -> tuple[pl.DataFrame, dict[str, ServiceTime]]:
    """Service fits per agent from ``obs`` (toAgent, time_s, censored), pooled where sparse."""
    pooled = fit_service_time(
        obs.filter(~pl.col("censored"))["time_s"].to_numpy(), obs.filter(pl.col("censored"))["time_s"].to_numpy(), family
    )
    counts = obs.group_by("to_agent").agg(
        (~pl.col("censored")).sum().cast(pl.Int64).alias("observed"), pl.col("censored").sum().cast(pl.Int64).alias("censored")
    )
    enough = set(counts.filter(pl.col("observed") >= min_samples)["to_agent"].to_list())
    fitted: dict[str, ServiceTime] = {}
    rows = []
    for agent in agents:
        if agent in enough:
            mine = obs.filter(pl.col("to_agent") == agent)
            d = fit_service_time(
                mine.filter(~pl.col("censored"))["time_s"].to_numpy(), mine.filter(pl.col("censored"))["time_s"].to_numpy(), family
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
    table = pl.DataFrame(rows).join(counts.rename({"to_agent": "agent"}), on="agent", how="left").with_columns(
        pl.col("observed", "censored").fill_null(0)
    )
    return table, fitted


def _turn_fits(
    ev: pl.DataFrame, conv: pl.DataFrame, family: Family, turn_timeout_s: float
) -> tuple[ServiceTime, pl.DataFrame]:
    """The pooled turn time and the per-turn chances of each early ending."""
    replied = conv.filter(pl.col("outcome") == "replied")
    # turn times from exchanges that ran alone: no queue on either agent's session
    reply_at = replied.filter(pl.col("isolated")).select(*_KEY, (pl.col("_start_ms") + pl.col("_first_reply_ms")).alias("_reply_ms"), "termination_reason")
    turn = pl.col("data").struct.field("turn")
    responses = (
        exchange_events(ev.lazy())
        .filter((pl.col("type") == "a2a.response") & turn.is_not_null())
        .select(
            "conversation_id",
            pl.col("requester").alias("from_agent"),
            pl.col("target").alias("to_agent"),
            "exchange",
            turn.alias("turn"),
            "event_ms",
        )
        .collect()
        .join(reply_at, on=_KEY, how="inner")
        .sort(*_KEY, "turn", "event_ms")
    )
    gaps = responses.with_columns(
        (pl.col("event_ms") - pl.col("event_ms").shift(1).over(_KEY).fill_null(pl.col("_reply_ms"))).alias("gap_ms")
    ).filter(pl.col("gap_ms") > 0)
    timed_out = replied.filter(pl.col("isolated") & (pl.col("termination_reason") == "turn_timeout")).height
    turn_time = fit_service_time(
        (gaps["gap_ms"] / 1000.0).to_numpy(), np.full(timed_out, turn_timeout_s), family
    )
    # turns attempted per exchange: the logged ones, plus the attempt whose ending left no reply
    unlogged = [ENDING_REASONS[e] for e in _UNLOGGED_ENDINGS]
    with_turns = replied.filter(pl.col("turns").is_not_null()).select(
        "termination_reason",
        (pl.col("turns") + pl.col("termination_reason").is_in(unlogged).fill_null(False).cast(pl.Float64)).alias("attempts"),
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
            {"ending": ending, "reason": reason, "count": count, "turns": exposed,
             "probability": count / exposed if exposed > 0 else 0.0}
        )
    return turn_time, pl.DataFrame(rows)


def fit_log(
    events: pl.DataFrame,
    *,
    timezone: str = "Asia/Seoul",
    family: Family = "lognormal",
    min_samples: int = 8,
    hourly: bool | None = None,
    only_idle: bool = True,
    wait: WaitPolicy | None = None,
    ping_pong: PingPongPolicy | None = None,
) -> Calibration:
    """Fit the simulator to a recorded log and return the twin with every fitted table.

    Parameters
    ----------
    events
        The log's event frame (:func:`a2a_lab.load`), enriched or not.
    timezone
        The gateway's local time zone: hours of the day, and the simulated clock's start.
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
    wait = wait if wait is not None else WaitPolicy()
    ping_pong = ping_pong if ping_pong is not None else PingPongPolicy()
    ev = _enriched(events)
    times = ev.filter(pl.col("event_ms") > 0)["event_ms"]
    if times.is_empty():
        raise ValueError("the log has no timed events")
    log_start, log_end = float(times.min()), float(times.max())  # type: ignore[arg-type]
    span_s = (log_end - log_start) / 1000.0
    all_ex = _exchanges(ev)
    spawned = int(all_ex["spawned"].sum())
    conv = all_ex.filter(~pl.col("spawned") & pl.col("has_send") & pl.col("from_agent").is_not_null() & pl.col("to_agent").is_not_null())
    if conv.is_empty() or span_s <= 0:
        raise ValueError("the log has no sessions_send exchanges over a positive span to fit")
    conv = pl.concat([conv, _quiet_flags(conv, log_end, wait.max_wait_s * 1000.0)], how="horizontal")

    # -- agents ----------------------------------------------------------------------------
    spawn_targets = set(
        ev.filter(pl.col("type") == "a2a.spawn")["to_agent"].drop_nulls().to_list()
    )
    agents = sorted(set(conv["from_agent"].to_list()) | set(conv["to_agent"].to_list()))
    bad = [a for a in agents if not a or any(ch.isspace() for ch in a) or ":" in a]
    if bad:
        conv = conv.filter(~pl.col("from_agent").is_in(bad) & ~pl.col("to_agent").is_in(bad))
        agents = [a for a in agents if a not in bad]
    # a sub-agent only ever runs as spawned sessions: spawned, and never sent to
    received = set(conv["to_agent"].to_list())
    kinds = {a: "subagent" if a in spawn_targets and a not in received else "main" for a in agents}

    # -- arrivals ----------------------------------------------------------------------------
    rates = (
        conv.group_by("from_agent", "to_agent")
        .agg(pl.len().cast(pl.Int64).alias("exchanges"))
        .with_columns((pl.col("exchanges") / span_s).alias("rate_per_s"))
        .with_columns((pl.col("rate_per_s") * 3600.0).alias("rate_per_h"))
        .sort("from_agent", "to_agent")
    )
    exposure = _hour_exposure(log_start, log_end, timezone)
    local_hour = pl.col("start_time").dt.convert_time_zone(timezone).dt.hour().cast(pl.Int64).alias("hour")
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
        conv.group_by(local_hour).agg(pl.len().cast(pl.Int64).alias("exchanges")), on="hour", how="left"
    ).with_columns(pl.col("exchanges").fill_null(0))
    per_hour = per_hour.with_columns((pl.col("exchanges") / pl.col("exposure_h")).alias("rate_per_h"))
    profile: list[float] | None = None
    if use_profile:
        per_hour = per_hour.with_columns((pl.col("rate_per_h") / pl.col("rate_per_h").mean()).alias("multiplier"))
        profile = per_hour["multiplier"].to_list()
    else:
        per_hour = per_hour.with_columns(pl.lit(None, dtype=pl.Float64).alias("multiplier"))
    per_hour = per_hour.select("hour", "exchanges", "exposure_h", "rate_per_h", "multiplier")

    # -- service times (queueing taken out: idle targets only) --------------------------------
    fitted = conv.filter(pl.col("idle")) if only_idle else conv
    obs = pl.concat(
        [
            fitted.filter(pl.col("latency_s").is_not_null() & (pl.col("latency_s") > 0)).select(
                "to_agent", pl.col("latency_s").alias("time_s"), pl.lit(False).alias("censored")
            ),
            fitted.filter((pl.col("outcome") == "no_reply") & (pl.col("outcome_reason") == "timeout")).select(
                "to_agent", pl.lit(wait.max_wait_s).alias("time_s"), pl.lit(True).alias("censored")
            ),
            fitted.filter((pl.col("outcome") == "incomplete") & pl.col("latency_s").is_null()).select(
                "to_agent", ((log_end - pl.col("_start_ms")) / 1000.0).alias("time_s"), pl.lit(True).alias("censored")
            ).filter(pl.col("time_s") > 0),
        ]
    )
    service, service_of = _fit_table(obs, agents, kinds, family, min_samples)
    service = (
        conv.group_by(pl.col("to_agent").alias("agent"))
        .agg(pl.len().cast(pl.Int64).alias("exchanges"), pl.col("idle").sum().cast(pl.Int64).alias("idle"))
        .join(service, on="agent", how="right")
        .with_columns(pl.col("exchanges", "idle").fill_null(0))
        .select("agent", "kind", "fit", "exchanges", "idle", "observed", "censored", "family", "mean_s", "cv", "median_s")
        .sort("agent")
    )

    # -- turns -----------------------------------------------------------------------------------
    turn_time, endings = _turn_fits(ev, conv, family, ping_pong.turn_timeout_s)
    logged_max = conv["configured_max_turns"].drop_nulls()
    max_turns = int(logged_max.mode().sort()[-1]) if logged_max.len() else ping_pong.max_turns
    pp = ping_pong.model_copy(
        update={"max_turns": max_turns, "endings": dict(zip(endings["ending"], endings["probability"], strict=True))}
    )
    payloads = conv.filter(pl.col("payload_type").is_not_null())
    plain = conv.filter(pl.col("payload_type").is_null() & pl.col("intent").is_not_null())
    intents = dict(plain.group_by("intent").len().iter_rows())
    mix_fields: dict[str, Any] = {"payload_share": payloads.height / conv.height}
    if intents:
        mix_fields["intents"] = {k: float(v) for k, v in intents.items()}
    if payloads.height:
        mix_fields["payload_types"] = {k: float(v) for k, v in payloads.group_by("payload_type").len().iter_rows()}
    mix = MessageMix.model_validate(mix_fields)

    # -- sessions ----------------------------------------------------------------------------------
    d = pl.col("data")
    sends = ev.filter((pl.col("type") == "a2a.send") & pl.col("from_agent").is_in(agents)).select(
        "from_agent",
        js_trim_expr(d.struct.field("fromSessionType")).alias("from_type"),
        js_trim_expr(d.struct.field("targetSessionKey")).alias("target_key"),
    ).filter(~pl.col("target_key").fill_null("").str.contains(":subagent:", literal=True))
    main_sends = sends.filter(pl.col("from_agent").replace_strict(kinds, default="main") == "main")
    typed = main_sends.filter(pl.col("from_type").is_not_null())
    channel_share = (
        float((~typed["from_type"].is_in(["main", "subagent"])).mean()) if typed.height else SimConfig().channel_share  # type: ignore[arg-type]
    )
    keyed = sends.filter(pl.col("target_key").is_not_null())
    a2a_share = float(keyed["target_key"].str.contains(":a2a:", literal=True).mean()) if keyed.height else 0.0  # type: ignore[arg-type]

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
        [conv.group_by("to_agent").agg(*shares).sort("to_agent"), conv.select(pl.lit("*").alias("to_agent"), *shares)]
    )

    # -- the configuration -----------------------------------------------------------------------------
    zone = ZoneInfo(timezone)
    start = datetime.fromtimestamp(log_start / 1000.0, tz=UTC)
    config = SimConfig(
        agents=[
            AgentConfig(id=a, kind=kinds[a], service=service_of[a], turn_service=turn_time)  # type: ignore[arg-type]
            for a in agents
        ],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent=f, to_agent=t, rate_per_s=r) for f, t, r in rates.select("from_agent", "to_agent", "rate_per_s").iter_rows()],
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
    )
    return Calibration(
        config=config,
        exchanges=conv.drop(_MS_COLUMNS),
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


# ----------------------------------------------------------------------------------------
# compare a simulated log with a recorded one
# ----------------------------------------------------------------------------------------

Logs = SimResult | pl.DataFrame | Sequence[SimResult | pl.DataFrame]


def _exchanges_of(logs: Logs) -> pl.DataFrame:
    """The ``sessions_send`` exchanges of one log or several (replications, pooled)."""
    items = [logs] if isinstance(logs, SimResult | pl.DataFrame) else list(logs)
    if not items:
        raise ValueError("no log to compare")
    frames = [exchanges(x.events if isinstance(x, SimResult) else x) for x in items]
    return pl.concat(frames, how="vertical_relaxed").filter(~pl.col("spawned") & pl.col("has_send"))


def _quantile_cols(col: str, quantiles: Sequence[float], prefix: str) -> list[pl.Expr]:
    return [pl.col(col).quantile(q, "linear").alias(f"{prefix}_p{100 * q:g}") for q in quantiles]


def _ks(a: np.ndarray, b: np.ndarray, min_samples: int) -> tuple[float | None, float | None]:
    if a.size < min_samples or b.size < min_samples:
        return None, None
    with warnings.catch_warnings():
        # scipy falls back to the asymptotic p-value where the exact one underflows: fine here
        warnings.filterwarnings("ignore", "ks_2samp: Exact calculation unsuccessful", RuntimeWarning)
        res = stats.ks_2samp(a, b)
    return float(res.statistic), float(res.pvalue)


@dataclass(frozen=True)
class Comparison:
    """A simulated log held against an observed one (:func:`compare`).

    Attributes
    ----------
    overall
        One row over all pairs: replied exchanges ``observed`` and ``simulated``, their
        latency quantiles ``observed_pXX`` / ``simulated_pXX`` (seconds), ``ks`` and
        ``ks_pvalue`` (:func:`scipy.stats.ks_2samp`), ``median_ratio`` (simulated over
        observed median).
    latency
        The same per directed pair (``from_agent``, ``to_agent``), over the pairs of either
        log; ``ks`` is null where a side has fewer than ``min_samples`` replies.
    turns
        Per number of ping-pong turns: exchanges and shares, observed and simulated.
    turns_ks, turns_ks_pvalue
        KS statistic of the turn counts of replied exchanges (discrete: the p-value is
        conservative).
    outcomes
        Share of each outcome, observed and simulated.
    curves
        Latency quantiles at 1 % … 99 % per ``source`` (for :func:`comparison_chart`).
    """

    overall: pl.DataFrame
    latency: pl.DataFrame
    turns: pl.DataFrame
    turns_ks: float | None
    turns_ks_pvalue: float | None
    outcomes: pl.DataFrame
    curves: pl.DataFrame = field(repr=False)

    @property
    def median_ratio(self) -> float:
        """Simulated over observed median first-reply latency."""
        return float(self.overall["median_ratio"][0])

    def chart(self) -> alt.HConcatChart:
        """:func:`comparison_chart` of this comparison."""
        return comparison_chart(self)


def compare(
    simulated: Logs,
    observed: Logs,
    *,
    quantiles: Sequence[float] = (0.5, 0.9, 0.95, 0.99),
    min_samples: int = 5,
) -> Comparison:
    """Compare first-reply latencies (per pair) and turns of a simulated and an observed log.

    Both sides go through the same analysis (:func:`exchanges`: the ``sessions_send``
    exchanges of :func:`~a2a_lab.analysis.conversations.conversations`, spawns left out), so the
    figures are measured the same way.

    Parameters
    ----------
    simulated, observed
        A :class:`~a2a_lab.sim.run.SimResult`, an event frame, or a list of them (e.g.
        replications, pooled).
    quantiles
        Latency quantiles to tabulate.
    min_samples
        Fewest replies on each side for a KS statistic.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> from a2a_lab.sim import SimConfig, simulate
    >>> a, b = simulate(SimConfig(n_messages=300), seed=1), simulate(SimConfig(n_messages=300), seed=2)
    >>> cmp = compare(a, b)
    >>> cmp.overall["ks"][0] < 0.15, compare(a, a).overall["ks"][0]
    (True, 0.0)
    >>> cmp.latency.columns[:5]
    ['from_agent', 'to_agent', 'observed', 'simulated', 'observed_p50']
    """
    sim_ex, obs_ex = _exchanges_of(simulated), _exchanges_of(observed)
    replied = pl.col("outcome") == "replied"
    sim_r = sim_ex.filter(replied & pl.col("latency_s").is_not_null())
    obs_r = obs_ex.filter(replied & pl.col("latency_s").is_not_null())
    sim_lat, obs_lat = sim_r["latency_s"].to_numpy(), obs_r["latency_s"].to_numpy()

    def side(frame: pl.DataFrame, name: str, by: list[str]) -> pl.DataFrame:
        aggs = [pl.len().cast(pl.Int64).alias(name), *_quantile_cols("latency_s", quantiles, name)]
        return frame.group_by(by).agg(aggs) if by else frame.select(aggs)

    ks, p = _ks(sim_lat, obs_lat, 1)
    obs_all, sim_all = side(obs_r, "observed", []), side(sim_r, "simulated", [])
    overall = pl.concat(
        [obs_all.select("observed"), sim_all.select("simulated"), obs_all.drop("observed"), sim_all.drop("simulated")],
        how="horizontal",
    ).with_columns(
        pl.lit(ks, dtype=pl.Float64).alias("ks"),
        pl.lit(p, dtype=pl.Float64).alias("ks_pvalue"),
        (pl.col("simulated_p50") / pl.col("observed_p50")).alias("median_ratio"),
    )

    pair = ["from_agent", "to_agent"]
    per_pair = side(obs_r, "observed", pair).join(side(sim_r, "simulated", pair), on=pair, how="full", coalesce=True)
    per_pair = per_pair.with_columns(pl.col("observed", "simulated").fill_null(0)).sort(pair)
    # one KS test per pair (a few dozen scipy calls, on arrays gathered by Polars)
    sim_lists = dict(sim_r.group_by(pl.concat_str(pair, separator="\u0000")).agg(pl.col("latency_s")).iter_rows())
    obs_lists = dict(obs_r.group_by(pl.concat_str(pair, separator="\u0000")).agg(pl.col("latency_s")).iter_rows())
    tests = [
        _ks(np.asarray(sim_lists.get(f"{a}\u0000{b}", []), dtype=float), np.asarray(obs_lists.get(f"{a}\u0000{b}", []), dtype=float), min_samples)
        for a, b in per_pair.select(pair).iter_rows()
    ]
    latency = per_pair.with_columns(
        pl.Series("ks", [t[0] for t in tests], dtype=pl.Float64),
        pl.Series("ks_pvalue", [t[1] for t in tests], dtype=pl.Float64),
    )
    order = [*pair, "observed", "simulated"] + [c for c in latency.columns if c.startswith(("observed_p", "simulated_p"))]
    latency = latency.select(*order, "ks", "ks_pvalue")

    turn_col = pl.col("turns").fill_null(0).cast(pl.Int64)
    sim_t = sim_r.select(turn_col)["turns"].to_numpy()
    obs_t = obs_r.select(turn_col)["turns"].to_numpy()
    t_ks, t_p = _ks(sim_t, obs_t, 1)

    def turn_counts(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        return frame.group_by(turn_col).agg(pl.len().cast(pl.Int64).alias(name)).with_columns(
            (pl.col(name) / pl.col(name).sum()).alias(f"{name}_share")
        )

    turns = (
        turn_counts(obs_r, "observed")
        .join(turn_counts(sim_r, "simulated"), on="turns", how="full", coalesce=True)
        .with_columns(pl.col("observed", "simulated").fill_null(0), pl.col("observed_share", "simulated_share").fill_null(0.0))
        .sort("turns")
        .select("turns", "observed", "simulated", "observed_share", "simulated_share")
    )

    def outcome_shares(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        return frame.group_by("outcome").agg((pl.len() / frame.height).alias(name))

    outcomes = (
        outcome_shares(obs_ex, "observed")
        .join(outcome_shares(sim_ex, "simulated"), on="outcome", how="full", coalesce=True)
        .with_columns(pl.col("observed", "simulated").fill_null(0.0))
        .sort("outcome")
    )
    grid = np.round(np.arange(1, 100) / 100.0, 2)
    curves = pl.concat(
        [
            pl.DataFrame({"source": name, "quantile": grid, "latency_s": np.quantile(x, grid) if x.size else np.full(grid.size, np.nan)})
            for name, x in (("observed", obs_lat), ("simulated", sim_lat))
        ]
    )
    return Comparison(
        overall=overall, latency=latency, turns=turns, turns_ks=t_ks, turns_ks_pvalue=t_p, outcomes=outcomes, curves=curves
    )


def comparison_chart(cmp: Comparison, *, title: str = "Simulated vs observed") -> alt.HConcatChart:
    """Latency distribution functions and turn shares of a :class:`Comparison`, side by side.

    Examples
    --------
    >>> from a2a_lab.sim import SimConfig, simulate
    >>> a, b = simulate(SimConfig(n_messages=200), seed=1), simulate(SimConfig(n_messages=200), seed=2)
    >>> spec = comparison_chart(compare(a, b)).to_dict()
    >>> len(spec["hconcat"])
    2
    """
    colors = alt.Scale(domain=["observed", "simulated"], range=["#4c78a8", "#f58518"])
    ks = cmp.overall["ks"][0]
    ecdf = (
        alt.Chart(cmp.curves.drop_nans(), title=f"{title}: first-reply latency (KS {ks:.3f})" if ks is not None else title)
        .mark_line()
        .encode(
            x=alt.X("latency_s:Q", title="seconds (log scale)", scale=alt.Scale(type="log")),
            y=alt.Y("quantile:Q", title="share of replies ≤ x"),
            color=alt.Color("source:N", scale=colors, title=None),
            tooltip=["source:N", alt.Tooltip("quantile:Q", format=".2f"), alt.Tooltip("latency_s:Q", format=".1f")],
        )
        .properties(width=360, height=260)
    )
    long = cmp.turns.unpivot(index="turns", on=["observed_share", "simulated_share"], variable_name="source", value_name="share")
    long = long.with_columns(pl.col("source").str.replace("_share", "", literal=True))
    bars = (
        alt.Chart(long, title="Ping-pong turns of replied exchanges")
        .mark_bar()
        .encode(
            x=alt.X("turns:O", title="turns"),
            xOffset="source:N",
            y=alt.Y("share:Q", title="share", axis=alt.Axis(format="%")),
            color=alt.Color("source:N", scale=colors, title=None),
            tooltip=["source:N", "turns:O", alt.Tooltip("share:Q", format=".1%")],
        )
        .properties(width=260, height=260)
    )
    return alt.hconcat(ecdf, bars)
