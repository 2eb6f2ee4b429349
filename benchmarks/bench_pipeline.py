"""Pipeline benchmark (issues 3 and 4): enrich, work sessions, conversations and the graph on
the generated ≥ 800k-event log, each against the bare Polars read B of the same file in the
same run.

Run from the repository root::

    .venv/bin/python benchmarks/bench_pipeline.py               # 860k events (~285 MB)
    .venv/bin/python benchmarks/bench_pipeline.py --events 100000 --repeat 1

Goals: enrich + work_sessions on the loaded frame ≤ 0.75 × B; load + enrich + work_sessions
≤ 2 × B, peak memory ≤ 2 GB; conversations + graph on the loaded, enriched frame ≤ 1 × B.
The speed-up over the slow reference implementation of the tests is measured on a slice
(``--ref-events``) and reported per event.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from _common import (  # noqa: E402
    log_and_bare,
    machine,
    parser,
    peak_rss_mb,
    save,
    timed,
)


def main() -> int:
    ap = parser(__doc__, ref_events=True)
    args = ap.parse_args()

    import a2a_lab as al
    from a2a_lab.analysis.conversations import conversations
    from a2a_lab.analysis.graph import interaction_graph
    from a2a_lab.enrich import enrich
    from a2a_lab.sessions import work_sessions

    path, size_mb, b, _ = log_and_bare(args.events, args.repeat)
    events = al.load(path).events
    now = int(events["event_ms"].max()) + 3_600_000

    t_enrich, _, enriched = timed(lambda: enrich(events), args.repeat)
    t_ws, _, ws = timed(lambda: work_sessions(enriched, now=now), args.repeat)
    t_enrich_ws, _, _ = timed(lambda: work_sessions(enrich(events), now=now), args.repeat)
    t_full, _, _ = timed(lambda: work_sessions(enrich(al.load(path).events), now=now), args.repeat)
    t_conv, _, conv = timed(lambda: conversations(enriched), args.repeat)
    t_graph, _, g = timed(lambda: interaction_graph(enriched), args.repeat)
    t_conv_graph, _, _ = timed(
        lambda: (conversations(enriched), interaction_graph(enriched)), args.repeat
    )

    rss = peak_rss_mb(
        "import a2a_lab as al; from a2a_lab.enrich import enrich; from a2a_lab.sessions import work_sessions; "
        f"ev = al.load({str(path)!r}).events; work_sessions(enrich(ev), now={now})"
    )

    # the slow, obvious reference of the tests (tests/support/reference_impl) on a slice, per event
    from tests.support.reference_impl.enrich_ref import enrich_event
    from tests.support.reference_impl.sessions_ref import build_work_sessions, enriched_event_object

    n = min(args.ref_events, events.height)
    records = [
        json.loads(raw)
        for raw in al.io.original_lines(events.head(n).select("file", "line")).to_list()
    ]
    t0 = time.perf_counter()
    objs = [enriched_event_object(r, enrich_event(r)) for r in records]
    build_work_sessions(objs, now_ms=now)
    t_ref = time.perf_counter() - t0
    fast_per_event = t_enrich_ws / events.height
    ref = {
        "ref_events": n,
        "ref_s": round(t_ref, 3),
        "ref_us_per_event": round(t_ref / n * 1e6, 2),
        "fast_us_per_event": round(fast_per_event * 1e6, 3),
        "speedup": round((t_ref / n) / fast_per_event, 1),
    }

    result = {
        "benchmark": "pipeline",
        "command": " ".join(["benchmarks/bench_pipeline.py", *sys.argv[1:]]),
        "machine": machine(),
        "events": events.height,
        "file_mb": round(size_mb, 1),
        "B_s": round(b, 3),
        "enrich_s": round(t_enrich, 3),
        "work_sessions_s": round(t_ws, 3),
        "enrich_plus_ws_s": round(t_enrich_ws, 3),
        "ratio_enrich_ws": round(t_enrich_ws / b, 3),
        "load_enrich_ws_s": round(t_full, 3),
        "ratio_load_enrich_ws": round(t_full / b, 3),
        "peak_rss_load_enrich_ws_mb": round(rss, 1),
        "conversations_s": round(t_conv, 3),
        "graph_s": round(t_graph, 3),
        "conv_plus_graph_s": round(t_conv_graph, 3),
        "ratio_conv_graph": round(t_conv_graph / b, 3),
        "sessions": ws.sessions.height,
        "exchanges": conv.height,
        "graph_edges": g.number_of_edges(),
        **ref,
    }
    out = save("pipeline", result)
    print("| step | s | × B |")
    print("|---|---:|---:|")
    print(f"| B (bare read) | {b:.2f} | 1.00 |")
    for label, t in [
        ("enrich", t_enrich),
        ("work_sessions", t_ws),
        ("enrich + work_sessions", t_enrich_ws),
        ("load + enrich + work_sessions", t_full),
        ("conversations", t_conv),
        ("graph", t_graph),
        ("conversations + graph", t_conv_graph),
    ]:
        print(f"| {label} | {t:.2f} | {t / b:.2f} |")
    print(f"peak RSS load+enrich+work_sessions: {rss:.0f} MB; reference: {ref}")
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
