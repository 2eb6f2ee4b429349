"""Fit the simulator to a recorded log: the twin's configuration and every fitted table."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from a2a_lab._frames import number
from a2a_lab.analysis.calibrate._exchanges import MS_COLUMNS, _enriched, _exchanges
from a2a_lab.analysis.calibrate._fits import (
    FAMILIES,
    FitFamily,
    TimeData,
    TimeFit,
    _median,
    fit_best,
    fit_family,
)
from a2a_lab.analysis.calibrate._hidden import behind_hidden, hidden_data
from a2a_lab.analysis.calibrate._lanes import run_lanes
from a2a_lab.analysis.calibrate._occupancy import NESTED_LIMIT
from a2a_lab.analysis.calibrate._saturation import SATURATION, lane_load, pool_load
from a2a_lab.analysis.calibrate._settings import fit_failures, fit_retry, fit_tasks
from a2a_lab.analysis.calibrate._window import FAR_GAP_MS, FitWarning, core_window
from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.reference.runtime import PING_PONG_LIMITS_0B3325A28
from a2a_lab.sim import config as sim_config
from a2a_lab.sim.distributions import ServiceTime
from a2a_lab.sim.policies import FailurePolicy, ReferenceRetry
from a2a_lab.time import Zone, check_tz, hour_exposure

__all__ = ["Calibration", "GatewayLimits", "fit_log"]

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
#: The columns of a fit in :attr:`Calibration.service` and :attr:`Calibration.turn_times`.
_FIT_COLUMNS: Final = (
    *("family", "mean_s", "mean_lo", "mean_hi", "cv", "cv_lo", "cv_hi", "median_s"),
    *(f"aic_{f}" for f in FAMILIES),
)


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
        ``family`` (the least AIC of exponential, gamma and lognormal unless one is
        asked for), ``mean_s`` and ``cv`` each with its 95 % profile-likelihood interval
        (``mean_lo``, ``mean_hi``, ``cv_lo``, ``cv_hi``), ``median_s``, the AIC of each
        family tried (``aic_<family>``); and the agent's most loaded session ``lane``
        with its ``busy`` share of the span, its offered load ``rho`` and ``saturated``
        (either at or above 0.95: the fit is not to be trusted, and a warning says so;
        :mod:`._saturation`).
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
    warnings
        What makes part of the fit unreliable or left data out of it (each also raised as
        a :class:`FitWarning`): events far outside the log's span, an agent (its busiest
        session lane) or the gateway-wide nested lane at or above saturation.
    outcomes
        Per target agent and overall (``to_agent`` = ``*``): exchanges and shares
        ``replied``, ``timeout``, ``error`` (no reply for another reason), ``blocked``,
        ``incomplete``.
    """

    config: sim_config.SimConfig
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
    warnings: tuple[str, ...] = ()

    @property
    def span_s(self) -> float:
        """The log's span in seconds."""
        return (self.end - self.start).total_seconds()

    @property
    def observed_median_latency_s(self) -> float:
        """Median send → first-reply time of the fitted exchanges that got a reply."""
        return float(self.exchanges.filter(pl.col("outcome") == "replied")["latency_s"].median())  # type: ignore[arg-type]


def _select(family: FitFamily, data: TimeData) -> tuple[TimeFit, dict[str, float]]:
    """The fit of ``family`` (``auto``: the least AIC of :data:`FAMILIES`) and the AICs."""
    if family == "auto":
        return fit_best(data)
    fit = fit_family(family, data)
    return fit, {family: fit.aic}


def _families(family: FitFamily) -> tuple[str, ...]:
    return tuple(FAMILIES) if family == "auto" else (family,)


def _data(obs: pl.DataFrame) -> TimeData:
    """Exact and censored times of ``obs`` (``time_s``, ``censored``)."""
    return TimeData(
        obs.filter(~pl.col("censored"))["time_s"].to_numpy().astype(float),
        obs.filter(pl.col("censored"))["time_s"].to_numpy().astype(float),
    )


