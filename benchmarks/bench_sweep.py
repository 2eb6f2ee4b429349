"""Sweep benchmark (issue 8): the same sweep in this process, on 1 and on 2 worker processes.

Run from the repository root on an otherwise idle machine::

    .venv/bin/python benchmarks/bench_sweep.py                  # ≥ 60 s serially
    .venv/bin/python benchmarks/bench_sweep.py --replications 8  # a quick look

The sweep: today's default deployment (:class:`a2a_lab.sim.SimConfig`, 2,000 messages per
run, every policy on) at five traffic levels, ``--replications`` each. It runs three times
— in this process (``workers=1``), on a process pool of one worker and on one of two — and
every run must give the identical frame. Goal: two workers ≥ 1.7 × faster than one. Worker
start-up (a fresh interpreter importing a2a_lab) is part of the measured time. The load
average before and after is recorded: other work on the machine takes cores from the pool.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import machine, save  # noqa: E402

SCALES = [0.5, 1.0, 2.0, 3.0, 4.0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replications", type=int, default=48, help="replications per grid point")
    ap.add_argument("--messages", type=int, default=2000, help="messages per run")
    ap.add_argument("--seed", type=int, default=8)
    # `make bench BENCH_ARGS=...` passes the same arguments to every benchmark: ignore theirs
    args, _ = ap.parse_known_args()

    from polars.testing import assert_frame_equal

    from a2a_lab.sim import SimConfig
    from a2a_lab.sim.sweep import sweep

    config = SimConfig(n_messages=args.messages)
    grid = {"rate_scale": SCALES}
    runs = len(SCALES) * args.replications

    def timed(**kw: object) -> tuple[float, object]:
        t0 = time.perf_counter()
        out = sweep(config, grid, replications=args.replications, seed=args.seed, progress=False, **kw)  # type: ignore[arg-type]
        return time.perf_counter() - t0, out

    load_before = os.getloadavg()
    t_inproc, reference = timed(workers=1)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx) as one:
        t_one, out_one = timed(executor=one)
    t_two, out_two = timed(workers=2)
    load_after = os.getloadavg()
    assert_frame_equal(out_one, reference)  # type: ignore[arg-type]
    assert_frame_equal(out_two, reference)  # type: ignore[arg-type]

    result = {
        "benchmark": "sweep",
        "command": " ".join(["benchmarks/bench_sweep.py", *sys.argv[1:]]),
        "machine": machine(),
        "grid_points": len(SCALES),
        "replications": args.replications,
        "messages_per_run": args.messages,
        "runs": runs,
        "in_process_s": round(t_inproc, 2),
        "one_worker_s": round(t_one, 2),
        "two_workers_s": round(t_two, 2),
        "speedup_two_vs_one": round(t_one / t_two, 3),
        "speedup_two_vs_in_process": round(t_inproc / t_two, 3),
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in load_after],
        "identical_results": True,
    }
    out = save("sweep", result)
    print("| runs | in process s | 1 worker s | 2 workers s | speed-up 2 vs 1 | 2 vs in process | load 1/5/15 min before → after |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    before = "/".join(f"{x:.2f}" for x in load_before)
    after = "/".join(f"{x:.2f}" for x in load_after)
    print(
        f"| {runs} | {t_inproc:.1f} | {t_one:.1f} | {t_two:.1f} | {t_one / t_two:.2f}× | {t_inproc / t_two:.2f}× "
        f"| {before} → {after} |"
    )
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
