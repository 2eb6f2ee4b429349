"""Run the model: :func:`simulate` and its :class:`SimResult`.

A result keeps the run's raw arrays and builds each view on first use: the per-message
frame (:attr:`SimResult.messages`), the coordination log in the real event-frame schema
(:attr:`SimResult.events`), the session runs (:attr:`SimResult.runs`), the queue-length and
utilisation time series (:attr:`SimResult.timeseries`), per-session figures
(:attr:`SimResult.sessions`) and the headline numbers (:meth:`SimResult.summary`, computed
straight from the arrays so that thousands of replications stay cheap).

Times in these frames are simulated seconds from 0 (the log's ``ts`` adds
``config.start``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, Final

import numpy as np
import polars as pl

from a2a_lab.reference.runtime.termination import TERMINATION_REASONS
from a2a_lab.sim.config import INTENTS, PAYLOAD_TYPES, SimConfig
from a2a_lab.sim.engine.model import Model
from a2a_lab.sim.engine.trace import BLOCKED, JOB_KINDS, NO_REPLY, OUTCOMES, REPLIED, Trace
from a2a_lab.sim.output.events import (
    RENDER_CHUNK_EVENTS,
    Identifiers,
    identifiers,
    render_event_chunks,
    render_events,
    session_keys,
)
from a2a_lab.sim.policies.failures import ERROR_KINDS
from a2a_lab.sim.policies.limits import BLOCK_REASONS
from a2a_lab.sim.workload.plan import (
    SESSION_KINDS,
    Plan,
    draw_plan,
    draw_policy_plan,
    policies_active,
)

__all__ = ["SUMMARY_KEYS", "SUMMARY_RANGES", "SimResult", "simulate"]

#: Keys of :meth:`SimResult.summary`, in order.
SUMMARY_KEYS: tuple[str, ...] = (
    "messages",
    "horizon_s",
    "arrival_rate_per_s",
    "throughput_per_s",
    "mean_wait_s",
    "p_wait",
    "mean_service_s",
    "mean_sojourn_s",
    "p95_sojourn_s",
    "p99_sojourn_s",
    "mean_latency_s",
    "p50_latency_s",
    "p95_latency_s",
    "p99_latency_s",
    "utilization",
    "mean_in_system",
    "replied_rate",
    "no_reply_rate",
    "blocked_rate",
    "mean_turns",
    "invisible_conversations",
    "retry_amplification",
)

#: The range each summary figure can take (``None``: unbounded). Every figure is a count,
#: a time, a rate or a share, never negative; the four shares are at most 1. A confidence
#: interval is clipped to this range (:func:`~a2a_lab.sim.experiments.replicate.confidence_interval`,
#: :func:`~a2a_lab.sim.experiments.sweep.summarize`): the figure's true mean lies in it, so the clipped
#: interval covers it exactly as often as the t interval did.
SUMMARY_RANGES: dict[str, tuple[float, float | None]] = {
    k: (0.0, 1.0 if k in ("p_wait", "replied_rate", "no_reply_rate", "blocked_rate") else None)
    for k in SUMMARY_KEYS
}


#: The per-message frame's last columns (after the derived times), in this order.
_LAST_COLUMNS: Final = (
    "attempts",
    "retries",
    "runs",
    "error_code",
    "blocked_by",
    "depth",
    "logged",
    "invisible",
)


def _labels(values: tuple[Any, ...], codes: np.ndarray) -> pl.Series:
    """Codes → labels (a negative code or a None label → null)."""
    idx = pl.Series(codes, dtype=pl.Int64)
    labels = pl.Series(list(values), dtype=pl.String)
    return labels.gather(pl.select(pl.when(idx >= 0).then(idx)).to_series())


def _nan_quantile(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q)) if values.size else float("nan")


def _nan_mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


@dataclass(eq=False)
class SimResult:
    """The outcome of one :func:`simulate` run.

    Attributes
    ----------
    config
        The configuration.
    seed
        The seed it ran with.
    plan
        The pre-drawn inputs (:class:`~a2a_lab.sim.workload.plan.Plan`).
    trace
        The raw arrays the model produced (:class:`~a2a_lab.sim.engine.model.Trace`).
    """

    config: SimConfig
    seed: int | np.random.SeedSequence
    plan: Plan = field(repr=False)
    trace: Trace = field(repr=False)

    def __repr__(self) -> str:
        return f"SimResult(messages={self.plan.n}, sessions={self.plan.session_agent.shape[0]}, horizon_s={self.trace.end_s:.1f})"

    # -- identifiers and sessions --------------------------------------------------------

    @cached_property
    def ids(self) -> Identifiers:
        """The run's identifiers (run, conversation, work-session, task and session ids)."""
        return identifiers(self.plan)

    @cached_property
    def session_keys(self) -> list[str]:
        """The key of every session (index = session number)."""
        return session_keys(self.plan, self.ids, self.config)

    # -- frames ---------------------------------------------------------------------------

    @cached_property
    def messages(self) -> pl.DataFrame:
        """One row per message: who, when, how long it waited and took, how it ended, and its exchange.

        The ground truth of the simulation, message by message, to hold against what an
        analysis reads from the log (:attr:`events`); times are simulated seconds from 0
        unless named ``*_time``.

        Columns
        -------
        message
            Index, in arrival order.
        arrival_s, from_agent, to_agent, requester_session, target_session
            When the requester called ``sessions_send``, who sent to whom, and the two
            session keys.
        intent, payload_type, effective_turns
            What the message says and the turns it allows (runtime §3).
        gate_wait_s
            Send → permit or refusal (null without a gate).
        service_start_s, service_end_s, queue_wait_s, service_s, sojourn_s
            The message's first run on the target's session: start, end, arrival → start,
            its service time, arrival → end (defined even when nobody waited for it; null
            for a message refused before it reached its target).
        reply_s, latency_s
            The reply event and arrival → reply (null without a reply).
        complete_s, duration_s
            ``a2a.complete`` and arrival → it.
        outcome
            ``replied``, ``no_reply``, ``concurrency_blocked`` (the gate refused the flow,
            or a full queue refused the message) or ``guard_blocked`` (a safety limit
            stopped the send).
        outcome_reason
            Why it did not get a reply: for ``no_reply`` the reference's reason (the
            ``waitError`` if any, else the ``waitStatus``: ``timeout``, ``not_found``,
            ``error``, …); for a refusal the limit (``concurrency_gate`` or an entry of
            :data:`~a2a_lab.sim.policies.limits.BLOCK_REASONS`); null for ``replied``.
        wait_status, wait_error
            What the no-reply events carry (``waitStatus``, ``waitError``).
        turns, termination_reason, announce_ran, announced
            Ping-pong replies logged and why the loop ended; the announce step.
        conversation_id, run_id, work_session_id, task_id
            The exchange's ids as the log writes them: ``conversationId`` (shared by every
            exchange of a work session and agent pair, runtime §6), the send's ``runId``
            (also on its ``a2a.retry`` events), the work session and task.
        send_s, send_time
            When the ``a2a.send`` was logged (the synchronous path logs it after its wait),
            in simulated seconds and as the log's ``ts`` (UTC, millisecond); null when the
            exchange is not logged.
        reply_time, complete_time
            The reply and ``a2a.complete`` as the log's ``ts`` (null without a reply / when
            not logged).
        first_reply_s
            ``a2a.send`` → first reply as the log's millisecond timestamps give it (null
            without a logged reply): what a conversation table reads off the log.
        attempts, retries, runs, error_code
            Attempts (1 + retries), retries, runs of the target (re-sends that idempotency
            joined do not run again; a refused message has none), the last error's code.
        blocked_by
            The limit that refused the message (:data:`~a2a_lab.sim.policies.limits.BLOCK_REASONS`).
        depth
            Relay depth (null when relay depths are off).
        logged, invisible
            Whether the exchange shows in the log; whether it took place but the log shows
            nothing of it (the synchronous path's known bug).
        """
        return _with_log_times(_message_frame(self), self.config.start)

    @cached_property
    def truth(self) -> pl.DataFrame:
        """Per logged exchange, what the model did, keyed by the send's ``runId``.

        The ground truth an exchange matcher (:func:`a2a_lab.conversations`) is held
        against: join its rows on ``run_id`` and compare ``outcome``, ``first_reply_s``,
        ``end_time`` (the ``a2a.complete`` the exchange logged) and ``turns``. Column names
        are the conversation table's.

        Columns
        -------
        run_id, conversation_id, from_agent, to_agent
            As the log writes them (``runId``, ``conversationId``).
        session_key, session_lane, lane
            The session the target's run ran on (what ``a2a.send`` logs as
            ``targetSessionKey``), its session lane (``session:<key>``) and the
            gateway-wide lane (``nested``; null under the ``agent_main`` topology, which
            has none).
        requester_session_key
            The requester's session (its ping-pong steps run there).
        start_time
            The ``a2a.send``'s ``ts``.
        outcome
            As the log reads it (runtime §3b): ``replied``, ``no_reply`` (a refusal by a
            safety limit that is logged reads as no_reply) or ``concurrency_blocked``.
        first_reply_s, reply_time
            ``a2a.send`` → the first reply, by the log's millisecond timestamps, and the
            reply's ``ts`` (null without a reply).
        end_time
            The ``ts`` of the exchange's ``a2a.complete``.
        turns
            Ping-pong replies logged (the complete's ``actualTurns``).
        """
        m = self.messages.filter("logged")
        return m.select(
            "run_id",
            "conversation_id",
            "from_agent",
            "to_agent",
            pl.col("target_session").alias("session_key"),
            ("session:" + pl.col("target_session")).alias("session_lane"),
            pl.lit("nested" if self.config.topology == "lanes" else None, pl.String).alias("lane"),
            pl.col("requester_session").alias("requester_session_key"),
            pl.col("send_time").alias("start_time"),
            pl.col("outcome").replace({"guard_blocked": "no_reply"}),
            "first_reply_s",
            "reply_time",
            pl.col("complete_time").alias("end_time"),
            "turns",
        )

    @cached_property
    def events(self) -> pl.DataFrame:
        """The run as a coordination log, in the event-frame schema of :func:`a2a_lab.load`.

        Write it with :func:`a2a_lab.write_events` (or :func:`a2a_lab.sim.write_logdir` with
        the reference's rotation); analyse it like a loaded log. To write a large run
        without holding its log, use :meth:`event_chunks`.
        """
        return render_events(self.plan, self.trace, self.config, self.ids)

    def event_chunks(self, chunk_events: int = RENDER_CHUNK_EVENTS) -> Iterator[pl.DataFrame]:
        """The rows of :attr:`events`, ``chunk_events`` at a time, rendered on demand.

        Only the chunk being rendered is in memory (plus the sort keys of the run's
        events), so ``a2a_lab.write_events(res.event_chunks(), "sim.ndjson")`` writes the
        same bytes as ``a2a_lab.write_events(res.events, "sim.ndjson")`` for a fraction of
        the memory. Once :attr:`events` has been built, its slices are returned.

        Examples
        --------
        >>> res = simulate(SimConfig(n_messages=200), seed=1)
        >>> chunks = list(res.event_chunks(400))

        ([400, 400, 135], True)
        """
        if "events" in self.__dict__:  # already built (cached_property)
            events: pl.DataFrame = self.__dict__["events"]
            for start in range(0, max(events.height, 1), chunk_events):
                yield events.slice(start, chunk_events)
            return
        yield from render_event_chunks(self.plan, self.trace, self.config, self.ids, chunk_events)

    @cached_property
    def runs(self) -> pl.DataFrame:
        """One row per agent run on a session: messages, ping-pong turns and announce steps.

        Columns: ``session`` (key), ``agent``, ``kind`` (message, turn, announce),
        ``message``, ``enqueue_s``, ``lane_s`` (when the run got its session lane; under
        the ``lanes`` topology it then waits for a slot of the ``nested`` pool until
        ``start_s``), ``start_s``, ``end_s``, ``wait_s``, ``service_s`` (a message refused
        before it reached its target has none).
        """
        t = self.trace
        return pl.DataFrame(
            {
                "session": _labels(tuple(self.session_keys), t.job_session),
                "agent": _labels(self.plan.agents, self.plan.session_agent[t.job_session]),
                "kind": _labels(JOB_KINDS, t.job_kind),
                "message": t.job_message,
                "enqueue_s": t.job_enqueue,
                "lane_s": t.job_lane,
                "start_s": t.job_start,
                "end_s": t.job_end,
                "wait_s": t.job_start - t.job_enqueue,
                "service_s": t.job_service,
            }
        ).filter(pl.col("start_s").is_not_nan())

    @cached_property
    def timeseries(self) -> pl.DataFrame:
        """Queue length and utilisation of every session, as exact step functions.

        One row per change: ``session``, ``time_s``, ``in_system`` (runs queued or
        running), ``queue_length`` (queued), ``busy`` (running), ``utilization``
        (``busy / capacity``); each value holds from ``time_s`` to the session's next row.
        Every session starts empty at 0 (an implicit first row) and ends empty.
        """
        t = self.trace
        m = t.job_session.shape[0]
        # at one instant: ends first, then arrivals, then starts (no transient overshoot)
        frame = pl.DataFrame(
            {
                "s": np.concatenate([t.job_session] * 3),
                "time_s": np.concatenate([t.job_end, t.job_enqueue, t.job_start]),
                "order": np.repeat(np.array([0, 1, 2], dtype=np.int8), m),
                "d_system": np.repeat(np.array([-1, 1, 0], dtype=np.int64), m),
                "d_queue": np.repeat(np.array([0, 1, -1], dtype=np.int64), m),
                "d_busy": np.repeat(np.array([-1, 0, 1], dtype=np.int64), m),
            }
        )
        table = pl.DataFrame(
            {
                "s": np.arange(len(self.session_keys), dtype=np.int32),
                "session": self.session_keys,
                "capacity": self.plan.session_capacity.astype(np.float64),
            }
        )
        return (
            frame.filter(pl.col("time_s").is_not_nan())  # refused messages never ran
            .sort("s", "time_s", "order")
            .with_columns(
                pl.col("d_system").cum_sum().over("s").alias("in_system"),
                pl.col("d_queue").cum_sum().over("s").alias("queue_length"),
                pl.col("d_busy").cum_sum().over("s").alias("busy"),
            )
            .unique(["s", "time_s"], keep="last", maintain_order=True)
            .join(table, on="s", how="left")
            .with_columns((pl.col("busy") / pl.col("capacity")).alias("utilization"))
            .select("session", "time_s", "in_system", "queue_length", "busy", "utilization")
        )

    def binned_timeseries(self, every_s: float, sessions: list[str] | None = None) -> pl.DataFrame:
        """Time averages of the session step functions over consecutive bins (for charts).

        Parameters
        ----------
        every_s
            Bin width in seconds; bins start at 0 and cover the run.
        sessions
            Only these session keys (default: all).

        Returns
        -------
        pl.DataFrame
            ``session``, ``time_s`` (bin start), and the time averages over the bin of
            ``in_system``, ``queue_length``, ``busy`` and ``utilization``.

        Examples
        --------
        >>> from a2a_lab.sim.workload.presets import md1
        >>> res = simulate(md1(0.5, 1.0, n_messages=400), seed=1)
        >>> binned = res.binned_timeseries(100.0, ["agent:server:main"])
        >>> round(float(binned["utilization"].mean()), 2) == round(res.summary()["utilization"], 2)
        True
        """
        horizon = self.trace.end_s
        ts = (
            self.timeseries
            if sessions is None
            else self.timeseries.filter(pl.col("session").is_in(sessions))
        )
        values = ("in_system", "queue_length", "busy", "utilization")
        # the integral of each step function up to each step, per session
        steps = (
            ts.sort("session", "time_s")
            .with_columns(pl.col(values).cast(pl.Float64))
            .with_columns(
                *(
                    (pl.col(v) * (pl.col("time_s").shift(-1).over("session") - pl.col("time_s")))
                    .fill_null(0.0)
                    .cum_sum()
                    .shift(1, fill_value=0.0)
                    .over("session")
                    .alias(f"_area_{v}")
                    for v in values
                ),
                pl.col("time_s").alias("_step_s"),
            )
        )
        edges = pl.DataFrame({"time_s": np.arange(0.0, horizon + every_s, every_s)})
        grid = (
            ts.select("session")
            .unique()
            .sort("session")
            .join(edges, how="cross")
            .sort("session", "time_s")
        )
        # both sides are sorted by session and time (Polars cannot check that within groups)
        at_edges = grid.join_asof(
            steps, on="time_s", by="session", strategy="backward", check_sortedness=False
        ).with_columns(
            *(
                (pl.col(f"_area_{v}") + pl.col(v) * (pl.col("time_s") - pl.col("_step_s")))
                .fill_null(0.0)
                .alias(v)
                for v in values
            )
        )
        return (
            at_edges.with_columns(
                *((pl.col(v).shift(-1).over("session") - pl.col(v)) / every_s for v in values)
            )
            .filter(pl.col("time_s") < horizon)
            .select("session", "time_s", *values)
        )

    @cached_property
    def sessions(self) -> pl.DataFrame:
        """Per session: agent, kind, capacity, runs, busy time, utilisation, queue figures.

        ``utilization`` is busy server-time over capacity times the run's horizon;
        ``mean_in_system`` and ``mean_queue`` are time averages over the horizon;
        ``max_queue`` is the longest queue seen.
        """
        p, t = self.plan, self.trace
        horizon = self.trace.end_s
        runs = (
            pl.DataFrame(
                {
                    "s": t.job_session,
                    "busy_s": t.job_end - t.job_start,
                    "system_s": t.job_end - t.job_enqueue,
                    "queue_s": t.job_start - t.job_enqueue,
                }
            )
            .filter(pl.col("busy_s").is_not_nan())
            .group_by("s")
            .agg(pl.len().alias("runs"), pl.col("busy_s", "system_s", "queue_s").sum())
        )
        peaks = self.timeseries.group_by("session").agg(
            pl.col("queue_length").max().alias("max_queue")
        )
        table = pl.DataFrame(
            {
                "s": np.arange(p.session_agent.shape[0], dtype=np.int32),
                "session": self.session_keys,
                "agent": _labels(p.agents, p.session_agent),
                "kind": _labels(SESSION_KINDS, p.session_kind),
                "capacity": p.session_capacity.astype(np.int64),
            }
        )
        return (
            table.join(runs, on="s", how="left")
            .join(peaks, on="session", how="left")
            .with_columns(
                pl.col("runs", "max_queue").fill_null(0),
                pl.col("busy_s", "system_s", "queue_s").fill_null(0.0),
            )
            .with_columns(
                (pl.col("busy_s") / (pl.col("capacity") * horizon)).alias("utilization"),
                (pl.col("system_s") / horizon).alias("mean_in_system"),
                (pl.col("queue_s") / horizon).alias("mean_queue"),
            )
            .select(
                "session",
                "agent",
                "kind",
                "capacity",
                "runs",
                "busy_s",
                "utilization",
                "mean_in_system",
                "mean_queue",
                "max_queue",
            )
        )

    # -- headline numbers -------------------------------------------------------------------

    def summary(self, warmup_s: float = 0.0) -> dict[str, float]:
        """Headline figures of the run, optionally without a warm-up period.

        Parameters
        ----------
        warmup_s
            Leave out messages that arrived before this time, and measure rates and
            utilisation over ``[warmup_s, end]`` only.

        Returns
        -------
        dict
            :data:`SUMMARY_KEYS`: ``messages`` (counted), ``horizon_s`` (the measured span),
            ``arrival_rate_per_s``, ``throughput_per_s`` (exchanges completed per second),
            ``mean_wait_s`` / ``p_wait`` (queue wait of the message's run: mean, share
            that waited at all), ``mean_service_s``, ``mean_sojourn_s`` and its
            ``p95`` / ``p99`` (arrival → the run ends), ``mean`` / ``p50`` / ``p95`` /
            ``p99_latency_s`` (arrival → reply, over replied messages), ``utilization``
            (busy server-time over capacity-time of the sessions that ran anything; under
            the ``lanes`` topology the capacity is at most the ``nested`` pool's slots),
            ``mean_in_system`` (time-average runs queued or running, all sessions),
            ``replied_rate``, ``no_reply_rate``, ``blocked_rate``, ``mean_turns``,
            ``invisible_conversations`` (exchanges that took place but left no event in the
            log: the synchronous path's timeout bug) and ``retry_amplification`` (attempts
            per message: 1 plus its retries). Waits, service and sojourn times count the
            messages whose run ran (a refused message has none).
        """
        p, t, n = self.plan, self.trace, self.plan.n
        end = t.end_s
        span = end - warmup_s
        keep = p.arrival_s >= warmup_s
        arrival = p.arrival_s[keep]
        start, finish = t.job_start[:n][keep], t.job_end[:n][keep]
        ran = ~np.isnan(start)
        wait = (start - arrival)[ran]
        sojourn = (finish - arrival)[ran]
        replied = t.outcome[keep] == REPLIED
        latency = (t.reply_s[keep] - arrival)[replied]
        counted = int(keep.sum())
        # busy server-time of every run inside [warmup_s, end]
        busy = np.clip(t.job_end, warmup_s, None) - np.clip(t.job_start, warmup_s, None)
        in_system = np.clip(t.job_end, warmup_s, None) - np.clip(t.job_enqueue, warmup_s, None)
        used = np.unique(t.job_session[~np.isnan(t.job_start)])
        capacity = float(p.session_capacity[used].sum()) if used.size else float("nan")
        if self.config.topology == "lanes":
            # runs at once: no more than the gateway-wide pool lets run
            capacity = min(capacity, float(self.config.lanes.nested))
        completed = int(((t.complete_s >= warmup_s) & (t.complete_s <= end)).sum())

        def rate(x: float) -> float:
            return x / span if span > 0 else float("nan")

        return {
            "messages": counted,
            "horizon_s": span,
            "arrival_rate_per_s": rate(counted),
            "throughput_per_s": rate(completed),
            "mean_wait_s": _nan_mean(wait),
            "p_wait": _nan_mean(wait > 0),
            "mean_service_s": _nan_mean(t.job_service[:n][keep][ran]),
            "mean_sojourn_s": _nan_mean(sojourn),
            "p95_sojourn_s": _nan_quantile(sojourn, 0.95),
            "p99_sojourn_s": _nan_quantile(sojourn, 0.99),
            "mean_latency_s": _nan_mean(latency),
            "p50_latency_s": _nan_quantile(latency, 0.50),
            "p95_latency_s": _nan_quantile(latency, 0.95),
            "p99_latency_s": _nan_quantile(latency, 0.99),
            "utilization": rate(float(np.nansum(busy)) / capacity),
            "mean_in_system": rate(float(np.nansum(in_system))),
            "replied_rate": _nan_mean(replied),
            "no_reply_rate": _nan_mean(t.outcome[keep] == NO_REPLY),
            "blocked_rate": _nan_mean(t.outcome[keep] == BLOCKED),
            "mean_turns": _nan_mean(t.turns[keep]),
            "invisible_conversations": float(t.invisible[keep].sum()),
            "retry_amplification": _nan_mean(t.attempts[keep]),
        }