def _fit_table(
    obs: pl.DataFrame,
    agents: list[str],
    kinds: dict[str, str],
    family: FitFamily,
    min_samples: int,
    extra: dict[str, TimeData] | None = None,
) -> tuple[pl.DataFrame, dict[str, ServiceTime], ServiceTime]:
    """Fits per agent from ``obs`` (to_agent, time_s, censored), pooled where sparse; and the pooled fit.

    ``extra`` replaces an agent's data (runs with a start known in distribution added). The
    table has each agent's family (the least AIC when ``family`` is ``auto``), its mean and
    cv with 95 % profile-likelihood intervals, and the AIC of every family tried.
    """
    counts = obs.group_by("to_agent").agg(
        (~pl.col("censored")).sum().cast(pl.Int64).alias("observed"),
        pl.col("censored").sum().cast(pl.Int64).alias("censored"),
    )
    enough = set(counts.filter(pl.col("observed") >= min_samples)["to_agent"].to_list())
    if set(agents) <= enough:
        # no agent takes the pooled fit: its point estimate is enough (no intervals)
        pooled_fit = min(
            (fit_family(f, _data(obs), intervals=False) for f in _families(family)),
            key=lambda fit: fit.aic,
        )
        pooled_aic: dict[str, float] = {}
    else:
        pooled_fit, pooled_aic = _select(family, _data(obs))
    fitted: dict[str, ServiceTime] = {}
    rows = []
    for agent in agents:
        if agent in enough:
            data = (extra or {}).get(agent) or _data(obs.filter(pl.col("to_agent") == agent))
            fit, aic = _select(family, data)
        else:
            fit, aic = pooled_fit, pooled_aic
        d = fit.dist
        fitted[agent] = d
        rows.append(
            {
                "agent": agent,
                "kind": kinds[agent],
                "fit": "agent" if agent in enough else "pooled",
                "family": fit.family,
                "mean_s": d.mean,
                "mean_lo": fit.mean_ci[0],
                "mean_hi": fit.mean_ci[1],
                "cv": float(getattr(d, "cv", 1.0)),
                "cv_lo": fit.cv_ci[0],
                "cv_hi": fit.cv_ci[1],
                "median_s": _median(d),
                **{f"aic_{f}": aic.get(f) for f in FAMILIES},
            }
        )
    table = (
        pl.DataFrame(rows, schema_overrides={f"aic_{f}": pl.Float64 for f in FAMILIES})
        .join(counts.rename({"to_agent": "agent"}), on="agent", how="left")
        .with_columns(pl.col("observed", "censored").fill_null(0))
    )
    return table, fitted, pooled_fit.dist


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
    for ending in sim_config.ENDINGS:
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


@dataclass(frozen=True)
class GatewayLimits:
    """The limits of the gateway a log was written under: the censoring points of the fits.

    Attributes
    ----------
    wait, ping_pong
        The wait and ping-pong policies (None: today's); their limits are the censoring
        points of the service and turn times.
    nested_limit
        The gateway-wide ``nested`` lane's limit (runtime §1: every A2A run holds one of its
        slots; the reference's 8); a run is measured only where the log shows a slot was
        free when its session lane was (None: no such limit).
    """

    wait: sim_config.WaitPolicy | None = None
    ping_pong: sim_config.PingPongPolicy | None = None
    nested_limit: int | None = NESTED_LIMIT


@dataclass(frozen=True)
class _Log:
    """What every step of :func:`fit_log` reads: the log, its exchanges, runs and agents."""

    ev: pl.DataFrame
    all_ex: pl.DataFrame
    conv: pl.DataFrame
    jobs: pl.DataFrame
    agents: list[str]
    kinds: dict[str, str]
    start_ms: float
    end_ms: float
    wait: sim_config.WaitPolicy
    ping_pong: sim_config.PingPongPolicy
    nested_limit: int | None
    family: FitFamily
    min_samples: int
    only_idle: bool

    @property
    def span_s(self) -> float:
        return (self.end_ms - self.start_ms) / 1000.0


