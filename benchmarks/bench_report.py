"""Report benchmark (issue 15): ``a2a-lab report`` time, peak memory and file size, against B21.

Every step runs in a fresh process under ``/usr/bin/time -v`` (wall time of the whole
process and peak RSS), B21 included, in the same run. B21 is the bare Polars read with the
lean 21-field schema of issue 12 (the same snippet as the loader's benchmark). The log is
``a2a_lab.samples.write_log(path, 860_000, seed=1)`` (~295 MB).

Run from the repository root::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_report.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_report.py --events 100000 --repeat 1
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_report.py --markdown 200000

``--markdown N`` instead times the package's vectorised markdown renderer against
markdown-it-py (CommonMark, raw HTML off, linkify; installed with Jupyter) on the message
texts of an N-event log, once per distinct text and once per row (issue 16 item 4).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import B21, bench_log, fresh_process, machine, parser, save

REPORT = """
import sys
from a2a_lab.cli import main
assert main(["report", PATH, "-o", OUT, "--tz", "Asia/Seoul"]) == 0
"""


def run_step(code: str, path: Path, out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of ``code`` in a fresh process."""
    wall_s, rss_mb, _ = fresh_process(f"PATH = {str(path)!r}\nOUT = {str(out)!r}\n" + code)
    return wall_s, rss_mb


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--markdown", type=int, metavar="N", help="compare the markdown renderers on an N-event log"
    )
    args = ap.parse_args()
    if args.markdown:
        return markdown(args.markdown, args.seed)

    log = bench_log(args.events, seed=args.seed)
    results: dict[str, dict[str, float | list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.html"
        for name, code in (("B21", B21), ("report", REPORT)):
            runs = [run_step(code, log, out) for _ in range(args.repeat)]
            results[name] = {
                "wall_s": round(statistics.median(r[0] for r in runs), 2),
                "wall_s_all": [round(r[0], 2) for r in runs],
                "peak_rss_mb": round(max(r[1] for r in runs), 1),
            }
            print(
                f"{name:8} {results[name]['wall_s']:8.2f} s  (runs {results[name]['wall_s_all']})  "
                f"peak RSS {results[name]['peak_rss_mb']:8.1f} MB",
                flush=True,
            )
        html_bytes = out.stat().st_size
        html = out.read_text(encoding="utf-8")
    summary = {
        "events": args.events,
        "seed": args.seed,
        "log_mb": round(log.stat().st_size / 2**20, 1),
        "report_mb": round(html_bytes / 2**20, 2),
        "charts": html.count('class="a2a-chart"'),
        "messages_shown": html.count('class="a2a-msg"'),
        "report_vs_B21": round(results["report"]["wall_s"] / results["B21"]["wall_s"], 1),  # type: ignore[operator]
        "steps": results,
        "machine": machine(),
    }
    print(
        f"log {summary['log_mb']} MB → report {summary['report_mb']} MB, {summary['charts']} charts, "
        f"{summary['messages_shown']} messages shown; report = {summary['report_vs_B21']} × B21"
    )
    print(save("report", summary))
    return 0


def markdown(n_events: int, seed: int) -> int:
    """Vectorised subset vs markdown-it-py on the same texts, in this process."""
    import importlib.util
    import time

    import polars as pl
    from markdown_it import MarkdownIt

    if importlib.util.find_spec("linkify_it") is None:
        # the vectorised renderer links bare URLs; markdown-it needs linkify-it-py for that
        raise SystemExit(
            "--markdown needs linkify-it-py (pip install linkify-it-py), not part of the lock"
        )

    import a2a_lab as al
    from a2a_lab.views.markdown import markdown_html_expr
    from a2a_lab.views.safe_html import neutralize

    data = pl.col("data").struct
    texts = (
        al.load(bench_log(n_events, seed=seed))
        .events.select(pl.coalesce(data.field("message"), data.field("replyPreview")).alias("t"))
        .drop_nulls()
    )
    md = MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True}).enable(
        "linkify"
    )
    distinct = texts["t"].unique().to_list()
    rows = texts["t"].to_list()
    times = {}
    for name, fn in (
        ("vectorised, every row", lambda: texts.select(markdown_html_expr(pl.col("t")))),
        ("markdown-it, each distinct text", lambda: [md.render(neutralize(t)) for t in distinct]),
        ("markdown-it, every row", lambda: [md.render(neutralize(t)) for t in rows]),
    ):
        t0 = time.perf_counter()
        fn()
        times[name] = round(time.perf_counter() - t0, 2)
        print(f"{name:32} {times[name]:8.2f} s", flush=True)
    print(
        save(
            "markdown",
            {
                "events": n_events,
                "seed": seed,
                "texts": len(rows),
                "distinct": len(distinct),
                "seconds": times,
                "machine": machine(),
            },
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
