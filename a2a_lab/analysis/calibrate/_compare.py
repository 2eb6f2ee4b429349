"""Hold a simulated log against a recorded one: latency and turn distributions, outcome shares."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import altair as alt
import numpy as np
import polars as pl
from scipy import stats

from a2a_lab.analysis.calibrate._exchanges import exchanges
from a2a_lab.sim.run import SimResult

__all__ = ["Comparison", "Logs", "compare", "comparison_chart"]

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
        warnings.filterwarnings(
            "ignore", "ks_2samp: Exact calculation unsuccessful", RuntimeWarning
        )
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


def _side(
    frame: pl.DataFrame, name: str, by: list[str], quantiles: Sequence[float]
) -> pl.DataFrame:
    """Replies and latency quantiles of one side (``name``), per ``by`` (or over all)."""
    aggs = [pl.len().cast(pl.Int64).alias(name), *_quantile_cols("latency_s", quantiles, name)]
    return frame.group_by(by).agg(aggs) if by else frame.select(aggs)


def _pair_latency(
    sim_r: pl.DataFrame, obs_r: pl.DataFrame, quantiles: Sequence[float], min_samples: int
) -> pl.DataFrame:
    """Per directed pair: replies, latency quantiles of both sides and their KS statistic."""
    pair = ["from_agent", "to_agent"]
    per_pair = _side(obs_r, "observed", pair, quantiles).join(
        _side(sim_r, "simulated", pair, quantiles), on=pair, how="full", coalesce=True
    )
    per_pair = per_pair.with_columns(pl.col("observed", "simulated").fill_null(0)).sort(pair)
    # one KS test per pair (a few dozen scipy calls, on arrays gathered by Polars)
    sim_lists = dict(
        sim_r.group_by(pl.concat_str(pair, separator="\u0000")).agg(pl.col("latency_s")).iter_rows()
    )
    obs_lists = dict(
        obs_r.group_by(pl.concat_str(pair, separator="\u0000")).agg(pl.col("latency_s")).iter_rows()
    )
    tests = [
        _ks(
            np.asarray(sim_lists.get(f"{a}\u0000{b}", []), dtype=float),
            np.asarray(obs_lists.get(f"{a}\u0000{b}", []), dtype=float),
            min_samples,
        )
        for a, b in per_pair.select(pair).iter_rows()
    ]
    latency = per_pair.with_columns(
        pl.Series("ks", [t[0] for t in tests], dtype=pl.Float64),
        pl.Series("ks_pvalue", [t[1] for t in tests], dtype=pl.Float64),
    )
    order = [*pair, "observed", "simulated"] + [
        c for c in latency.columns if c.startswith(("observed_p", "simulated_p"))
    ]
    return latency.select(*order, "ks", "ks_pvalue")


def _turn_table(
    sim_r: pl.DataFrame, obs_r: pl.DataFrame
) -> tuple[pl.DataFrame, float | None, float | None]:
    """Turn counts and shares of both sides, and the KS statistic of the turns."""
    turn_col = pl.col("turns").fill_null(0).cast(pl.Int64)
    sim_t = sim_r.select(turn_col)["turns"].to_numpy()
    obs_t = obs_r.select(turn_col)["turns"].to_numpy()
    t_ks, t_p = _ks(sim_t, obs_t, 1)

    def turn_counts(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        return (
            frame.group_by(turn_col)
            .agg(pl.len().cast(pl.Int64).alias(name))
            .with_columns((pl.col(name) / pl.col(name).sum()).alias(f"{name}_share"))
        )

    turns = (
        turn_counts(obs_r, "observed")
        .join(turn_counts(sim_r, "simulated"), on="turns", how="full", coalesce=True)
        .with_columns(
            pl.col("observed", "simulated").fill_null(0),
            pl.col("observed_share", "simulated_share").fill_null(0.0),
        )
        .sort("turns")
        .select("turns", "observed", "simulated", "observed_share", "simulated_share")
    )
    return turns, t_ks, t_p


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

    ks, p = _ks(sim_lat, obs_lat, 1)
    obs_all = _side(obs_r, "observed", [], quantiles)
    sim_all = _side(sim_r, "simulated", [], quantiles)
    overall = pl.concat(
        [
            obs_all.select("observed"),
            sim_all.select("simulated"),
            obs_all.drop("observed"),
            sim_all.drop("simulated"),
        ],
        how="horizontal",
    ).with_columns(
        pl.lit(ks, dtype=pl.Float64).alias("ks"),
        pl.lit(p, dtype=pl.Float64).alias("ks_pvalue"),
        (pl.col("simulated_p50") / pl.col("observed_p50")).alias("median_ratio"),
    )

    latency = _pair_latency(sim_r, obs_r, quantiles, min_samples)

    turns, t_ks, t_p = _turn_table(sim_r, obs_r)

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
            pl.DataFrame(
                {
                    "source": name,
                    "quantile": grid,
                    "latency_s": np.quantile(x, grid) if x.size else np.full(grid.size, np.nan),
                }
            )
            for name, x in (("observed", obs_lat), ("simulated", sim_lat))
        ]
    )
    return Comparison(
        overall=overall,
        latency=latency,
        turns=turns,
        turns_ks=t_ks,
        turns_ks_pvalue=t_p,
        outcomes=outcomes,
        curves=curves,
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
        alt.Chart(
            cmp.curves.drop_nans(),
            title=f"{title}: first-reply latency (KS {ks:.3f})" if ks is not None else title,
        )
        .mark_line()
        .encode(
            x=alt.X("latency_s:Q", title="seconds (log scale)", scale=alt.Scale(type="log")),
            y=alt.Y("quantile:Q", title="share of replies ≤ x"),
            color=alt.Color("source:N", scale=colors, title=None),
            tooltip=[
                "source:N",
                alt.Tooltip("quantile:Q", format=".2f"),
                alt.Tooltip("latency_s:Q", format=".1f"),
            ],
        )
        .properties(width=360, height=260)
    )
    long = cmp.turns.unpivot(
        index="turns",
        on=["observed_share", "simulated_share"],
        variable_name="source",
        value_name="share",
    )
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