def fit_log(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    tz: str | None = None,
    family: FitFamily = "auto",
    min_samples: int = 8,
    hourly: bool | None = None,
    only_idle: bool = True,
    limits: GatewayLimits | None = None,
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
        package.
    family
        Service and turn time family: ``auto`` (default) picks, per agent, the family of
        least AIC among :data:`~._fits.FAMILIES` (exponential, gamma, lognormal: the
        simulator's); or one family for every agent.
    min_samples
        Fewest uncensored idle replies for a target's own service fit.
    hourly
        Fit an hourly arrival profile (None: when the log covers every hour of the day).
    only_idle
        Fit service times from exchanges that found the target idle (True), or from all.
    limits
        The wait, ping-pong and nested-lane limits the log was written under
        (:class:`GatewayLimits`; default: today's).

    Returns
    -------
    Calibration
        Exchanges of agents whose ids the simulator cannot take (with ``:`` or white space)
        are left out of it.

    Examples
    --------
    >>> import a2a_lab as al
    >>> cal = fit_log(al.load(al.samples.sample_dir()).events)
    >>> cal.spawned, cal.exchanges.height, cal.config.topology
    (9, 709, 'agent_main')
    >>> round(cal.config.total_rate_per_s * cal.span_s) == cal.exchanges.height
    True
    """
    # a resolved Zone (the CLI's --tz) is not checked again
    zone = tz if isinstance(tz, Zone) else check_tz("UTC" if tz is None else tz)
    notes: list[str] = []
    log = _read_log(events, limits or GatewayLimits(), (family, min_samples, only_idle), notes)
    arrivals = _arrival_tables(log, zone, hourly)
    obs = _service_observations(log)
    turn_times, turn_of, turn_time = _turn_fits(log, obs)
    service, service_of = _service_fits(log, obs, turn_of)
    service = _saturation(log, service, service_of, turn_of, notes)
    endings = _endings(log.conv)
    (failure_policy, failures), (task_policy, tasks), retry = _policies(log)
    start = datetime.fromtimestamp(log.start_ms / 1000.0, tz=UTC)
    channel_share, a2a_share = _session_shares(log)
    config = sim_config.SimConfig(
        agents=_agent_configs(log, service_of, turn_of),
        workload=sim_config.PoissonArrivals(pairs=arrivals.pairs, hourly_profile=arrivals.profile),
        n_messages=None,
        duration_s=log.span_s,
        mix=_message_mix(log.conv),
        channel_share=channel_share,
        wait=log.wait,
        ping_pong=_ping_pong(log.conv, endings, log.ping_pong),
        # the reference's topology when most sends name a conversation-scoped session
        topology="lanes" if a2a_share > 0.5 else "agent_main",
        lanes=_lanes(log.nested_limit),
        start=start.astimezone(ZoneInfo(zone)),
        tasks=task_policy,
        failures=failure_policy,
        retry=retry,
    )
    for note in notes:
        warnings.warn(note, FitWarning, stacklevel=2)
    return Calibration(
        config=config,
        exchanges=log.conv.drop(MS_COLUMNS),
        spawned=int(log.all_ex["spawned"].sum()),
        start=start,
        end=datetime.fromtimestamp(log.end_ms / 1000.0, tz=UTC),
        rates=arrivals.rates,
        hourly=arrivals.per_hour,
        pair_hours=arrivals.pair_hours,
        service=service,
        turns=endings,
        turn_service=turn_time,
        outcomes=_outcome_table(log.conv),
        turn_times=turn_times,
        failures=failures,
        tasks=tasks,
        warnings=tuple(notes),
    )


def _read_log(
    events: pl.DataFrame | pl.LazyFrame,
    limits: GatewayLimits,
    fit: tuple[FitFamily, int, bool],
    notes: list[str],
) -> _Log:
    """The log inside its time window, its exchanges and runs, and the agents to fit."""
    wait = limits.wait if limits.wait is not None else sim_config.WaitPolicy()
    ping_pong = limits.ping_pong if limits.ping_pong is not None else sim_config.PingPongPolicy()
    ev = _enriched(events.collect() if isinstance(events, pl.LazyFrame) else events)
    times = ev.filter(pl.col("event_ms") > 0)["event_ms"]
    if times.is_empty():
        raise ValueError("the log has no timed events")
    log_start, log_end, _ = core_window(times)
    inside = pl.col("event_ms").is_between(log_start, log_end) | pl.col("event_ms").is_null()
    far = ev.height - ev.filter(inside).height
    if far:
        # left out of spans, rates and fits: one far-off time would stretch them to nothing
        notes.append(
            f"{far} event(s) lie outside the log's time span (more than"
            f" {FAR_GAP_MS / 86_400_000.0:.0f} days from the rest, or at or before 1970)"
            " and were left out of the fit"
        )
        ev = ev.filter(inside)
    span_s = (log_end - log_start) / 1000.0
    all_ex = _exchanges(ev).with_row_index("_row")
    conv = all_ex.filter(
        ~pl.col("spawned")
        & pl.col("has_send")
        & pl.col("from_agent").is_not_null()
        & pl.col("to_agent").is_not_null()
    )
    if conv.is_empty() or span_s <= 0:
        raise ValueError("the log has no sessions_send exchanges over a positive span to fit")
    jobs = run_lanes(ev, all_ex, ping_pong.turn_timeout_s * 1000.0, limits.nested_limit)
    first_run = jobs.filter(pl.col("job") == "first").select("_row", "idle", "run_start")
    conv = conv.join(first_run, on="_row", how="left").with_columns(pl.col("idle").fill_null(False))
    conv, agents, kinds = _agent_kinds(ev, conv)
    family, min_samples, only_idle = fit
    return _Log(
        ev,
        all_ex,
        conv,
        jobs,
        agents,
        kinds,
        log_start,
        log_end,
        wait,
        ping_pong,
        limits.nested_limit,
        family,
        min_samples,
        only_idle,
    )


def _agent_kinds(
    ev: pl.DataFrame, conv: pl.DataFrame
) -> tuple[pl.DataFrame, list[str], dict[str, str]]:
    """The exchanges of the agents the simulator can take, those agents and their kinds."""
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
    return conv, agents, kinds


@dataclass(frozen=True)
class _Arrivals:
    """The fitted arrival tables (:attr:`Calibration.rates`, ``pair_hours``, ``hourly``)."""

    rates: pl.DataFrame
    pair_hours: pl.DataFrame
    per_hour: pl.DataFrame
    profile: list[float] | None

    @property
    def pairs(self) -> list[sim_config.PairRate]:
        return [
            sim_config.PairRate(from_agent=f, to_agent=t, rate_per_s=r)
            for f, t, r in self.rates.select("from_agent", "to_agent", "rate_per_s").iter_rows()
        ]


def _arrival_tables(log: _Log, timezone: str, hourly: bool | None) -> _Arrivals:
    """Arrival rates per directed pair, per local hour, and the hourly profile."""
    conv = log.conv
    rates = (
        conv.group_by("from_agent", "to_agent")
        .agg(pl.len().cast(pl.Int64).alias("exchanges"))
        .with_columns((pl.col("exchanges") / log.span_s).alias("rate_per_s"))
        .with_columns((pl.col("rate_per_s") * 3600.0).alias("rate_per_h"))
        .sort("from_agent", "to_agent")
    )
    exposure = hour_exposure(log.start_ms, log.end_ms, timezone)
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
    return _Arrivals(rates, pair_hours, per_hour, profile)


def _service_observations(log: _Log) -> pl.DataFrame:
    """Service times per target (queueing taken out: runs that started on an idle session).

    An error says nothing about the run's length (it came at a random point of it); times
    run from the run's start where the log tells it (``only_idle``), else from the send.
    """
    wait, log_end = log.wait, log.end_ms
    began = pl.col("run_start") if log.only_idle else pl.col("_start_ms").cast(pl.Float64)
    fitted = log.conv.filter(began.is_not_null()).with_columns(began.alias("_began"))
    reply_ms = pl.col("_start_ms") + pl.col("_first_reply_ms")
    return pl.concat(
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


def _turn_fits(
    log: _Log, obs: pl.DataFrame
) -> tuple[pl.DataFrame, dict[str, ServiceTime], ServiceTime | None]:
    """The turn-time fits: per agent (from the turns it spoke) or, without turns, the service's."""
    agents, kinds, family, min_samples = log.agents, log.kinds, log.family, log.min_samples
    began = (
        pl.coalesce("run_start", pl.when(pl.col("idle")).then("request"))
        if log.only_idle
        else pl.col("request")
    ).alias("_began")
    turn_jobs = log.jobs.with_columns(began).filter(pl.col("_began").is_not_null())
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
                    (pl.col("request") + log.ping_pong.turn_timeout_s * 1000.0 - pl.col("_began"))
                    / 1000.0
                ).alias("time_s"),
                pl.lit(True).alias("censored"),
            ),
        ]
    ).filter(pl.col("to_agent").is_in(agents) & (pl.col("time_s") > 0))
    if turn_obs.filter(~pl.col("censored")).is_empty():
        return turn_obs.clear(), _fit_table(obs, agents, kinds, family, min_samples)[1], None
    turn_times, turn_of, turn_time = _fit_table(turn_obs, agents, kinds, family, min_samples)
    if turn_times.height:
        turn_times = turn_times.select(
            "agent", "kind", "fit", "observed", "censored", *_FIT_COLUMNS
        )
    return turn_times, turn_of, turn_time


