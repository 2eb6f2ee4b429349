"""Load benchmark (issue 2): ``a2a_lab.load`` vs the bare Polars read B, and peak memory.

Run from the repository root::

    .venv/bin/python benchmarks/bench_load.py            # 860k events (~300 MB)
    .venv/bin/python benchmarks/bench_load.py --events 100000 --repeat 1   # quick look

Goals: clean log ≤ 1.5 × B; with 0.1 % bad lines ≤ 2 × B; peak RSS ≤ 5 × file size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_EVENTS, bare_read, bench_log, machine, peak_rss_mb, save, timed  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    ap.add_argument("--bad-fraction", type=float, default=0.001)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import a2a_lab as al

    clean = bench_log(args.events)
    bad = bench_log(args.events, args.bad_fraction)
    size_mb = clean.stat().st_size / 2**20

    b, b_all, frame = timed(lambda: bare_read(clean), args.repeat)
    assert frame.height == args.events
    t_clean, clean_all, res = timed(lambda: al.load(clean), args.repeat)
    assert res.events.height == args.events and res.report.rejects.height == 0
    exact_clean = res.report.exact_lines
    t_bad, bad_all, res_bad = timed(lambda: al.load(bad), args.repeat)
    r = res_bad.report
    assert r.total_lines == r.events + r.rejects.height + r.total_blank
    exact_bad = r.exact_lines
    del res, res_bad, frame

    code = f"import a2a_lab as al; r = al.load({str(clean)!r}); assert r.events.height == {args.events}"
    rss_load = peak_rss_mb(code)
    rss_bare = peak_rss_mb(
        "import sys; sys.path.insert(0, 'benchmarks'); from _common import bare_read; "
        f"from pathlib import Path; bare_read(Path({str(clean)!r}))"
    )

    result = {
        "benchmark": "load",
        "command": " ".join(["benchmarks/bench_load.py", *sys.argv[1:]]),
        "machine": machine(),
        "events": args.events,
        "file_mb": round(size_mb, 1),
        "bad_lines": r.rejects.height + r.total_blank,
        "B_s": round(b, 3),
        "load_clean_s": round(t_clean, 3),
        "load_bad_s": round(t_bad, 3),
        "ratio_clean": round(t_clean / b, 3),
        "ratio_bad": round(t_bad / b, 3),
        "exact_path_lines_clean": exact_clean,
        "exact_path_lines_bad": exact_bad,
        "peak_rss_load_mb": round(rss_load, 1),
        "peak_rss_bare_mb": round(rss_bare, 1),
        "rss_over_file": round(rss_load / size_mb, 2),
        "all_times_s": {"B": b_all, "clean": clean_all, "bad": bad_all},
    }
    out = save("load", result)
    print(f"| events | file MB | B s | load s (× B) | load 0.1 % bad s (× B) | peak RSS MB (× file) |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.events:,} | {size_mb:.0f} | {b:.2f} | {t_clean:.2f} ({t_clean / b:.2f}) | "
        f"{t_bad:.2f} ({t_bad / b:.2f}) | {rss_load:.0f} ({rss_load / size_mb:.2f}) |"
    )
    print(f"saved {out.relative_to(Path.cwd()) if out.is_relative_to(Path.cwd()) else out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
