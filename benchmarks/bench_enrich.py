"""Enrichment benchmark (issue 3): ``a2a_lab.enrich`` on the loaded ≥ 800k-event log vs the
bare Polars read B of the same file in the same run, and vs the slow reference of the tests.

Run from the repository root::

    .venv/bin/python benchmarks/bench_enrich.py               # 860k events (~285 MB)
    .venv/bin/python benchmarks/bench_enrich.py --events 100000 --repeat 1

Reports the enrichment time (eager, median of ``--repeat``), its CPU time, the ratio to B,
and the per-event speed-up over ``tests/support/reference_impl/enrich_ref.py`` on the first
``--ref-events`` events. (The issue's goal, enrich + work_sessions ≤ 0.75 × B, is measured
by ``bench_pipeline.py``; this one isolates the enrichment's share.)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import log_and_bare, machine, parser, save, timed  # noqa: E402


def main() -> int:
    ap = parser(__doc__, ref_events=True)
    args = ap.parse_args()

    import a2a_lab as al
    from a2a_lab.enrich import enrich
    from tests.support.reference_impl.enrich_ref import enrich_event

    path, size_mb, b, b_all = log_and_bare(args.events, args.repeat)
    events = al.load(path).events
    assert events.height == args.events

    cpu0 = time.process_time()
    t_enrich, enrich_all, enriched = timed(lambda: enrich(events), args.repeat)
    cpu = (time.process_time() - cpu0) / args.repeat
    t_lazy, _, _ = timed(lambda: enrich(events.lazy()).collect(), args.repeat)

    # the slow reference on a slice, per event
    records = [
        json.loads(raw)
        for raw in al.io.original_lines(
            events.head(args.ref_events).select("file", "line")
        ).to_list()
    ]
    t0 = time.perf_counter()
    for rec in records:
        enrich_event(rec, {"main", "ruda"})
    ref_per_event = (time.perf_counter() - t0) / len(records)
    polars_per_event = t_enrich / events.height

    sources = enriched["category_source"].value_counts(sort=True).rows()
    result = {
        "benchmark": "enrich",
        "command": " ".join(["benchmarks/bench_enrich.py", *sys.argv[1:]]),
        "machine": machine(),
        "events": args.events,
        "file_mb": round(size_mb, 1),
        "B_s": round(b, 3),
        "enrich_s": round(t_enrich, 3),
        "enrich_cpu_s": round(cpu, 3),
        "enrich_lazy_s": round(t_lazy, 3),
        "ratio_enrich_over_B": round(t_enrich / b, 3),
        "reference_us_per_event": round(ref_per_event * 1e6, 2),
        "enrich_us_per_event": round(polars_per_event * 1e6, 3),
        "speedup_over_reference": round(ref_per_event / polars_per_event, 1),
        "category_sources": dict(sources),
        "all_times_s": {"B": b_all, "enrich": enrich_all},
    }
    out = save("enrich", result)
    print(
        "| events | file MB | B s | enrich s (× B) | enrich CPU s | speed-up over the slow reference |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.events:,} | {size_mb:.0f} | {b:.2f} | {t_enrich:.2f} ({t_enrich / b:.3f}) | {cpu:.2f} | "
        f"{ref_per_event / polars_per_event:.0f}× |"
    )
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