def _service_fits(
    log: _Log, obs: pl.DataFrame, turn_of: dict[str, ServiceTime]
) -> tuple[pl.DataFrame, dict[str, ServiceTime]]:
    """The service-time fit per target agent, with runs queued behind a hidden one.

    Runs queued behind a turn that timed out have their start in distribution
    (:mod:`._hidden`).
    """
    conv, agents, min_samples = log.conv, log.agents, log.min_samples
    own_fit = (
        set(
            obs.filter(~pl.col("censored"))
            .group_by("to_agent")
            .len()
            .filter(pl.col("len") >= min_samples)["to_agent"]
            .to_list()
        )
        if log.only_idle
        else set()
    )
    hidden = behind_hidden(log.jobs, log.all_ex, log.ping_pong.turn_timeout_s * 1000.0).filter(
        pl.col("_row").is_in(conv["_row"].implode())
    )
    extra, used = hidden_data(
        hidden, obs, turn_of, [a for a in agents if a in own_fit], log.wait.max_wait_s * 1000.0
    )
    service, service_of, _ = _fit_table(obs, agents, log.kinds, log.family, min_samples, extra)
    service = (
        conv.group_by(pl.col("to_agent").alias("agent"))
        .agg(
            pl.len().cast(pl.Int64).alias("exchanges"),
            pl.col("idle").sum().cast(pl.Int64).alias("idle"),
        )
        .join(service, on="agent", how="right")
        .with_columns(
            pl.col("exchanges", "idle").fill_null(0),
            pl.col("agent").replace_strict(used, default=0, return_dtype=pl.Int64).alias("hidden"),
        )
        .select(
            *("agent", "kind", "fit", "exchanges", "idle", "observed", "censored", "hidden"),
            *_FIT_COLUMNS,
        )
        .sort("agent")
    )
    return service, service_of