def simulate(
    config: SimConfig, seed: int | np.random.SeedSequence = 0, *, full_flow: bool = False
) -> SimResult:
    """Simulate a configuration.

    Parameters
    ----------
    config
        The deployment, workload and policies (:class:`~a2a_lab.sim.config.SimConfig`).
    seed
        An integer, or a :class:`numpy.random.SeedSequence` (replication ``k`` of
        ``SeedSequence(seed).spawn(n)``). The same seed gives the same run, to the byte of
        its log; two configurations run with one seed share their random draws.
    full_flow
        Run every message through the flow process, also those that need no decision
        (slower, same results; for tests).

    Returns
    -------
    SimResult
        The run; its frames are built on first use.

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> res = simulate(mm1(0.5, 1.0, n_messages=2000), seed=3)
    >>> s = res.summary()
    >>> s["messages"], s["replied_rate"], round(s["utilization"], 1)
    (2000, 1.0, 0.5)
    >>> res.events.group_by("type").len().sort("type").rows()
    [('a2a.complete', 2000), ('a2a.response', 2000), ('a2a.send', 2000)]
    """
    # every draw first (the workload), then the engine: a reader follows the run in order
    plan = draw_plan(config, seed)
    policy_plan = draw_policy_plan(config, plan, seed) if policies_active(config) else None
    trace = Model(plan, config, policy_plan, full_flow=full_flow).run()
    return SimResult(config=config, seed=seed, plan=plan, trace=trace)


