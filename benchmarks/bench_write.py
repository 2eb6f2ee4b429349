"""Canonical write-back benchmark (issue 12 item 4): ``write_events`` of a frame without ``raw``.

The events of the benchmark log are loaded once per package tree, without their original
lines, and saved as Parquet; then every timed step is a fresh process (under
``/usr/bin/time -v``) that reads the Parquet and times the ``write_events(ev, OUT)`` call
alone: its wall and CPU seconds (``time.process_time``: every thread), the process's RSS
after the read (the frame) and its peak. ``--baseline DIR`` (e.g. the row-by-row writer of
commit ``8c787c5``: ``git archive 8c787c5 a2a_lab | tar -x -C DIR``) runs the same steps
on another copy of the package, in the same run; its loader always kept ``raw``, so its
frame is saved with ``raw`` dropped and its writer renders canonical JSON from the typed
columns. The outputs are compared byte for byte.

Run from the repository root, niced on a shared machine::

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python benchmarks/bench_write.py \\
        --baseline /tmp/orig --workdir /tmp/bench_write

Goal: ``write_events`` ≥ 10 × faster than the row-by-row writer, peak ≤ 2 × the written size.
"""

from __future__ import annotations

import filecmp
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, bench_log, machine, parser, save
from bench_load import median_of, run_step

#: Load once (without ``raw``; an old loader that always keeps it: dropped) and save Parquet.
PREP = (
    "import a2a_lab as al\nres = al.load(PATH)\n"
    "ev = res.events if hasattr(res, 'events') else res\n"
    "ev.drop('raw', strict=False).write_parquet(PARQUET)\nprint('events', ev.height)"
)

#: Read the Parquet, then time the call alone.
WRITE = (
    "import os, time, polars as pl, a2a_lab as al\nev = pl.read_parquet(PARQUET)\n"
    "print('rss_read_mb', int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGESIZE') / 2**20)\n"
    "w0, c0 = time.perf_counter(), time.process_time()\nal.io.write_events(ev, OUT)\n"
    "print('call_cpu_s', time.process_time() - c0)\nprint('call_wall_s', time.perf_counter() - w0)\n"
    "print('written_mb', os.path.getsize(OUT) / 2**20)"
)


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument(
        "--baseline", type=Path, help="another copy of the package to measure in the same run"
    )
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="more copies of the package to measure in the same run (e.g. main=/tmp/main)",
    )
    ap.add_argument("--log", type=Path, help="the NDJSON log (default: the benchmark log)")
    ap.add_argument(
        "--workdir",
        type=Path,
        default=ROOT / "benchmarks" / "_data" / "write",
        help="where the Parquet frames and the written files go",
    )
    ap.add_argument(
        "--keep-frames", action="store_true", help="reuse the Parquet frames of an earlier run"
    )
    args = ap.parse_args()
    log = args.log or bench_log(args.events)
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    trees = {"now": ROOT}
    if args.baseline:
        trees["before"] = args.baseline.resolve()
    for spec in args.tree:
        label, _, tree = spec.partition("=")
        trees[label] = Path(tree).resolve()
    parquet = {label: work / f"events_{label}.parquet" for label in trees}
    out = {label: work / f"written_{label}.ndjson" for label in trees}
    for label, tree in trees.items():
        if args.keep_frames and parquet[label].exists():
            continue
        prep = run_step(PREP, log, tree, PARQUET=repr(str(parquet[label])))
        print(f"prep {label}", prep, flush=True)
    results: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        for label, tree in trees.items():
            subst = {"PARQUET": repr(str(parquet[label])), "OUT": repr(str(out[label]))}
            run = run_step(WRITE, log, tree, **subst)
            run["peak_minus_read_mb"] = run["rss_mb"] - run["rss_read_mb"]
            results.setdefault(label, []).append(run)
            print(f"write_events {label}", run, flush=True)
    same = {
        label: filecmp.cmp(out["now"], out[label], shallow=False) for label in out if label != "now"
    }
    med = {k: median_of(v) for k, v in results.items()}
    result = {
        "benchmark": "write",
        "command": " ".join(["benchmarks/bench_write.py", *sys.argv[1:]]),
        "machine": machine(),
        "log": str(log),
        "log_mb": round(log.stat().st_size / 2**20, 1),
        "outputs_identical": same,
        "median": med,
        "all": results,
    }
    saved = save("write", result)
    print(
        "| writer | call wall s | call CPU s | RSS after read MiB | peak MiB | peak − read MiB "
        "| written MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, v in med.items():
        print(
            f"| {k} | {v['call_wall_s']:.2f} | {v['call_cpu_s']:.2f} | {v['rss_read_mb']:.0f} "
            f"| {v['rss_mb']:.0f} | {v['peak_minus_read_mb']:.0f} | {v['written_mb']:.1f} |"
        )
    n = med["now"]
    for label, b in med.items():
        if label != "now":
            print(
                f"{label} / now: call CPU {b['call_cpu_s'] / n['call_cpu_s']:.1f} ×, "
                f"call wall {b['call_wall_s'] / n['call_wall_s']:.1f} ×; "
                f"output identical to now's: {same[label]}"
            )
    print(
        json.dumps(
            {"peak_le_2x_written": med["now"]["peak_minus_read_mb"] <= 2 * med["now"]["written_mb"]}
        )
    )
    print(f"saved {saved}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
