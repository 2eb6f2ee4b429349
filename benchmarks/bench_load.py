"""Load and write-back benchmark (issue 12): ``al.load`` and ``write_events`` against B21.

Every step runs in a fresh process under ``/usr/bin/time -v`` (wall time of the whole
process, and peak RSS), B21 included, in the same run. B21 is the bare Polars read with the
lean 21-field schema of issue 12. ``--baseline DIR`` also runs the steps on another copy of
the package (e.g. the code before a change, ``git archive <rev> a2a_lab | tar -x -C DIR``),
so "today" and "now" are measured side by side.

Run from the repository root::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_load.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_load.py --events 100000 --repeat 1
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_load.py --baseline /tmp/base

Goals: ``al.load`` ≤ 2 × B21 (clean), ≤ 2.5 × B21 (0.1 % malformed lines); ``write_events``
≥ 10 × faster than before, peak RSS ≤ 2 × the written size.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import B21, ROOT, bench_log, fresh_process, machine, parser, save

STEPS = {
    "B21": B21,
    "load": "import a2a_lab as al\nres = al.load(PATH)\nassert res.events.height > 0",
    # the whole CLI in one fresh process: load + enrich + work sessions (issue 12's pipeline goal)
    "work-sessions": (
        "import sys, io, contextlib\nfrom a2a_lab.cli import main\nbuf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf): rc = main(['work-sessions', PATH, '--limit', '1', '--now-ms', '1800000000000'])\n"
        "assert rc == 0 and buf.getvalue()"
    ),
    "write_events": (
        "import a2a_lab as al, os\nev = al.load(PATH, **KW).events\n"
        "import time; t0 = time.perf_counter()\nal.io.write_events(ev, OUT)\n"
        "print('inner_s', time.perf_counter() - t0)\nprint('written', os.path.getsize(OUT))"
    ),
}


def run_step(code: str, path: Path, pythonpath: Path, **subst: str) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of a fresh process running ``code``."""
    code = code.replace("PATH", repr(str(path)))
    for k, v in subst.items():
        code = code.replace(k, v)
    # CPU seconds of the whole process (user + system, every thread): on a shared, loaded
    # machine the wall time says more about the other jobs than about the code
    code += (
        "\nimport resource as _r\n_u = _r.getrusage(_r.RUSAGE_SELF)\n"
        "print('cpu_s', _u.ru_utime + _u.ru_stime)\n"
    )
    # PYTHONSAFEPATH: `python -c` would put the working directory (this checkout) first on
    # sys.path, ahead of PYTHONPATH, and every tree would be this one
    env = {"PYTHONPATH": str(pythonpath), "PYTHONSAFEPATH": "1", "CI": "1"}
    wall_s, rss_mb, stdout = fresh_process(code, env)
    out = {"wall_s": wall_s, "rss_mb": rss_mb}
    for line in stdout.splitlines():
        key, _, value = line.partition(" ")
        out[key] = float(value)
    return out


def median_of(results: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in results), 3) for k in results[0]}


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--bad-fraction", type=float, default=0.001)
    ap.add_argument(
        "--baseline", type=Path, help="another copy of the package to measure in the same run"
    )
    ap.add_argument(
        "--skip-baseline-write", action="store_true", help="do not run the (slow) old write_events"
    )
    ap.add_argument(
        "--steps",
        default="load,work-sessions,write_events",
        help="comma-separated steps besides B21 (load, work-sessions, write_events)",
    )
    args = ap.parse_args()
    steps = {s.strip() for s in args.steps.split(",") if s.strip()}
    unknown = steps - {"load", "work-sessions", "write_events"}
    if unknown:
        ap.error(f"--steps: unknown step(s) {', '.join(sorted(unknown))}")

    clean = bench_log(args.events)
    bad = bench_log(args.events, args.bad_fraction)
    out_file = ROOT / "benchmarks" / "_data" / "written.ndjson"
    trees = {"now": ROOT}
    if args.baseline:
        trees["before"] = args.baseline.resolve()
    results: dict[str, dict[str, float]] = {}
    for _ in range(args.repeat):
        runs = [("B21", "B21", clean, ROOT, {})]
        for label, tree in trees.items():
            if "load" in steps:
                runs.append((f"load {label}", "load", clean, tree, {}))
                runs.append((f"load 0.1% bad {label}", "load", bad, tree, {}))
            if "work-sessions" in steps:
                runs.append((f"work-sessions CLI {label}", "work-sessions", clean, tree, {}))
            kw = "raw=True" if label == "now" else ""
            if "write_events" not in steps:
                continue
            if label == "now" or not args.skip_baseline_write:
                runs.append(
                    (
                        f"write_events {label}",
                        "write_events",
                        clean,
                        tree,
                        {"OUT": repr(str(out_file)), "KW": "dict(" + kw + ")"},
                    )
                )
            if label == "now":
                runs.append(
                    (
                        "write_events now (no raw)",
                        "write_events",
                        clean,
                        tree,
                        {"OUT": repr(str(out_file)), "KW": "dict()"},
                    )
                )
        for name, step, path, tree, subst in runs:
            results.setdefault(name, []).append(run_step(STEPS[step], path, tree, **subst))  # type: ignore[arg-type]
            print(name, results[name][-1], flush=True)
    out_file.unlink(missing_ok=True)
    med = {k: median_of(v) for k, v in results.items()}
    b21 = med["B21"]["wall_s"]
    b21_cpu = med["B21"]["cpu_s"]
    result = {
        "benchmark": "load",
        "command": " ".join(["benchmarks/bench_load.py", *sys.argv[1:]]),
        "machine": machine(),
        "events": args.events,
        "file_mb": round(clean.stat().st_size / 1e6, 1),
        "median": med,
        "all": results,
    }
    out = save("load", result)
    print("| step (fresh process) | wall s (median) | × B21 | CPU s | CPU × B21 | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for k, v in med.items():
        print(
            f"| {k} | {v['wall_s']:.2f} | {v['wall_s'] / b21:.2f} | {v['cpu_s']:.2f} "
            f"| {v['cpu_s'] / b21_cpu:.2f} | {v['rss_mb']:.0f} |"
        )
    print(json.dumps({k: v for k, v in med.items() if "inner_s" in v}))
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
