"""The twin's settings besides arrivals and run times: failures, retries and tasks, fitted to a log.

- *Failures* (:class:`~a2a_lab.sim.FailurePolicy`): a run-level error (runtime §4) ends an
  exchange in ``no_reply`` with the error as its reason; its chance per run is the count of
  such exchanges over the exchanges whose run was seen to end (replied, or failed). A
  call-level error that the wait loop retries leaves an ``a2a.retry`` event with its
  ``errorCode``; its chance per ``agent.wait`` call is the count of such retries over the
  calls the log implies (one per started 30 s chunk of each wait, the whole limit for a
  timeout, one for an exchange that ended in an error, plus one per retry). A
  run-level error that is retried shows again on every retry (the same run is polled), so
  those retries are not counted as call failures.
- *Retries*: the reference wait loop, with the largest ``maxAttempts`` the log's
  ``a2a.retry`` events carry.
- *Tasks* (:class:`~a2a_lab.sim.TaskPolicy`): task durations from ``task.started`` to
  ``task.completed`` or ``task.cancelled`` (a task without either is right-censored at its
  last event), fitted lognormal; the gaps between an agent's tasks, exponential (their mean); the agents that
  run tasks (main agents only, or all).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import polars as pl

from a2a_lab._frames import ms_to_time
from a2a_lab.analysis.calibrate._fits import fit_service_time
from a2a_lab.reference.runtime.errors import classify_error
from a2a_lab.sim.budget import MAX_CV, MIN_POSITIVE
from a2a_lab.sim.config import TaskPolicy, WaitPolicy
from a2a_lab.sim.policies import ERROR_KINDS, REQUEST_TIMEOUT, FailurePolicy, ReferenceRetry
from a2a_lab.sim.policies.retry import MAX_RETRIES

__all__ = ["fit_failures", "fit_retry", "fit_tasks"]

#: Error kinds by the code the reference classifies them to, and their level.
_KIND_OF_CODE: Final = {
    k.info.code: k.name for k in ERROR_KINDS[:REQUEST_TIMEOUT] if k.name != "llm_timeout"
}
_LEVEL: Final = {k.name: k.level for k in ERROR_KINDS}
#: The events that end a task.
TERMINAL: Final = ("task.completed", "task.cancelled")


def _kind_of_reason(reason: str) -> str:
    """The error kind a ``no_reply`` reason (the logged ``waitError``) stands for."""
    code = classify_error({"status": "error", "error": reason}).code
    return _KIND_OF_CODE.get(code, "error_unknown")


def fit_failures(
    conv: pl.DataFrame, retry_codes: pl.Series, wait: WaitPolicy
) -> tuple[FailurePolicy | None, pl.DataFrame]:
    """Failure chances per error kind (module documentation).

    Parameters
    ----------
    conv
        The fitted exchanges (``outcome``, ``outcome_reason``, ``latency_s``, ``retries``).
    retry_codes
        The ``errorCode`` of every ``a2a.retry`` event of those exchanges.
    wait
        The wait policy the log was written under (chunk length, limit).

    Returns
    -------
    tuple
        The policy (None when the log shows no failure) and the table: ``kind``, ``level``,
        ``count``, ``exposure`` (runs or calls), ``rate``.

    Examples
    --------
    >>> conv = pl.DataFrame({
    ...     "outcome": ["replied"] * 3 + ["no_reply"] * 2,
    ...     "outcome_reason": [None, None, None, "529 Overloaded", "timeout"],
    ...     "latency_s": [10.0, 40.0, 70.0, None, None], "retries": [1, 0, 0, 3, 0],
    ... })
    >>> policy, table = fit_failures(conv, pl.Series(["gateway_connection"] + ["server_overload"] * 3), WaitPolicy())
    >>> policy.rates
    {'server_overload': 0.25, 'gateway_connection': 0.047619047619047616}
    """
    outcome, reason = pl.col("outcome"), pl.col("outcome_reason")
    errors = conv.filter((outcome == "no_reply") & (reason != "timeout") & reason.is_not_null())
    kinds = errors["outcome_reason"].map_elements(_kind_of_reason, return_dtype=pl.String)
    seen_runs = conv.filter(outcome == "replied").height + errors.height
    counts = {k: int(n) for k, n in kinds.value_counts().iter_rows()} if errors.height else {}
    run_counts = {k: n for k, n in counts.items() if _LEVEL[k] == "run"}
    call_counts = {k: n for k, n in counts.items() if _LEVEL[k] == "call"}
    retried = retry_codes.drop_nulls()
    for code, n in retried.value_counts().iter_rows():
        kind = _KIND_OF_CODE.get(code)
        if kind is not None and _LEVEL[kind] == "call":
            call_counts[kind] = call_counts.get(kind, 0) + int(n)
    # a reply after its wait, a timeout after the whole limit, an error at its first failed call
    timeout = (outcome == "no_reply") & (reason == "timeout")
    waited = (
        conv.filter(outcome.is_in(["replied", "no_reply"]))
        .select(
            pl.when(timeout)
            .then(wait.max_wait_s)
            .otherwise(pl.col("latency_s").fill_null(0.0))
            .clip(upper_bound=wait.max_wait_s)
        )
        .to_series()
        .to_numpy()
    )
    calls = float(np.maximum(np.ceil(waited / wait.chunk_s), 1.0).sum()) + float(
        conv["retries"].fill_null(0).sum()
    )
    rows = [
        {
            "kind": k,
            "level": "run",
            "count": n,
            "exposure": float(seen_runs),
            "rate": n / seen_runs if seen_runs else 0.0,
        }
        for k, n in sorted(run_counts.items())
    ] + [
        {
            "kind": k,
            "level": "call",
            "count": n,
            "exposure": calls,
            "rate": n / calls if calls else 0.0,
        }
        for k, n in sorted(call_counts.items())
    ]
    schema = {
        "kind": pl.String,
        "level": pl.String,
        "count": pl.Int64,
        "exposure": pl.Float64,
        "rate": pl.Float64,
    }
    table = pl.DataFrame(rows, schema=schema)
    rates = {r["kind"]: r["rate"] for r in rows if r["rate"] > 0}
    return (FailurePolicy(rates=rates) if rates else None), table


def fit_retry(max_attempts: pl.Series) -> ReferenceRetry:
    """The reference wait loop with the largest ``maxAttempts`` the log's retries carry.

    Only whole, non-negative, finite counts are read (-1, 2.5 or Infinity is no count), and the
    count is capped at the simulator's :data:`~a2a_lab.sim.policies.retry.MAX_RETRIES` per message.
    """
    logged = max_attempts.cast(pl.Float64).drop_nulls()
    logged = logged.filter(logged.is_finite() & (logged >= 0) & (logged == logged.floor()))
    if logged.is_empty():
        return ReferenceRetry()
    return ReferenceRetry(max_retries=int(min(float(logged.max()), MAX_RETRIES)))  # type: ignore[arg-type]


def fit_tasks(
    events: pl.DataFrame, kinds: dict[str, str]
) -> tuple[TaskPolicy | None, pl.DataFrame]:
    """Task durations, gaps and agents from ``task.started`` / ``task.completed`` (module documentation).

    Returns
    -------
    tuple
        The policy (None without tasks) and per task: ``agent_id``, ``task_id``,
        ``start_time``, ``end_time`` (its first ``task.completed`` or ``task.cancelled``;
        null: open), ``last_time`` (its last event).
    """
    task_id = pl.col("data").struct.field("taskId")
    tagged = events.filter(task_id.is_not_null()).select(
        "type", "agent_id", task_id.alias("task_id"), "event_ms"
    )
    started = (
        tagged.filter(pl.col("type") == "task.started")
        .group_by("task_id")
        .agg(pl.col("agent_id").first(), pl.col("event_ms").min().alias("start"))
    )
    done = (
        tagged.filter(pl.col("type").is_in(TERMINAL))
        .group_by("task_id")
        .agg(pl.col("event_ms").min().alias("end"))
    )
    seen = tagged.group_by("task_id").agg(pl.col("event_ms").max().alias("last"))
    tasks = (
        started.join(done, on="task_id", how="left")
        .join(seen, on="task_id", how="left")
        .select("agent_id", "task_id", "start", "end", "last")
        .sort("agent_id", "start")
    )
    table = tasks.select(
        "agent_id",
        "task_id",
        *(ms_to_time(pl.col(c)).alias(f"{c}_time") for c in ("start", "end", "last")),
    )
    if tasks.height < 2:
        return None, table
    length = (pl.col("end") - pl.col("start")) / 1000.0
    observed = (
        tasks.filter(pl.col("end").is_not_null())
        .select(length.alias("s"))
        .filter(pl.col("s") > 0)["s"]
        .to_numpy()
    )
    # an open task lasted at least until its last event (not until the log's end: the log
    # does not say when an abandoned task stopped)
    open_s = (
        tasks.filter(pl.col("end").is_null())
        .select(((pl.col("last") - pl.col("start")) / 1000.0).alias("s"))
        .filter(pl.col("s") > 0)["s"]
        .to_numpy()
    )
    if observed.size == 0:
        return None, table
    duration = fit_service_time(observed, open_s, "lognormal")
    gaps = tasks.select(
        ((pl.col("start").shift(-1).over("agent_id") - pl.col("end")) / 1000.0).alias("gap")
    )["gap"].drop_nulls()
    gaps = gaps.filter(gaps > 0)
    mean_gap = float(gaps.mean()) if gaps.len() else TaskPolicy().mean_gap_s  # type: ignore[arg-type]
    runners = set(tasks["agent_id"].drop_nulls().to_list())
    agents = "all" if any(kinds.get(a) == "subagent" for a in runners) else "main"
    cv = getattr(duration, "cv", 1.0)
    if not (math.isfinite(duration.mean) and math.isfinite(cv)):
        return None, table
    # a fit of near-identical durations (a fuzzed log: cv 3.9e-12) is held within what a
    # configuration may state (a cv below 1e-9 is refused as no positive value)
    cv = min(max(cv, MIN_POSITIVE), MAX_CV)
    return TaskPolicy(
        mean_duration_s=max(duration.mean, MIN_POSITIVE),
        duration_cv=cv,
        mean_gap_s=max(mean_gap, MIN_POSITIVE),
        agents=agents,
    ), table
