"""How well the twin recovers a known model from a log with tasks on (issue 11 item 4).

For each seed: simulate three days of today's deployment (tasks, channel sessions, announce
steps, the gate) with five main agents of lognormal service means 30, 60, 90, 120, 150 s
(CV ``--cv``), two sub-agents of mean 90 s, and ``server_overload`` on 3 % of runs; fit it
(:func:`a2a_lab.analysis.calibrate.fit_log`); simulate five replications of the twin and
compare them with the log. Prints, per seed, every agent's relative error of the mean
service time (against the configured mean, and the worst against the mean of the agent's
runs in the log), the runs the fit measured and those it used with their start in
distribution (behind a hidden run, :mod:`a2a_lab.analysis.calibrate._hidden`), the fitted failure chance, the twin's and the log's failure share and
no-reply share, the latency KS statistic, and the wall time of the fit.

Usage::

    PYTHONPATH=. python benchmarks/bench_twin.py --seeds 1 2 3 4 [--cv 0.6] [--tasks-off]
"""

from __future__ import annotations

import argparse
import time

import polars as pl

from a2a_lab.analysis.calibrate import compare, exchanges, fit_log
from a2a_lab.sim import AgentConfig, FailurePolicy, Lognormal, SimConfig, simulate

MEANS = {"main": 30.0, "ruda": 60.0, "eden": 90.0, "seum": 120.0, "bada": 150.0}


def config(cv: float, tasks: bool) -> SimConfig:
    """The known model."""
    subs = [a for a in SimConfig().agents if a.kind == "subagent"]
    agents = [
        AgentConfig(id=a, service=Lognormal(mean_s=m, cv=cv)) for a, m in MEANS.items()
    ] + subs
    cfg = SimConfig(
        agents=agents,
        n_messages=None,
        duration_s=3 * 86400.0,
        failures=FailurePolicy(rates={"server_overload": 0.03}),
    )
    return cfg if tasks else cfg.model_copy(update={"tasks": None})


def error_share(frames: list[pl.DataFrame]) -> float:
    """Share of exchanges that ended in ``no_reply`` for another reason than the wait limit."""
    ex = pl.concat([exchanges(f) for f in frames]).filter(~pl.col("spawned") & pl.col("has_send"))
    return float(
        ex.select(
            ((pl.col("outcome") == "no_reply") & (pl.col("outcome_reason") != "timeout")).mean()
        ).item()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--cv", type=float, default=0.6)
    parser.add_argument("--tasks-off", action="store_true")
    args = parser.parse_args()
    cfg = config(args.cv, not args.tasks_off)
    truth = {a.id: a.service.mean for a in cfg.agents}
    for seed in args.seeds:
        log = simulate(cfg, seed=seed)
        t0 = time.perf_counter()
        cal = fit_log(log.events)
        fit_s = time.perf_counter() - t0
        errors = {
            r["agent"]: r["mean_s"] / truth[r["agent"]] - 1
            for r in cal.service.iter_rows(named=True)
            if r["agent"] in truth
        }
        # against the mean of each agent's runs in the log (the simulator's draws for them)
        realised = dict(
            log.messages.group_by("to_agent").agg(pl.col("service_s").mean()).iter_rows()
        )
        vs_log = {
            r["agent"]: r["mean_s"] / realised[r["agent"]] - 1
            for r in cal.service.iter_rows(named=True)
            if r["agent"] in realised
        }
        measured = dict(cal.service.select("agent", "observed").iter_rows())
        hidden = dict(cal.service.select("agent", "hidden").iter_rows())
        twins = [simulate(cal.config, seed=100 + k) for k in range(5)]
        cmp = compare(twins, log.events)
        shares = {o: (a, b) for o, a, b in cmp.outcomes.iter_rows()}
        fitted = (
            cal.config.failures.rates.get("server_overload", 0.0) if cal.config.failures else 0.0
        )
        print(
            f"seed {seed}: service mean error "
            + " ".join(f"{a} {e:+.1%}" for a, e in sorted(errors.items()))
            + f" | worst {max(abs(e) for e in errors.values()):.1%}"
            + f" | vs the log's runs: worst {max(abs(e) for e in vs_log.values()):.1%}"
            + f" | runs measured: {min(measured[a] for a in errors)}-{max(measured[a] for a in errors)}"
            + f" | behind a hidden run: {min(hidden[a] for a in errors)}-{max(hidden[a] for a in errors)}"
            + f" | fitted failure {fitted:.2%}"
            + f" | failure share log {error_share([log.events]):.2%} twin {error_share([t.events for t in twins]):.2%}"
            + f" | no_reply log {shares['no_reply'][0]:.2%} twin {shares['no_reply'][1]:.2%}"
            + f" | KS {cmp.overall['ks'][0]:.3f} | fit {fit_s:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