def _saturation(
    log: _Log,
    service: pl.DataFrame,
    service_of: dict[str, ServiceTime],
    turn_of: dict[str, ServiceTime],
    notes: list[str],
) -> pl.DataFrame:
    """``service`` with each agent's lane load; a note per saturated lane (:mod:`._saturation`).

    A lane never idle leaves no safe fit.
    """
    conv, jobs, nested_limit = log.conv, log.jobs, log.nested_limit
    timed_out_sends = conv.filter(
        (pl.col("outcome") == "no_reply") & (pl.col("outcome_reason") == "timeout")
    )["_row"]
    floors = jobs.with_columns(
        pl.when((pl.col("job") == "first") & pl.col("_row").is_in(timed_out_sends.implode()))
        .then(pl.col("request") + log.wait.max_wait_s * 1000.0)
        .when(pl.col("timed_out"))
        .then(pl.col("request") + log.ping_pong.turn_timeout_s * 1000.0)
        .alias("floor")
    )
    load = lane_load(floors, service_of, turn_of, log.span_s * 1000.0)
    service = service.join(load, on="agent", how="left").with_columns(
        pl.col("saturated").fill_null(False)
    )
    pool_rho = pool_load(jobs, service_of, turn_of, log.span_s * 1000.0, nested_limit)
    if pool_rho is not None and pool_rho >= SATURATION:
        notes.append(
            f"the gateway-wide nested lane ({nested_limit} slots) is at or above saturation:"
            f" offered load {pool_rho:.2f} (rho >= ~1); few runs found a slot free, and the"
            " service-time fits rest on those"
        )
    for agent, lane, busy, rho in (
        service.filter("saturated").select("agent", "lane", "busy", "rho").iter_rows()
    ):
        notes.append(
            f"agent {agent} is at or above saturation: its session {lane} is busy"
            f" {busy:.0%} of the log with an offered load of {rho:.2f} (rho >= ~1); its"
            " service-time fit rests on the few runs that found the session idle and may"
            " be far off"
        )
    return service


def _lanes(nested_limit: int | None) -> sim_config.LanePools:
    """The twin's lane pools: the gateway's nested limit where it is known, else the default."""
    if nested_limit is None:
        return sim_config.LanePools()
    return sim_config.LanePools(nested=nested_limit)