def _message_frame(res: SimResult) -> pl.DataFrame:
    """:attr:`SimResult.messages` in simulated seconds, before the log's times are added."""
    p, t, n = res.plan, res.trace, res.plan.n
    ids = res.ids
    arrival = p.arrival_s
    ran = t.ran
    start = np.where(ran, t.job_start[:n], np.nan)
    end = np.where(ran, t.job_end[:n], np.nan)
    reason = np.full(n, None, dtype=object)
    refused = t.blocked_by >= 0
    reason[refused] = np.asarray(BLOCK_REASONS, dtype=object)[t.blocked_by[refused]]
    reason[(t.outcome == BLOCKED) & ~refused] = "concurrency_gate"
    no_reply = t.outcome == NO_REPLY
    wait_error = np.asarray(t.wait_error, dtype=object)
    wait_status = np.asarray(t.wait_status, dtype=object)
    reason[no_reply] = np.where(
        wait_error[no_reply] != None,  # noqa: E711 (element-wise on an object array)
        wait_error[no_reply],
        wait_status[no_reply],
    )
    return pl.DataFrame(
        {
            "message": np.arange(n, dtype=np.int64),
            "arrival_s": arrival,
            "from_agent": _labels(p.agents, p.sender),
            "to_agent": _labels(p.agents, p.target),
            "requester_session": _labels(tuple(res.session_keys), p.requester_session),
            "target_session": _labels(tuple(res.session_keys), p.target_session),
            "intent": _labels(INTENTS, p.intent),
            "payload_type": _labels(PAYLOAD_TYPES, p.payload),
            "effective_turns": p.effective_turns.astype(np.int64),
            "gate_wait_s": t.gate_s - arrival,
            "service_start_s": start,
            "service_end_s": end,
            "queue_wait_s": start - arrival,
            "service_s": np.where(ran, t.job_service[:n], np.nan),
            "sojourn_s": end - arrival,
            "reply_s": t.reply_s,
            "latency_s": t.reply_s - arrival,
            "complete_s": t.complete_s,
            "duration_s": t.complete_s - arrival,
            "outcome": _labels(OUTCOMES, t.outcome),
            "outcome_reason": pl.Series(reason.tolist(), dtype=pl.String),
            "wait_status": pl.Series(t.wait_status, dtype=pl.String),
            "wait_error": pl.Series(t.wait_error, dtype=pl.String),
            "turns": t.turns.astype(np.int64),
            "termination_reason": _labels(TERMINATION_REASONS, t.termination),
            "announce_ran": t.announce_ran,
            "announced": t.announced,
            "conversation_id": pl.Series(ids.conversation_id, dtype=pl.String),
            "run_id": pl.Series(ids.run_id, dtype=pl.String),
            "work_session_id": _labels(tuple(ids.work_session_id), p.task),
            "task_id": _labels(tuple(ids.task_id), p.task),
            "send_s": np.where(t.logged, t.send_s, np.nan),
            "_reply_log_s": np.where(t.logged, t.reply_s, np.nan),
            "_complete_log_s": np.where(t.logged, t.complete_s, np.nan),
            "attempts": t.attempts.astype(np.int64),
            "retries": t.retries.astype(np.int64),
            "runs": t.runs.astype(np.int64),
            "error_code": _labels(tuple(k.info.code for k in ERROR_KINDS), t.error_kind),
            "blocked_by": _labels(BLOCK_REASONS, t.blocked_by),
            "depth": pl.Series(t.depth, dtype=pl.Float64).fill_nan(None).cast(pl.Int64),
            "logged": t.logged,
            "invisible": t.invisible,
        }
    )


