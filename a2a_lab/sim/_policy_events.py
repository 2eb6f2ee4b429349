"""What the policies add to a run's results: the :class:`PolicyTrace` and its log events.

The policy model (:mod:`a2a_lab.sim.policy_model`) records, per message, when its
``a2a.send`` was logged, its retries and the target's runs, the last error, the
``waitStatus`` / ``waitError`` the reference keeps, why a message was refused, whether the
exchange shows in the log at all, and one row per retry. This module turns those arrays
into the per-message columns of :attr:`~a2a_lab.sim.run.SimResult.messages` and into
events, all vectorised:

- ``a2a.retry {attempt, maxAttempts, errorCategory, errorCode, reason, backoffMs,
  elapsedMs}`` per retry (agent: the target, as the reference emits it), between the send
  and the response;
- a no-reply ``a2a.response`` / ``a2a.complete`` with the reference's ``waitStatus``,
  ``waitError`` and outcome text (``(<waitError>)``, ``(실행 상태를 찾을 수 없음)``, ...);
- for a send a safety limit blocked with ``blocked_as="logged"``: ``a2a.response
  {outcome: "blocked", reason}`` with an ``[outcome] blocked: …`` text, then
  ``a2a.complete {announced: false}`` (a concurrency-blocked complete it is NOT);
- nothing at all for an exchange that is not logged: a dropped send, or a synchronous call
  that timed out under the known bug;
- ``depth`` on every event of an exchange when relay depths are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import polars as pl

from a2a_lab.reference.runtime.outcome import build_no_reply_outcome_message
from a2a_lab.sim._events import MESSAGE_LIMIT, PREVIEW_LIMIT, _shared
from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.model import GUARD_BLOCKED, NO_REPLY
from a2a_lab.sim.policies import BLOCK_REASONS, ERROR_KINDS

__all__ = ["BLOCKED_TEXTS", "PolicyTrace", "core_message_columns"]

#: The ``[outcome] blocked`` text of a logged refusal, per reason of :data:`BLOCK_REASONS`
#: (``{}`` is the pair ``a::b``, or the depth); the reference drops such a message silently.
BLOCKED_TEXTS: Final = {
    "relay_depth": "[outcome] blocked: 릴레이 깊이 초과 (depth: {})",
    "collaborate_limit": "[outcome] blocked: 협업 호출 한도 초과 ({})",
    "loop_guard": "[outcome] blocked: 루프 가드 한도 초과 ({})",
}
_RETRY_STEP_BASE: Final = 1.0  # retries sort between the send (step 0) and the response (1)


def _labels(values: list[str | None] | tuple[str, ...], codes: np.ndarray) -> pl.Series:
    """``values[code]`` as strings, null where the code is negative."""
    idx = pl.Series(codes, dtype=pl.Int64)
    return pl.Series(list(values), dtype=pl.String).gather(pl.select(pl.when(idx >= 0).then(idx)).to_series())


def core_message_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """The policy columns of a run of the core model, where no policy acts.

    Every message is sent at its arrival, attempted once, run once, and logged.
    """
    return frame.with_columns(
        pl.col("arrival_s").alias("send_s"),
        pl.lit(1, pl.Int64).alias("attempts"),
        pl.lit(0, pl.Int64).alias("retries"),
        pl.lit(1, pl.Int64).alias("runs"),
        pl.lit(None, pl.String).alias("error_code"),
        pl.lit(None, pl.String).alias("wait_error"),
        pl.lit(None, pl.String).alias("blocked_by"),
        pl.lit(None, pl.Int64).alias("depth"),
        pl.lit(True).alias("logged"),
        pl.lit(False).alias("invisible"),
    )


@dataclass(frozen=True, eq=False)
class PolicyTrace:
    """Per-message results of the policies (arrays indexed by message) and the retry rows.

    Attributes
    ----------
    send_s
        When the ``a2a.send`` was logged (the synchronous path logs it after its wait).
    retries, runs
        Retries made, and runs of the target (re-sends that idempotency joined to a run
        do not run again; a refused message has none).
    error_kind
        The last error met (index in :data:`~a2a_lab.sim.policies.ERROR_KINDS`, -1 none).
    wait_status, wait_error, max_wait_exceeded
        What the reference's no-reply events carry.
    blocked_by
        Index in :data:`~a2a_lab.sim.policies.BLOCK_REASONS` (-1: not refused).
    logged
        Whether the exchange shows in the log.
    invisible
        The exchange took place (the target ran it) but the log shows nothing of it.
    ran
        Whether the message's first run ran at all.
    depth
        Relay depth per message (None when relays are off).
    max_retries
        The policy's ``maxAttempts``.
    retry_message, retry_attempt, retry_s, retry_kind, retry_backoff_ms, retry_elapsed_ms
        One row per retry.
    """

    send_s: np.ndarray
    retries: np.ndarray
    runs: np.ndarray
    error_kind: np.ndarray
    wait_status: list[str | None]
    wait_error: list[str | None]
    max_wait_exceeded: np.ndarray
    blocked_by: np.ndarray
    logged: np.ndarray
    invisible: np.ndarray
    ran: np.ndarray
    depth: np.ndarray | None
    max_retries: int
    retry_message: np.ndarray
    retry_attempt: np.ndarray
    retry_s: np.ndarray
    retry_kind: np.ndarray
    retry_backoff_ms: np.ndarray
    retry_elapsed_ms: np.ndarray

    @property
    def attempts(self) -> np.ndarray:
        """Attempts per message: the first and every retry."""
        return 1 + self.retries

    # -- the per-message frame -----------------------------------------------------------

    def message_columns(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Add the policy columns to :attr:`~a2a_lab.sim.run.SimResult.messages`.

        ``send_s`` (null when not logged), ``attempts``, ``retries``, ``runs``,
        ``error_code``, ``wait_status`` / ``wait_error`` (the reference's values),
        ``blocked_by``, ``depth``, ``logged``, ``invisible``; the run's times and waits
        are null for a message whose run never ran.
        """
        ran = pl.Series(self.ran)
        never = ["service_start_s", "service_end_s", "queue_wait_s", "service_s", "sojourn_s"]
        return frame.with_columns(
            pl.when(~ran).then(None).otherwise(pl.col(never).fill_nan(None)).name.keep(),
            pl.Series("wait_status", self.wait_status, dtype=pl.String),
            pl.Series("send_s", np.where(self.logged, self.send_s, np.nan)).fill_nan(None),
            pl.Series("attempts", self.attempts, dtype=pl.Int64),
            pl.Series("retries", self.retries, dtype=pl.Int64),
            pl.Series("runs", self.runs, dtype=pl.Int64),
            _labels([k.info.code for k in ERROR_KINDS], self.error_kind).alias("error_code"),
            pl.Series("wait_error", self.wait_error, dtype=pl.String),
            _labels(BLOCK_REASONS, self.blocked_by).alias("blocked_by"),
            pl.Series("depth", self.depth, dtype=pl.Int64) if self.depth is not None else pl.lit(None, pl.Int64).alias("depth"),
            pl.Series("logged", self.logged),
            pl.Series("invisible", self.invisible),
        )

    # -- the log ---------------------------------------------------------------------------

    def render(self, m: pl.DataFrame, config: SimConfig) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
        """Adjust the renderer's per-message frame ``m`` (all messages, in order) and add events.

        Returns the frame of the LOGGED messages (send times, wait fields, outcome texts and
        depths set) and the extra event parts (retries, logged refusals).
        """
        max_wait_ms = (config.wait.max_wait_s if config.wait else 300.0) * 1000.0
        m = m.with_columns(
            pl.Series("t_send", self.send_s),
            pl.Series("wait_status", self.wait_status, dtype=pl.String),
            pl.Series("wait_error", self.wait_error, dtype=pl.String),
            pl.Series("_exceeded", self.max_wait_exceeded),
            *([pl.Series("depth", self.depth, dtype=pl.Float64)] if self.depth is not None else []),
        ).filter(pl.Series(self.logged))
        # the outcome text of each distinct (status, error, exceeded) among no-replies
        keys = ["wait_status", "wait_error", "_exceeded"]
        combos = m.filter(pl.col("outcome") == NO_REPLY).select(keys).unique()
        texts = combos.with_columns(
            pl.Series(
                "no_reply_text",
                [
                    build_no_reply_outcome_message(s, e, max_wait_exceeded=x, max_wait_ms=max_wait_ms)
                    for s, e, x in combos.iter_rows()
                ],
                dtype=pl.String,
            )
        )
        m = (
            m.drop("no_reply_text")
            .join(texts, on=keys, how="left", nulls_equal=True, maintain_order="left")
            .drop("_exceeded")
        )
        return m, [*self._retry_events(m), *self._blocked_events(m)]

    def _retry_events(self, m: pl.DataFrame) -> list[pl.DataFrame]:
        if self.retry_message.shape[0] == 0:
            return []
        kinds = [k.info for k in ERROR_KINDS]
        rows = pl.DataFrame(
            {
                "i": self.retry_message,
                "_t": self.retry_s,
                "attempt": self.retry_attempt.astype(np.float64),
                "errorCategory": _labels([str(k.category) for k in kinds], self.retry_kind),
                "errorCode": _labels([k.code for k in kinds], self.retry_kind),
                "reason": _labels([k.reason for k in kinds], self.retry_kind),
                "backoffMs": self.retry_backoff_ms.astype(np.float64),
                "elapsedMs": self.retry_elapsed_ms,
            }
        ).join(m, on="i", how="inner")
        # attempt k sorts at 1 - 1/(k+1): after the send, before the response, in order
        step = pl.lit(_RETRY_STEP_BASE) - pl.lit(1.0) / (pl.col("attempt") + 1.0)
        return [
            rows.select(
                pl.col("_t"), pl.lit(1, pl.Int8).alias("_group"), pl.col("i").alias("_i"), step.alias("_step"),
                pl.lit("a2a.retry").alias("_type"), pl.col("to").alias("_agent"),
                pl.col("from").alias("fromAgent"), pl.col("to").alias("toAgent"), pl.col("run_id").alias("runId"),
                pl.col("attempt"), pl.lit(float(self.max_retries)).alias("maxAttempts"), pl.col("errorCategory"),
                pl.col("errorCode"), pl.col("reason"), pl.col("backoffMs"), pl.col("elapsedMs"), *_shared(),
            )
        ]

    def _blocked_events(self, m: pl.DataFrame) -> list[pl.DataFrame]:
        blocked = m.filter(pl.col("outcome") == GUARD_BLOCKED)
        if blocked.height == 0:
            return []
        reason = _labels(BLOCK_REASONS, self.blocked_by)
        pair = pl.concat_str(pl.min_horizontal("from", "to"), pl.lit("::"), pl.max_horizontal("from", "to"))
        detail = pl.when(pl.col("_reason") == "relay_depth").then(pl.col("depth").cast(pl.Int64).cast(pl.String)).otherwise(pair)
        text = pl.col("_reason").replace_strict(BLOCKED_TEXTS, return_dtype=pl.String)
        blocked = blocked.with_columns(reason.gather(blocked["i"]).alias("_reason")).with_columns(
            pl.concat_str(text.str.extract(r"^(.*)\{\}", 1), detail, pl.lit(")")).alias("_text")
        )
        common = [pl.lit(1, pl.Int8).alias("_group"), pl.col("i").alias("_i")]
        response = blocked.select(
            pl.col("t_gate").alias("_t"), *common, pl.lit(1, pl.Int64).alias("_step"), pl.lit("a2a.response").alias("_type"),
            pl.col("to").alias("_agent"), pl.col("from").alias("fromAgent"), pl.col("to").alias("toAgent"),
            pl.col("_text").str.slice(0, MESSAGE_LIMIT).alias("message"),
            pl.col("_text").str.slice(0, PREVIEW_LIMIT).alias("replyPreview"), pl.lit("blocked").alias("outcome"),
            pl.col("_reason").alias("reason"), *_shared(),
        )
        complete = blocked.select(
            pl.col("t_complete").alias("_t"), *common, pl.lit(10_000, pl.Int64).alias("_step"),
            pl.lit("a2a.complete").alias("_type"), pl.col("from").alias("_agent"), pl.col("from").alias("fromAgent"),
            pl.col("to").alias("toAgent"), pl.lit(False).alias("announced"), pl.col("to_key").alias("targetSessionKey"),
            pl.col("role").alias("eventRole"), pl.col("from_type").alias("fromSessionType"),
            pl.col("to_type").alias("toSessionType"), *_shared(),
        )
        return [response, complete]