def _agent_configs(
    log: _Log, service_of: dict[str, ServiceTime], turn_of: dict[str, ServiceTime]
) -> list[sim_config.AgentConfig]:
    """Every agent of the log with its kind and fitted service and turn times."""
    return [
        sim_config.AgentConfig(
            id=a, kind=log.kinds[a], service=service_of[a], turn_service=turn_of[a]
        )
        for a in log.agents
    ]


def _policies(
    log: _Log,
) -> tuple[
    tuple[FailurePolicy | None, pl.DataFrame],
    tuple[sim_config.TaskPolicy | None, pl.DataFrame],
    ReferenceRetry,
]:
    """The failure, task and retry policies the log shows (:mod:`._settings`)."""
    retry_events = log.ev.filter(pl.col("type") == "a2a.retry").select(
        pl.col("data").struct.field("errorCode").alias("code"),
        pl.col("data").struct.field("maxAttempts").alias("max_attempts"),
    )
    return (
        fit_failures(log.conv, retry_events["code"], log.wait),
        fit_tasks(log.ev, log.kinds),
        fit_retry(retry_events["max_attempts"]),
    )


def _ping_pong(
    conv: pl.DataFrame, endings: pl.DataFrame, given: sim_config.PingPongPolicy
) -> sim_config.PingPongPolicy:
    """The ping-pong policy with the log's most logged turn limit and its ending chances."""
    # the gateway writes its resolved turns (0 to the largest limit, 30): a maxTurns
    # outside them (a fuzzed 8.64e15, -1, 2.5) is no configuration and is left out
    logged_max = conv["configured_max_turns"].cast(pl.Float64).drop_nulls()
    logged_max = logged_max.filter(
        logged_max.is_between(0, PING_PONG_LIMITS_0B3325A28.maximum)
        & (logged_max == logged_max.floor())
    )
    max_turns = int(logged_max.mode().sort()[-1]) if logged_max.len() else given.max_turns
    return given.model_copy(
        update={
            "max_turns": max_turns,
            "endings": dict(zip(endings["ending"], endings["probability"], strict=True)),
        }
    )


def _message_mix(conv: pl.DataFrame) -> sim_config.MessageMix:
    """The message mix: payload share, intents of plain messages, payload types."""
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
    return sim_config.MessageMix.model_validate(mix_fields)


def _session_shares(log: _Log) -> tuple[float, float]:
    """The share of main agents' sends from a channel session, and of sends to an a2a one."""
    d = pl.col("data")
    sends = (
        log.ev.filter((pl.col("type") == "a2a.send") & pl.col("from_agent").is_in(log.agents))
        .select(
            "from_agent",
            js_trim_expr(d.struct.field("fromSessionType")).alias("from_type"),
            js_trim_expr(d.struct.field("targetSessionKey")).alias("target_key"),
        )
        .filter(~pl.col("target_key").fill_null("").str.contains(":subagent:", literal=True))
    )
    main_sends = sends.filter(
        pl.col("from_agent").replace_strict(log.kinds, default="main") == "main"
    )
    typed = main_sends.filter(pl.col("from_type").is_not_null())
    channel_share = (
        number((~typed["from_type"].is_in(["main", "subagent"])).mean())
        if typed.height
        else sim_config.SimConfig().channel_share
    )
    keyed = sends.filter(pl.col("target_key").is_not_null())
    a2a_share = (
        number(keyed["target_key"].str.contains(":a2a:", literal=True).mean())
        if keyed.height
        else 0.0
    )
    return channel_share, a2a_share


def _outcome_table(conv: pl.DataFrame) -> pl.DataFrame:
    """Outcome shares per target agent and over all (``to_agent`` ``*``)."""
    outcome = pl.col("outcome")
    shares = [
        pl.len().cast(pl.Int64).alias("exchanges"),
        (outcome == "replied").mean().alias("replied"),
        ((outcome == "no_reply") & (pl.col("outcome_reason") == "timeout")).mean().alias("timeout"),
        ((outcome == "no_reply") & (pl.col("outcome_reason") != "timeout")).mean().alias("error"),
        (outcome == "concurrency_blocked").mean().alias("blocked"),
        (outcome == "incomplete").mean().alias("incomplete"),
    ]
    return pl.concat(
        [
            conv.group_by("to_agent").agg(*shares).sort("to_agent"),
            conv.select(pl.lit("*").alias("to_agent"), *shares),
        ]
    )
