"""``a2a-lab simulate``, ``a2a-lab sweep`` and ``a2a-lab calibrate`` (issue 23 item 3).

The commands only read their inputs, call the library (:func:`a2a_lab.sim.simulate`,
:func:`a2a_lab.sim.experiments.sweep.sweep`, :func:`a2a_lab.analysis.calibrate.fit_log`) and print or
write what it returns; the file ``calibrate -o`` writes is a :class:`~a2a_lab.sim.SimConfig`
as JSON, the file ``report --sim`` and ``simulate`` read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from a2a_lab.cli._common import (
    CliError,
    Commands,
    OneLineArgumentParser,
    add_command,
    add_number_option,
    add_output_file,
    add_seed_option,
    default_zone,
    int_option,
    one_line,
)
from a2a_lab.cli._format import add_format_option, print_frame

#: The summary figures ``sweep`` shows by default (every one with ``--metrics all``).
DEFAULT_METRICS = (
    "p50_latency_s",
    "p95_latency_s",
    "mean_wait_s",
    "utilization",
    "no_reply_rate",
    "blocked_rate",
)


def first_error(exc: Any) -> str:
    """``where: what`` of a pydantic ValidationError's first error (one line)."""
    first = exc.errors()[0]
    where = ".".join(map(str, first["loc"])) or "(root)"
    return f"{where}: {first['msg']}"


def read_config(path: str, option: str = "CONFIG") -> Any:
    """The :class:`~a2a_lab.sim.SimConfig` in the JSON file ``path``; a bad file is one line."""
    import pydantic

    from a2a_lab.sim import SimConfig

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"{option}: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CliError(f"{option}: {path} is not UTF-8 text") from None
    try:
        return SimConfig.model_validate_json(text)
    except pydantic.ValidationError as exc:
        raise CliError(f"{option} {path}: {first_error(exc)}") from None
    except ValueError as exc:
        raise CliError(f"{option} {path}: {exc}") from None


def add_config_argument(parser: OneLineArgumentParser, help: str) -> None:
    """``CONFIG``: the SimConfig JSON file a simulator command reads (:func:`read_config`)."""
    parser.add_argument("config", metavar="CONFIG", help=help)


def register(sub: Commands) -> None:
    """Add ``simulate``, ``sweep`` and ``calibrate`` to the CLI's commands."""
    s = add_command(
        sub,
        "simulate",
        run_simulate,
        source=False,
        help="run the simulator on a SimConfig JSON file; print its summary, write its log",
        description=(
            "Simulate the gateway described by CONFIG (a SimConfig as JSON, e.g. written by "
            "'a2a-lab calibrate') and print the run's headline figures. With -o, write the "
            "simulated coordination log: FILE.ndjson as one file, any other path as a log "
            "directory with the gateway's rotation."
        ),
        epilog="example:\n  a2a-lab simulate twin.json --seed 7 -o simulated-logs/\n"
        "  a2a-lab simulate twin.json --format json",
    )
    add_config_argument(s, "a SimConfig JSON file")
    add_output_file(
        s, "LOG", "write the simulated log: LOG.ndjson, or a directory (created; rotated files)"
    )
    add_seed_option(s, "the run's")
    add_format_option(s)

    _register_sweep(sub)

    c = add_command(
        sub,
        "calibrate",
        run_calibrate,
        help="fit the simulator to a log: write the twin's SimConfig JSON (for report --sim)",
        description=(
            "Fit the simulator's workload and agents to the log SOURCE (a digital twin) and "
            "write its SimConfig as JSON: the file 'a2a-lab report --sim' and 'a2a-lab "
            "simulate' read. Prints the fitted service time per agent; the fit's warnings "
            "(e.g. a saturated agent) go to stderr."
        ),
        epilog="example:\n  a2a-lab calibrate ~/.openclaw/logs -o twin.json --tz Asia/Seoul\n"
        "  a2a-lab report ~/.openclaw/logs --sim twin.json -o report.html",
    )
    add_output_file(c, "FILE", "the twin's SimConfig JSON to write", required=True)
    add_format_option(c)


