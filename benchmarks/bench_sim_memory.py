"""Simulator memory benchmark (issue 12): a large run simulated and streamed to a log file.

Run from the repository root, in a fresh process under ``/usr/bin/time -v`` (its
"Maximum resident set size" is the process peak)::

    PYTHONPATH=$PWD nice -n 10 /usr/bin/time -v .venv/bin/python \\
        benchmarks/bench_sim_memory.py --messages 1000000 --out /tmp/sim1m.ndjson

Steps, as a user runs them: ``draw_plan`` (the plan), ``build_model(...).run()`` (the SimPy
run and its trace; the model is dropped afterwards, as :func:`a2a_lab.sim.simulate` drops
it), the identifiers, then ``a2a_lab.write_events(res.event_chunks(), OUT)`` (the log
rendered and written a chunk at a time). After each step it prints the resident set size
(VmRSS), the highest RSS seen during the step (sampled every 20 ms by a thread) and the
wall and CPU seconds of the step; ``--sha256`` also prints the digest of the file written
(to compare the bytes of two versions of the code).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import resource
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class _Phases:
    """RSS, phase peak and times per step (a sampling thread keeps the running peak)."""

    def __init__(self) -> None:
        self.peak = _rss_mb()
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        threading.Thread(target=self._sample, daemon=True).start()
        print(f"{'step':34s} {'RSS MB':>9s} {'peak MB':>9s} {'wall s':>8s} {'CPU s':>8s}")

    def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, _rss_mb())
            time.sleep(0.02)

    def mark(self, step: str) -> None:
        rss = _rss_mb()
        peak, self.peak = max(self.peak, rss), rss
        wall, cpu = time.perf_counter(), time.process_time()
        print(
            f"{step:34s} {rss:9.1f} {peak:9.1f} {wall - self.wall:8.1f} {cpu - self.cpu:8.1f}",
            flush=True,
        )
        self.wall, self.cpu = wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True, help="the log file to write")
    ap.add_argument("--sha256", action="store_true", help="print the digest of the file")
    args = ap.parse_args()

    phases = _Phases()
    import a2a_lab as al
    from a2a_lab.sim import SimConfig
    from a2a_lab.sim.engine.model import build_model
    from a2a_lab.sim.run import SimResult
    from a2a_lab.sim.workload.plan import draw_plan

    phases.mark("imports")
    config = SimConfig(n_messages=args.messages)
    plan = draw_plan(config, args.seed)
    phases.mark("plan")
    trace = build_model(plan, config, args.seed).run()
    gc.collect()
    phases.mark("model run + trace")
    res = SimResult(config=config, seed=args.seed, plan=plan, trace=trace)
    _ = res.ids
    phases.mark("identifiers")

    def chunks():  # type: ignore[no-untyped-def]
        for k, chunk in enumerate(res.event_chunks()):
            yield chunk
            if k < 2:
                phases.mark(f"write: chunk {k} ({chunk.height:,} events)")

    report = al.write_events(chunks(), args.out)
    phases.mark("write: the rest")
    size = args.out.stat().st_size
    print(f"{report.lines:,} lines, {size / 1e6:,.0f} MB")
    print(
        f"process peak (ru_maxrss) {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB"
    )
    if args.sha256:
        digest = hashlib.sha256()
        with args.out.open("rb") as f:
            while block := f.read(1 << 24):
                digest.update(block)
        print(f"sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
