"""Simulator benchmark (issue 6): messages per second of the model vs a bare SimPy M/M/1.

Run from the repository root::

    .venv/bin/python benchmarks/bench_sim.py                        # 200k messages, 3 repeats
    .venv/bin/python benchmarks/bench_sim.py --messages 50000 --repeat 1   # quick look

Three figures, in the same run:

- **bare**: a minimal SimPy M/M/1 (λ = 0.8, μ = 1): pre-drawn exponential gaps and service
  times, a source process, one process per customer requesting a ``simpy.Resource``;
- **mm1 preset**: :func:`a2a_lab.sim.simulate` on :func:`a2a_lab.sim.workload.presets.mm1` of the
  same size (the full model with every other policy off: drawing the plan and running the
  model; frames are built only on use), then, separately, the cost of the per-message frame
  and of rendering the event log;
- **full default model**: ``SimConfig()`` (gate, chunked wait, ping-pong, announce, tasks)
  with ``--full-messages`` messages.

Goal: the preset at ≥ 1/3 of bare's messages per second. Wall and CPU times are both
reported (the median of ``--repeat`` runs); on a shared machine the CPU-time ratio is the
steadier one.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import simpy  # noqa: E402
from _common import machine, parser, print_throughput, save, wall_and_cpu  # noqa: E402

LAMBDA, MU = 0.8, 1.0


def bare_mm1(n: int, seed: int) -> float:
    """A minimal SimPy M/M/1 of ``n`` customers; returns the mean wait."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1 / LAMBDA, n).tolist()
    services = rng.exponential(1 / MU, n).tolist()
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    waits = [0.0] * n

    def customer(i: int):
        arrived = env.now
        with server.request() as request:
            yield request
            waits[i] = env.now - arrived
            yield env.timeout(services[i])

    def source():
        for i in range(n):
            yield env.timeout(gaps[i])
            env.process(customer(i))

    env.process(source())
    env.run()
    return sum(waits) / n


def main() -> int:
    ap = parser(__doc__, events=200_000, messages="messages of the M/M/1 runs")
    ap.add_argument(
        "--full-messages", type=int, default=20_000, help="messages of the full default model"
    )
    args = ap.parse_args()

    from a2a_lab.sim import SimConfig, presets, simulate

    n = args.messages
    cfg = presets.mm1(LAMBDA, MU, n_messages=n)
    # alternate the two, so that a change in the machine's load hits both alike
    bare_runs, sim_runs = [], []
    for _ in range(args.repeat):
        bare_runs.append(wall_and_cpu(lambda: bare_mm1(n, args.seed), 1))
        sim_runs.append(wall_and_cpu(lambda: simulate(cfg, seed=args.seed), 1))
    bare_wall, bare_cpu = (statistics.median(r[k] for r in bare_runs) for k in (0, 1))
    sim_wall, sim_cpu = (statistics.median(r[k] for r in sim_runs) for k in (0, 1))
    bare_wait, res = bare_runs[-1][2], sim_runs[-1][2]
    sim_wait = res.summary()["mean_wait_s"]
    # the frames are built on first use (and then cached): time that first use, on fresh runs
    fresh = simulate(cfg, seed=args.seed)
    frame_wall, _, _ = wall_and_cpu(lambda: fresh.messages, 1)
    fresh = simulate(cfg, seed=args.seed)
    events_wall, _, ev = wall_and_cpu(lambda: fresh.events, 1)
    assert ev.height == 3 * n

    full = SimConfig(n_messages=args.full_messages)
    full_wall, full_cpu, full_res = wall_and_cpu(
        lambda: simulate(full, seed=args.seed), args.repeat
    )
    fresh = simulate(full, seed=args.seed)
    full_events_wall, _, full_ev = wall_and_cpu(lambda: fresh.events, 1)

    def rate(count: int, seconds: float) -> float:
        return count / seconds

    result = {
        "benchmark": "sim",
        "command": " ".join(["benchmarks/bench_sim.py", *sys.argv[1:]]),
        "machine": machine(),
        "messages": n,
        "bare_msgs_per_s": round(rate(n, bare_wall)),
        "bare_msgs_per_cpu_s": round(rate(n, bare_cpu)),
        "mm1_msgs_per_s": round(rate(n, sim_wall)),
        "mm1_msgs_per_cpu_s": round(rate(n, sim_cpu)),
        "mm1_over_bare_wall": round(bare_wall / sim_wall, 2),
        "mm1_over_bare_cpu": round(bare_cpu / sim_cpu, 2),
        "mm1_messages_frame_s": round(frame_wall, 3),
        "mm1_event_log_s": round(events_wall, 3),
        "bare_mean_wait_s": round(bare_wait, 4),
        "mm1_mean_wait_s": round(sim_wait, 4),
        "full_messages": args.full_messages,
        "full_msgs_per_s": round(rate(args.full_messages, full_wall)),
        "full_msgs_per_cpu_s": round(rate(args.full_messages, full_cpu)),
        "full_events": full_ev.height,
        "full_event_log_s": round(full_events_wall, 3),
        "full_outcomes": full_res.messages["outcome"].value_counts().sort("outcome").rows(),
    }
    out = save("sim", result)
    print_throughput(
        result,
        "bare",
        [
            ("bare SimPy M/M/1", "bare", n, None),
            ("`presets.mm1`", "mm1", n, "mm1_over_bare"),
            ("`SimConfig()` (full default)", "full", args.full_messages, None),
        ],
    )
    print(
        f"\nbuilt on first use: mm1 messages frame {frame_wall:.2f} s, its event log ({3 * n:,} events) "
        f"{events_wall:.2f} s; full default event log ({full_ev.height:,} events) {full_events_wall:.2f} s"
    )
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
