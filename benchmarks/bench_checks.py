"""Log-health benchmark (issue 5): every check on the loaded ≥ 800k-event log vs the bare
Polars read B of the same file, in the same run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_checks.py               # 860k events (~285 MB)
    .venv/bin/python benchmarks/bench_checks.py --events 100000 --repeat 1

Goal: all checks ≤ 2 × B. Also times the directly-follows graph and the OCEL export.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import log_and_bare, machine, parser, save, timed  # noqa: E402


def main() -> int:
    ap = parser(__doc__)
    args = ap.parse_args()

    import a2a_lab as al
    from a2a_lab.analysis.checks import check
    from a2a_lab.analysis.pm import directly_follows, to_ocel2

    path, _, b, _ = log_and_bare(args.events, args.repeat)
    events = al.load(path).events
    now = int(events["event_ms"].max()) + 3_600_000
    t_check, _, found = timed(lambda: check(events, now=now), args.repeat)
    t_dfg, _, _ = timed(lambda: directly_follows(events, case="work_session"), args.repeat)
    t_ocel, _, doc = timed(lambda: to_ocel2(events), 1)
    result = {
        "benchmark": "checks",
        "command": " ".join(["benchmarks/bench_checks.py", *sys.argv[1:]]),
        "machine": machine(),
        "events": events.height,
        "B_s": round(b, 3),
        "check_s": round(t_check, 3),
        "ratio_check": round(t_check / b, 3),
        "findings": found.height,
        "dfg_s": round(t_dfg, 3),
        "ocel_s": round(t_ocel, 3),
        "ocel_events": len(doc["events"]),
    }
    out = save("checks", result)
    print("| events | B s | all checks s (× B) | findings | DFG s | OCEL export s |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {events.height:,} | {b:.2f} | {t_check:.2f} ({t_check / b:.2f}) | {found.height} | {t_dfg:.2f} | {t_ocel:.2f} |"
    )
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