def _register_sweep(sub: Commands) -> None:
    """Add ``sweep`` to the CLI's commands."""
    w = add_command(
        sub,
        "sweep",
        run_sweep,
        source=False,
        help="run a grid of configuration changes with replications: means and 95%% CIs",
        description=(
            "Run every point of GRID on CONFIG with the same replications (common random "
            "numbers) and print one row per point: the mean of each summary figure and its "
            "Student-t confidence interval over the replications. GRID is a JSON object "
            "{parameter: [values]} (their product) or a list of points, given inline or as a "
            "file; a parameter is a dotted path into the configuration "
            "('gate.max_concurrent_flows') or 'rate_scale'."
        ),
        epilog="example:\n"
        "  a2a-lab sweep twin.json --grid '{\"rate_scale\": [0.5, 1, 2]}' --replications 10 --seed 1\n"
        "  a2a-lab sweep twin.json --grid grid.json --metrics p95_latency_s,utilization -o sweep.csv",
    )
    add_config_argument(w, "the base SimConfig JSON file")
    w.add_argument(
        "--grid",
        required=True,
        metavar="GRID",
        help="a JSON object {parameter: [values]} or list of points, inline or a file",
    )
    replications = int_option(1, 100_000)
    add_number_option(w, "--replications", replications, 10, "replications per point", metavar="N")
    add_seed_option(w, "the experiment's")
    w.add_argument(
        "--metrics",
        metavar="M",
        help=f"comma-separated summary figures, or 'all' (default: {','.join(DEFAULT_METRICS)})",
    )
    w.add_argument(
        "--level",
        type=float,
        default=0.95,
        metavar="P",
        help="confidence level of the intervals (default 0.95)",
    )
    w.add_argument(
        "--workers",
        type=int_option(1, 1024),
        metavar="N",
        help="processes (default: one per CPU; 1 runs in this process)",
    )
    add_output_file(
        w, "FILE", "write the table (every interval bound) to FILE.csv, .parquet, .json or .ndjson"
    )
    add_format_option(w)


def _check_writable_parent(path: Path, option: str = "--output") -> None:
    if not path.parent.is_dir():
        raise CliError(f"{option}: directory {str(path.parent)!r} does not exist")


def run_simulate(args: argparse.Namespace) -> int:
    import polars as pl

    from a2a_lab.sim import simulate

    tz = args.tz or default_zone()
    out = None if args.output is None else Path(args.output)
    if out is not None:
        if out.suffix == ".ndjson":
            _check_writable_parent(out)
        elif out.exists() and not out.is_dir():
            raise CliError(f"--output: {out} is a file: give LOG.ndjson or a directory")
    config = read_config(args.config)
    result = simulate(config, seed=args.seed)
    if out is not None:
        from a2a_lab.io import write_events
        from a2a_lab.sim import write_logdir

        try:
            if out.suffix == ".ndjson":
                write_events(result.events, out)
                written = f"{out}"
            else:
                files = write_logdir(result.events, out, tz=tz)
                written = f"{len(files)} file(s) in {out}"
        except OSError as exc:
            raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
        print(f"{result.events.height:,} events written to {written}", file=sys.stderr)
    summary = result.summary()
    frame = pl.DataFrame(
        {"figure": list(summary), "value": [float(v) for v in summary.values()]},
        schema={"figure": pl.String, "value": pl.Float64},
    )
    print_frame(frame, args.format, json_rows=summary)
    return 0


def _grid(text: str) -> Any:
    """``--grid``: inline JSON, or the path of a JSON file."""
    path = Path(text)
    source = text
    if not text.lstrip().startswith(("{", "[")):
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CliError(f"--grid: cannot read {text}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise CliError(f"--grid: {text} is not UTF-8 text") from None
    try:
        grid = json.loads(source)
    except ValueError as exc:
        raise CliError(f"--grid: not JSON: {exc}") from None
    points = grid if isinstance(grid, list) else [grid]
    if not points or not all(isinstance(p, dict) and p for p in points):
        raise CliError("--grid: expected a JSON object {parameter: [values]} or a list of objects")
    if isinstance(grid, dict) and not all(isinstance(v, list) and v for v in grid.values()):
        raise CliError("--grid: each parameter needs a non-empty list of values")
    return grid


def _metrics(text: str | None) -> list[str]:
    from a2a_lab.sim.run import SUMMARY_KEYS

    if text is None:
        return list(DEFAULT_METRICS)
    if text.strip() == "all":
        return list(SUMMARY_KEYS)
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in SUMMARY_KEYS]
    if unknown or not names:
        raise CliError(
            f"--metrics: unknown {', '.join(unknown) or '(none)'}; choose from {', '.join(SUMMARY_KEYS)}"
        )
    return names


