"""Sweep benchmark (issue 8): the same sweep in this process, on 1 and on 2 worker processes.

Run from the repository root on an otherwise idle machine::

    .venv/bin/python benchmarks/bench_sweep.py                  # ≥ 60 s serially
    .venv/bin/python benchmarks/bench_sweep.py --replications 8  # a quick look

The sweep: today's default deployment (:class:`a2a_lab.sim.SimConfig`, 2,000 messages per
run, every policy on) at five traffic levels, ``--replications`` each. It runs in this
process (``workers=1``), on a process pool of one worker and on one of two, and every run
must give the identical frame. The pool runs are alternated (``--repeat`` rounds of one
worker, then two) and the best of each is kept. Goal: two workers ≥ 1.7 × faster than one.
Worker start-up (a fresh interpreter importing a2a_lab) is part of the measured time.
Recorded with each pool run: the 1-minute load average at its start and the cores it used
(CPU seconds of the pool's processes over wall seconds): other work on the machine takes
cores from the pool, and a two-worker run that used well under 2 cores was not measured
on an idle machine. ``--ceiling`` also times what the machine gives at best: the same runs
in one plain process (no executor) against two plain processes running half each.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
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
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--replications", type=int, default=96, help="replications per grid point")
    ap.add_argument("--messages", type=int, default=2000, help="messages per run")
    ap.add_argument(
        "--repeat", type=int, default=2, help="rounds of (1 worker, 2 workers), alternated"
    )
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="also time the machine's own ceiling: the same runs in one plain process vs split over two",
    )
    # `make bench BENCH_ARGS=...` passes the same arguments to every benchmark: ignore the others
    args, _ = ap.parse_known_args()

    from polars.testing import assert_frame_equal

    from a2a_lab.sim import SimConfig
    from a2a_lab.sim.experiments import RunOptions
    from a2a_lab.sim.experiments.sweep import sweep

    config = SimConfig(n_messages=args.messages)
    grid = {"rate_scale": SCALES}
    runs = len(SCALES) * args.replications

    def cpu_s() -> float:
        # this process and its reaped children (a pool's workers count once the pool is shut down)
        own, kids = (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    def timed(workers: int) -> float:
        load = os.getloadavg()[0]
        cpu0, t0 = cpu_s(), time.perf_counter()
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            out = sweep(
                config,
                grid,
                RunOptions(
                    replications=args.replications, seed=args.seed, executor=pool, progress=False
                ),
            )
        elapsed = time.perf_counter() - t0
        assert_frame_equal(out, reference)
        loads.append(round(load, 2))
        cores.append(round((cpu_s() - cpu0) / elapsed, 2))
        return elapsed

    loads: list[float] = []
    cores: list[float] = []
    ctx = multiprocessing.get_context("spawn")
    cpu0, t0 = cpu_s(), time.perf_counter()
    reference = sweep(
        config,
        grid,
        RunOptions(replications=args.replications, seed=args.seed, workers=1, progress=False),
    )
    t_inproc = time.perf_counter() - t0
    cores_inproc = round((cpu_s() - cpu0) / t_inproc, 2)
    t_one: list[float] = []
    t_two: list[float] = []
    # alternated rounds, best of each: a burst of other work on the machine hits one round, not a whole series
    for _ in range(args.repeat):
        t_one.append(timed(1))
        t_two.append(timed(2))
    best_one, best_two = min(t_one), min(t_two)
    ceiling: dict[str, float] = {}
    if args.ceiling:
        # no executor at all: one interpreter running every replication, then two running half
        # each at the same time; their ratio is what two cores of this machine give at best
        code = (
            "import sys; from a2a_lab.sim import SimConfig; "
            "from a2a_lab.sim.experiments import RunOptions, sweep; "
            f"sweep(SimConfig(n_messages={args.messages}), {{'rate_scale': {SCALES!r}}}, "
            "RunOptions(replications=int(sys.argv[1]), seed=int(sys.argv[2]), workers=1, "
            "progress=False))"
        )
        half = args.replications // 2

        def plain(*jobs: tuple[int, int]) -> float:
            t0 = time.perf_counter()
            procs = [
                subprocess.Popen([sys.executable, "-c", code, str(r), str(seed)])
                for r, seed in jobs
            ]
            if any(p.wait() for p in procs):
                raise RuntimeError("a plain sweep process failed")
            return time.perf_counter() - t0

        one_process = plain((2 * half, args.seed))
        two_processes = plain((half, args.seed), (half, args.seed + 1))
        ceiling = {
            "one_process_s": round(one_process, 2),
            "two_processes_s": round(two_processes, 2),
            "ceiling_speedup": round(one_process / two_processes, 3),
        }

    result = {
        "benchmark": "sweep",
        "command": " ".join(["benchmarks/bench_sweep.py", *sys.argv[1:]]),
        "machine": machine(),
        "grid_points": len(SCALES),
        "replications": args.replications,
        "messages_per_run": args.messages,
        "runs": runs,
        "in_process_s": round(t_inproc, 2),
        "one_worker_s": [round(t, 2) for t in t_one],
        "two_workers_s": [round(t, 2) for t in t_two],
        "speedup_two_vs_one": round(best_one / best_two, 3),
        "speedup_two_vs_in_process": round(t_inproc / best_two, 3),
        "load_avg_1m_at_each_start": loads,
        "cores_used_in_process": cores_inproc,
        "cores_used_each_pool_run": cores,
        "identical_results": True,
        **ceiling,
    }
    out = save("sweep", result)
    print(
        "| runs | in process s | 1 worker s (best) | 2 workers s (best) | speed-up 2 vs 1 | 2 vs in process "
        "| cores used (pool runs) | 1-min load at each pool start |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---|")
    print(
        f"| {runs} | {t_inproc:.1f} | {best_one:.1f} | {best_two:.1f} | {best_one / best_two:.2f}× "
        f"| {t_inproc / best_two:.2f}× | {', '.join(f'{x:.2f}' for x in cores)} | {', '.join(f'{x:.2f}' for x in loads)} |"
    )
    if ceiling:
        print(
            f"ceiling: one plain process {ceiling['one_process_s']:.1f} s, two at once {ceiling['two_processes_s']:.1f} s: "
            f"{ceiling['ceiling_speedup']:.2f}×"
        )
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
