"""From a log to a calibrated twin and a report with a twin section, CLI only (issue 23).

Every step is a real ``a2a-lab`` process: ``calibrate LOG -o twin.json``, ``simulate
twin.json``, ``sweep twin.json`` and ``report LOG --sim twin.json``. The log is generated at
test time (``samples.write_log``), so nothing here was written by hand.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import a2a_lab as al
from a2a_lab.sim import SimConfig
from tests.support.paths import ROOT


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("A2A_LAB_TZ", None)
    return subprocess.run(
        [sys.executable, "-m", "a2a_lab", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


@pytest.mark.slow
def test_log_to_twin_to_report(tmp_path: Path) -> None:
    log = tmp_path / "gen.ndjson"
    al.samples.write_log(log, 1200, seed=5)

    cal = _cli("calibrate", str(log), "-o", "twin.json", "--format", "csv", cwd=tmp_path)
    assert cal.returncode == 0, cal.stderr
    twin = SimConfig.model_validate_json((tmp_path / "twin.json").read_text(encoding="utf-8"))
    rows = list(csv.DictReader(io.StringIO(cal.stdout)))
    # the printed table is the fitted agents of the twin written
    assert sorted(r["agent"] for r in rows) == sorted(a.id for a in twin.agents)
    assert all(float(r["median_s"]) > 0 for r in rows)
    assert "twin.json: twin of " in cal.stderr

    sim = _cli(
        "simulate", "twin.json", "--seed", "3", "-o", "sim.ndjson", "--format", "json", cwd=tmp_path
    )
    assert sim.returncode == 0, sim.stderr
    summary = json.loads(sim.stdout)
    simulated = al.load(tmp_path / "sim.ndjson")
    assert simulated.report.rejects.height == 0
    assert summary["messages"] == (simulated.events["type"] == "a2a.send").sum() > 0

    rep = _cli("report", str(log), "--sim", "twin.json", "-o", "r.html", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "The simulator run of <code>twin.json</code> (seed 1)" in html


@pytest.mark.slow
def test_simulate_and_sweep_print_what_the_library_returns(tmp_path: Path) -> None:
    """``simulate --format json`` is ``simulate(config, seed).summary()``; ``sweep --format
    csv`` is ``sweep(...)`` for the default figures; the table shows the same means."""
    from a2a_lab.cli._sim import DEFAULT_METRICS
    from a2a_lab.sim.experiments import RunOptions
    from a2a_lab.sim.experiments.sweep import sweep

    config = SimConfig(n_messages=80)
    (tmp_path / "c.json").write_text(config.model_dump_json(), encoding="utf-8")
    done = _cli("simulate", "c.json", "--seed", "4", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(al.simulate(config, seed=4).summary()))

    grid = '{"rate_scale": [0.5, 2]}'
    argv = [
        "sweep",
        "c.json",
        "--grid",
        grid,
        "--replications",
        "3",
        "--seed",
        "2",
        "--workers",
        "1",
    ]
    out = _cli(*argv, "--format", "csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    want = sweep(
        config,
        json.loads(grid),
        RunOptions(replications=3, seed=2, workers=1),
        metrics=DEFAULT_METRICS,
    )
    got = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [float(r["p95_latency_s"]) for r in got] == pytest.approx(
        want["p95_latency_s"].to_list(), rel=1e-12
    )
    assert [float(r["p95_latency_s_low"]) for r in got] == pytest.approx(
        want["p95_latency_s_low"].to_list(), rel=1e-12
    )
    table = _cli(*argv, cwd=tmp_path)
    assert table.returncode == 0 and "95% CI" in table.stderr
    assert f"{want['utilization'][1]:.4g} [" in table.stdout


def test_calibrate_prints_the_fit_warnings_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A warning the fit raises (e.g. a saturated agent) is one ``a2a-lab: warning:`` line."""
    import warnings

    import a2a_lab.analysis.calibrate as calibrate
    from a2a_lab.cli import main

    log = tmp_path / "sim.ndjson"
    al.write_events(al.simulate(SimConfig(n_messages=60), seed=2).events, log)
    real = calibrate.fit_log

    def noisy(*args: object, **kwargs: object) -> object:
        warnings.warn("agent bada: offered load 0.97 of its lane (saturated)", stacklevel=2)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "fit_log", noisy)
    assert main(["calibrate", str(log), "-o", str(tmp_path / "t.json"), "--format", "json"]) == 0
    captured = capsys.readouterr()
    warned = [x for x in captured.err.splitlines() if x.startswith("a2a-lab: warning: ")]
    assert warned == ["a2a-lab: warning: agent bada: offered load 0.97 of its lane (saturated)"]
    rows = json.loads(captured.out)
    assert {r["agent"] for r in rows} == {
        a.id
        for a in SimConfig.model_validate_json(
            (tmp_path / "t.json").read_text(encoding="utf-8")
        ).agents
    }