def run_sweep(args: argparse.Namespace) -> int:
    import polars as pl

    from a2a_lab._frames import text_format
    from a2a_lab.cli._common import check_output, write_output
    from a2a_lab.sim.experiments.replicate import RunOptions
    from a2a_lab.sim.experiments.sweep import apply_point, grid_points, sweep

    check_output(args.output)
    if not 0 < args.level < 1:
        raise CliError(f"--level must be in (0, 1), not {args.level!r}")
    metrics = _metrics(args.metrics)
    grid = _grid(args.grid)
    config = read_config(args.config)
    import pydantic

    try:  # every point is a valid configuration before any replication runs
        for point in grid_points(grid):
            apply_point(config, point)
    except pydantic.ValidationError as exc:
        raise CliError(f"--grid: {first_error(exc)}") from None
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise CliError(f"--grid: {' '.join(str(exc).split())}") from None
    table = sweep(
        config,
        grid,
        RunOptions(
            replications=args.replications, seed=args.seed, workers=args.workers, progress=False
        ),
        metrics=metrics,
        level=args.level,
    )
    if args.output is not None:
        write_output(table, args.output, "UTC")
        print(f"{table.height} grid points written to {args.output}", file=sys.stderr)
        return 0
    if args.format != "table":
        print_frame(table, args.format)
        return 0
    # the readable table: each figure as "mean [low, high]" in one column
    params = [
        c
        for c in table.columns
        if c not in {"point", "replications"}
        and not any(c == m or c in (f"{m}_low", f"{m}_high") for m in metrics)
    ]

    def cell(m: str) -> pl.Expr:
        def fmt(e: pl.Expr) -> pl.Expr:
            return e.round_sig_figs(4).cast(pl.String).fill_null("–")

        return text_format(
            "{} [{}, {}]", fmt(pl.col(m)), fmt(pl.col(f"{m}_low")), fmt(pl.col(f"{m}_high"))
        ).alias(m)

    shown = table.select(
        "point", *[pl.col(p).cast(pl.String) for p in params], "replications", *map(cell, metrics)
    )
    print_frame(shown, "table")
    # stdout is the table only (as every command's table): what the cells mean goes to stderr
    print(
        f"{table.height:,} grid points; each figure mean [{args.level:.0%} CI] over "
        f"{args.replications} replications, seed {args.seed}",
        file=sys.stderr,
    )
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    import warnings

    from a2a_lab.analysis.calibrate import fit_log
    from a2a_lab.cli._source import load_source

    out = Path(args.output)
    if out.suffix.lower() != ".json":
        raise CliError(f"--output: the twin is a SimConfig JSON file (FILE.json), not {out.name!r}")
    _check_writable_parent(out)
    tz = args.tz or default_zone()
    events = load_source(args.source, tz=tz).events
    if events.height == 0:
        raise CliError(f"{args.source}: no events to fit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cal = fit_log(events, tz=tz)
        except ValueError as exc:
            raise CliError(f"cannot fit {args.source}: {' '.join(str(exc).split())}") from None
    notes = list(getattr(cal, "warnings", ()))
    notes += [str(w.message) for w in caught if str(w.message) not in notes]
    try:
        out.write_text(cal.config.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    for note in notes:
        sys.stderr.write(f"a2a-lab: warning: {one_line(note)}\n")
    print(
        f"{out}: twin of {cal.exchanges.height:,} exchanges over {cal.span_s / 3600:.1f} h "
        f"({cal.spawned:,} spawns left out); simulate it with 'a2a-lab simulate {out}' or "
        f"compare it with 'a2a-lab report {args.source} --sim {out} -o report.html'",
        file=sys.stderr,
    )
    keep = [
        c
        for c in cal.service.columns
        if c
        in {
            "agent",
            "kind",
            "fit",
            "exchanges",
            "observed",
            "censored",
            "family",
            "median_s",
            "mean_s",
            "cv",
        }
        or c.endswith(("_low", "_high", "_lo", "_hi"))
    ]
    # the table: the fit and its intervals; json and csv: every column of the fit
    service = cal.service.sort("agent")
    print_frame(service.select(keep) if args.format == "table" else service, args.format)
    return 0
