"""Issue 22's exchange goals on the reference's traffic shape, judged by the held-out model
(:mod:`tests.reference_model`, written without reading a2a_lab's simulator or matcher).

1x and 3x load, three seeds each, about 1,000 sends per run (both directions under one
conversation id, overlapping flows): 0 wrong outcomes, 0 wrong first replies, at most 0.5 %
wrong completes and none among rows not flagged ambiguous, 0 causality violations, at most
5 % flagged ambiguous, 0 false ``check`` findings (event_after_complete, turns_out_of_order,
missing_complete). The same traffic in the older line shape keeps the goals that do not
depend on what the log records.

Issue 22 is open: the matcher of this round meets none of these goals on the held-out model's
current version (measured with ``exchange_score.measure((1.0, 3.0), (1, 2, 3))``, 1x / 3x, about
3,000 exchanges each: 0 / 4 wrong outcomes, 2 / 6 wrong first replies, 0.53 % / 0.53 % wrong
completes with 0 / 2 unflagged, 0 / 1 causality violation, 7.2 % / 7.4 % ambiguous, 1 / 1 false
finding; synchronous sends and agent.wait retries are what it still gets wrong). The tests are
strict xfails: each turns into a failure the day its goal is met, so the marker must then go.
"""

from __future__ import annotations

import pytest

from tests.support.exchange_score import GOALS, SHAPE_FREE_GOALS, measure, pooled


def _check(line_shape: str, metric: str, bound: float, kind: str) -> None:
    per_load = pooled(measure(line_shape=line_shape), metric)
    over = {
        load: got
        for load, got in per_load.items()
        if (got["count"] if kind == "count" else got["share"]) > bound
    }
    assert over == {}, f"{metric} above {bound} ({kind}): {per_load}"


_OPEN = pytest.mark.xfail(
    strict=True, reason="issue 22 open: see the module docstring for the measured figures"
)


@pytest.mark.slow
@_OPEN
@pytest.mark.parametrize("metric,bound,kind", GOALS, ids=[g[0] for g in GOALS])
def test_goal(metric: str, bound: float, kind: str) -> None:
    _check("full", metric, bound, kind)


@pytest.mark.slow
@_OPEN
@pytest.mark.parametrize(
    "metric,bound,kind", SHAPE_FREE_GOALS, ids=[g[0] for g in SHAPE_FREE_GOALS]
)
def test_goal_on_the_older_line_shape(metric: str, bound: float, kind: str) -> None:
    """The same traffic written in the older shape of the ``alternating-directions`` case
    (completes with ``announced``/``actualTurns`` only): what the log cannot tell apart is
    flagged, never wrong silently."""
    _check("minimal", metric, bound, kind)
