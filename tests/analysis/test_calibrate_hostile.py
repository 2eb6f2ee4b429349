"""Calibration on hostile logs (issue 27): no fit allocates in proportion to a timestamp."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis.calibrate import FitWarning, fit_log
from a2a_lab.analysis.calibrate._window import core_window
from a2a_lab.time import MAX_GRID_HOURS, hour_exposure

HOSTILE = Path("/work/shared/conformance/hostile")
FAR_FIT = HOSTILE / "far-future-fit.ndjson"
#: The address-space cap of issue 27's goal.
CAP_BYTES = 2 << 30


@pytest.mark.slow
@pytest.mark.skipif(not FAR_FIT.exists(), reason="the shared hostile corpus is not here")
def test_far_future_fit_runs_under_a_2_gb_cap_and_leaves_the_far_send_out() -> None:
    """``fit_log`` and ``calibrate`` on the sample's first lines plus ONE send at ts 8.64e15
    (the year 275760) under a 2 GB address-space cap: no error, the far send left out of
    the fit with a warning, and the span is the sample's, not 273,000 years."""
    script = textwrap.dedent(
        f"""
        import json, resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, ({CAP_BYTES}, {CAP_BYTES}))
        import a2a_lab as al
        from a2a_lab.analysis.calibrate import FitWarning, fit_log
        events = al.load({str(FAR_FIT)!r}).events
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cal = al.fit_log(events)
            twin = fit_log(events).config
        print(json.dumps({{
            "span_s": cal.span_s,
            "end_year": cal.end.year,
            "warnings": list(cal.warnings),
            "caught": [str(w.message) for w in caught if issubclass(w.category, FitWarning)],
            "duration_s": twin.duration_s,
            "far_in_fit": int(cal.exchanges["run_id"].eq("r-far").sum()),
        }}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(al.__file__).parent.parent)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["end_year"] == 2026 and 0 < out["span_s"] < 86_400.0
    assert out["duration_s"] == pytest.approx(out["span_s"])
    assert out["far_in_fit"] == 0
    assert len(out["warnings"]) == 1 and "1 event(s)" in out["warnings"][0]
    assert out["caught"].count(out["warnings"][0]) == 2  # fit_log and calibrate both warn


def test_core_window_keeps_a_dense_log_whole_and_cuts_isolated_far_times() -> None:
    day = 86_400_000.0
    t0 = 1.77e12
    dense = pl.Series([t0 + k * 200 * day for k in range(40)])  # 22 years, gaps of 200 days
    assert core_window(dense) == (t0, t0 + 39 * 200 * day, 0)
    hostile = pl.Series([1.0, t0, t0 + 5.0, t0 + 9.0, 8.64e15, 8.64e15])
    assert core_window(hostile) == (t0, t0 + 9.0, 3)


def test_hour_exposure_is_bounded_and_sums_to_the_span() -> None:
    hour = 3_600_000.0
    for span_h in (0.5, 25.0, MAX_GRID_HOURS - 1.0, MAX_GRID_HOURS + 1.0, 2.4e9):
        e = hour_exposure(1.77e12, 1.77e12 + span_h * hour, "Asia/Seoul")
        assert e.shape == (24,) and e.sum() == pytest.approx(span_h)
    # a day in Seoul (UTC+9): the UTC day 0-24 h covers each local hour once
    assert np.allclose(hour_exposure(0.0, 24 * hour, "Asia/Seoul"), 1.0)


@pytest.mark.slow
def test_fit_log_warns_with_the_far_events_counted() -> None:
    sample = al.load(al.samples.sample_dir()).events
    far = (
        sample.filter(pl.col("type") == "a2a.send")
        .head(2)
        .with_columns(
            pl.lit(8.64e15).alias("event_ms"),
        )
    )
    with pytest.warns(FitWarning, match="2 event"):
        cal = fit_log(pl.concat([sample, far], how="vertical_relaxed"))
    assert cal.span_s == pytest.approx(fit_log(sample).span_s)