def _with_log_times(frame: pl.DataFrame, start: datetime) -> pl.DataFrame:
    """``frame`` with NaN seconds as null and the times the log writes (``ts``, from ``start``)."""
    start_ms = int(start.timestamp() * 1000)

    def log_ms(column: str) -> pl.Expr:
        # the log's `ts`: simulated seconds truncated to the millisecond (render_events)
        return (pl.col(column) * 1000.0).floor() + start_ms

    def log_time(column: str) -> pl.Expr:
        return log_ms(column).cast(pl.Int64).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC")

    seconds = [
        "gate_wait_s",
        "service_start_s",
        "service_end_s",
        "queue_wait_s",
        "service_s",
        "sojourn_s",
    ]
    return frame.with_columns(
        pl.col(
            *seconds, "reply_s", "latency_s", "send_s", "_reply_log_s", "_complete_log_s"
        ).fill_nan(None)
    ).select(
        pl.all().exclude("_reply_log_s", "_complete_log_s", *_LAST_COLUMNS),
        log_time("send_s").alias("send_time"),
        log_time("_reply_log_s").alias("reply_time"),
        log_time("_complete_log_s").alias("complete_time"),
        ((log_ms("_reply_log_s") - log_ms("send_s")) / 1000.0).alias("first_reply_s"),
        *_LAST_COLUMNS,
    )
