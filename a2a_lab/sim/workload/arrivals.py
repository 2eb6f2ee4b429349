"""Arrival processes of a workload: who sends to whom at which rate, and when.

Drawn from a generator the caller owns (:mod:`~a2a_lab.sim.workload.plan` hands each its own random
stream): Poisson gaps (another rate rescales the same draws), an hourly profile by time
change (the k-th arrival stays the k-th at any rate), or a recorded trace replayed.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from a2a_lab.io import load
from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.sim.config import PoissonArrivals, TraceArrivals

__all__ = ["exponential_gaps", "poisson_routes", "profiled_times", "trace_sends"]


def poisson_routes(
    wl: PoissonArrivals, agents: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Directed pairs and their rates: (sender index, target index, rate)."""
    index = {a: i for i, a in enumerate(agents)}
    rows: dict[tuple[int, int], float] = {}
    for p in wl.pairs:
        key = (index[p.from_agent], index[p.to_agent])
        rows[key] = rows.get(key, 0.0) + p.rate_per_s
    for r in wl.agents:
        weights = r.targets if r.targets is not None else {a: 1.0 for a in agents if a != r.agent}
        total = math.fsum(weights.values())
        for t, w in weights.items():
            if w > 0:
                key = (index[r.agent], index[t])
                rows[key] = rows.get(key, 0.0) + r.rate_per_s * w / total
    pairs = list(rows)
    return (
        np.array([p[0] for p in pairs], dtype=np.int32),
        np.array([p[1] for p in pairs], dtype=np.int32),
        np.array([rows[p] for p in pairs], dtype=float),
    )


def exponential_gaps(
    rng: np.random.Generator, rate: float, n: int | None, duration: float | None
) -> np.ndarray:
    """Gaps of a Poisson process: the first ``n`` and/or those whose arrival is before ``duration``.

    Gaps are standard exponentials divided by the rate, drawn in chunks (the k-th gap is the
    same whatever the chunking), so another rate rescales the same draws.
    """
    if n is not None:
        gaps = rng.standard_exponential(n) / rate
    else:
        assert duration is not None
        size = max(256, int(rate * duration * 1.05) + 64)
        gaps = rng.standard_exponential(size) / rate
        while gaps.sum() <= duration:
            gaps = np.concatenate([gaps, rng.standard_exponential(size) / rate])
    if duration is not None:
        gaps = gaps[np.cumsum(gaps) <= duration]
    return gaps


def profiled_times(
    rng: np.random.Generator,
    rate: float,
    profile: list[float],
    start_offset_s: float,
    n: int | None,
    duration: float | None,
) -> np.ndarray:
    """Arrival times of a Poisson process whose rate follows an hourly profile (time change).

    The k-th arrival is where the cumulative rate first reaches the sum of the first k
    standard exponentials, so the same draws give the same messages, in the same order, at
    any rate (thinning would accept other candidates at another rate).
    """
    multipliers = np.asarray(profile, dtype=float)

    def grid(hours: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # hour boundaries in seconds from the start; the first hour is cut at the start
        first = math.floor(start_offset_s / 3600.0)
        bounds = np.maximum(np.arange(first, first + hours + 1) * 3600.0 - start_offset_s, 0.0)
        slope = rate * multipliers[np.arange(first, first + hours) % 24]
        return bounds, slope, np.concatenate([[0.0], np.cumsum(slope * np.diff(bounds))])

    if duration is not None:
        bounds, slope, cumulative = grid(math.ceil(duration / 3600.0) + 2)
        target = np.cumsum(
            exponential_gaps(rng, 1.0, n, float(np.interp(duration, bounds, cumulative)))
        )
    else:
        target = np.cumsum(rng.standard_exponential(n))
        days = (float(target[-1]) if target.size else 0.0) / (
            rate * 3600.0 * float(multipliers.sum())
        )
        bounds, slope, cumulative = grid(math.ceil(days * 24) + 48)
    # cumulative[k] < target <= cumulative[k + 1]: hour k has a positive rate
    k = np.searchsorted(cumulative, target, side="left") - 1
    out: np.ndarray = bounds[k] + (target - cumulative[k]) / slope[k]
    return out


def trace_sends(wl: TraceArrivals) -> tuple[np.ndarray, list[str], list[str], list[str | None]]:
    """Send times (seconds from the first send), senders, targets and texts of a trace."""
    if wl.sends is not None:
        rows = sorted(wl.sends, key=lambda s: s.at_s)
        times = np.array([s.at_s for s in rows], dtype=float)
        return (
            times,
            [s.from_agent for s in rows],
            [s.to_agent for s in rows],
            [s.message for s in rows],
        )
    ev = load(wl.path).events  # type: ignore[arg-type]
    d = pl.col("data")
    sends = (
        ev.filter(pl.col("type") == "a2a.send")
        .select(
            "event_ms",
            js_trim_expr(
                pl.coalesce(
                    d.struct.field("fromAgent"), d.struct.field("senderAgentId"), pl.col("agent_id")
                )
            ).alias("f"),
            js_trim_expr(
                pl.coalesce(d.struct.field("toAgent"), d.struct.field("targetAgentId"))
            ).alias("t"),
            d.struct.field("message").alias("m"),
        )
        .filter(
            pl.col("f").str.len_chars() > 0, pl.col("t").str.len_chars() > 0, pl.col("event_ms") > 0
        )
        .filter(~pl.col("f").str.contains(r"[:\s]") & ~pl.col("t").str.contains(r"[:\s]"))
    )
    if sends.height == 0:
        raise ValueError(f"workload.path: no usable a2a.send events in {wl.path}")
    ms = sends["event_ms"].to_numpy()
    return (
        (ms - ms.min()) / 1000.0,
        sends["f"].to_list(),
        sends["t"].to_list(),
        sends["m"].to_list(),
    )
