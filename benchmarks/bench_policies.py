"""Simulator policies benchmark (issue 7): messages per second with every policy on vs the core.

Run from the repository root::

    .venv/bin/python benchmarks/bench_policies.py                       # 20k messages, 3 repeats
    .venv/bin/python benchmarks/bench_policies.py --messages 5000 --repeat 1   # quick look

Figures, in the same run, the runs alternated ``--repeat`` times (median):

- **core only**: ``SimConfig()``, the full default model as before the policies (concurrency
  gate, chunked 300 s wait, ping-pong, announce, tasks): :class:`~a2a_lab.sim.engine.model.Model` with no policy hook;
- **all policies on**: the same configuration with every policy of
  :mod:`a2a_lab.sim.policies` switched on at its defaults, on the asynchronous path:
  failures (2 % overloaded runs, 1 % failed ``agent.wait`` calls, 0.5 % context overflows,
  0.5 % LLM timeouts), the reference retries, the loop guard (6 per 60 s, relay depth 5)
  with relay depths drawn, the collaborate limit, a queue capacity of 50 per session,
  Discord's rate limits and idempotency keys: the same model with every policy hook on;
- **M/M/1 preset** (``--mm1-messages``), and the same with ``queue_capacity`` set out of reach:
  the lean path without and with a send hook (the capacity check at every arrival).

Each figure is :func:`a2a_lab.sim.simulate` (drawing the plan, running the model); building
the event log is timed separately, once. Wall and CPU times are reported; on a shared
machine the CPU-time column is the steadier one.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import machine, parser, print_throughput, save, wall_and_cpu  # noqa: E402


def main() -> int:
    ap = parser(__doc__, events=20_000, messages="messages of the default-model runs")
    ap.add_argument("--mm1-messages", type=int, default=200_000, help="messages of the M/M/1 runs")
    args = ap.parse_args()

    from a2a_lab.sim import (
        CollaborateLimit,
        FailurePolicy,
        LoopGuardPolicy,
        RateLimitPolicy,
        RelayPolicy,
        SimConfig,
        presets,
        simulate,
    )

    n = args.messages
    core = SimConfig(n_messages=n)
    failures = FailurePolicy(
        rates={
            "server_overload": 0.02,
            "gateway_connection": 0.01,
            "context_exceeded": 0.005,
            "llm_timeout": 0.005,
        }
    )
    everything = core.model_copy(
        update={
            "failures": failures,
            "loop_guard": LoopGuardPolicy(),
            "collaborate_limit": CollaborateLimit(),
            "queue_capacity": 50,
            "rate_limit": RateLimitPolicy(),
            "relays": RelayPolicy(),
        }
    )
    mm1 = presets.mm1(0.8, 1.0, n_messages=args.mm1_messages)
    mm1_capped = mm1.model_copy(update={"queue_capacity": 10**9})

    runs: dict[str, list[tuple[float, float, object]]] = {
        k: [] for k in ("core", "all", "mm1", "mm1_capped")
    }
    # alternate the runs, so that a change in the machine's load hits all alike
    for _ in range(args.repeat):
        runs["core"].append(wall_and_cpu(lambda: simulate(core, seed=args.seed), 1))
        runs["all"].append(wall_and_cpu(lambda: simulate(everything, seed=args.seed), 1))
        runs["mm1"].append(wall_and_cpu(lambda: simulate(mm1, seed=args.seed), 1))
        runs["mm1_capped"].append(wall_and_cpu(lambda: simulate(mm1_capped, seed=args.seed), 1))
    wall = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    cpu = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
    core_res, all_res = runs["core"][-1][2], runs["all"][-1][2]
    # the log is built on first use (and then cached): time that first use, on fresh runs
    fresh_core, fresh_all = simulate(core, seed=args.seed), simulate(everything, seed=args.seed)
    core_events_wall, _, core_ev = wall_and_cpu(lambda: fresh_core.events, 1)
    all_events_wall, _, all_ev = wall_and_cpu(lambda: fresh_all.events, 1)
    s = all_res.summary()
    m = all_res.messages
    count = {"core": n, "all": n, "mm1": args.mm1_messages, "mm1_capped": args.mm1_messages}

    result = {
        "benchmark": "policies",
        "command": " ".join(["benchmarks/bench_policies.py", *sys.argv[1:]]),
        "machine": machine(),
        "messages": n,
        **{f"{k}_msgs_per_s": round(count[k] / wall[k]) for k in runs},
        **{f"{k}_msgs_per_cpu_s": round(count[k] / cpu[k]) for k in runs},
        "all_over_core_wall": round(wall["core"] / wall["all"], 2),
        "all_over_core_cpu": round(cpu["core"] / cpu["all"], 2),
        "mm1_capped_over_mm1_cpu": round(cpu["mm1"] / cpu["mm1_capped"], 2),
        "core_events": core_ev.height,
        "all_events": all_ev.height,
        "core_event_log_s": round(core_events_wall, 3),
        "all_event_log_s": round(all_events_wall, 3),
        "all_retry_amplification": round(s["retry_amplification"], 4),
        "all_outcomes": m["outcome"].value_counts().sort("outcome").rows(),
        "all_blocked_by": m["blocked_by"].drop_nulls().value_counts().sort("blocked_by").rows(),
        "core_outcomes": core_res.messages["outcome"].value_counts().sort("outcome").rows(),
    }
    out = save("policies", result)
    big = args.mm1_messages
    print_throughput(
        result,
        "core",
        [
            ("`SimConfig()`: core only", "core", n, None),
            ("`SimConfig()` + every policy on", "all", n, "all_over_core"),
            ("`presets.mm1` (core lean path)", "mm1", big, None),
            ("`presets.mm1` + `queue_capacity` (policy lean path)", "mm1_capped", big, None),
        ],
    )
    print(
        f"\nevent logs built on first use: core {core_ev.height:,} events in {core_events_wall:.2f} s; "
        f"all policies {all_ev.height:,} events in {all_events_wall:.2f} s"
    )
    print(
        f"all policies: outcomes {result['all_outcomes']}, refused by {result['all_blocked_by']}, "
        f"attempts per message {result['all_retry_amplification']}"
    )
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
