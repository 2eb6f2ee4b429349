"""Issue 22's exchange goals on the reference's traffic shape, judged by the held-out model
(:mod:`tests.reference_model`, written without reading a2a_lab's simulator or matcher).

1x and 3x load, three seeds each, about 1,000 sends per run (both directions under one
conversation id, overlapping flows, synchronous sends, retried waits): 0 wrong outcomes, 0
wrong first replies, at most 0.5 % wrong completes and none among rows not flagged
ambiguous, 0 causality violations, at most 5 % flagged ambiguous, 0 false ``check``
findings (event_after_complete, turns_out_of_order, missing_complete). The same traffic in
the older line shape keeps the goals that do not depend on what the log records.

Measured with ``exchange_score.measure((1.0, 3.0), (1, 2, 3))`` (1x / 3x, about 3,000
exchanges each): 0 / 0 wrong outcomes, 0 / 0 wrong first replies, 0.20 % / 0.13 % wrong
completes with 0 / 0 unflagged, 0 / 0 causality violations, 3.3 % / 2.8 % ambiguous, 0 / 0
false findings. In the older line shape (``line_shape="minimal"``): 0 / 0 wrong outcomes,
0 / 0 wrong first replies, 1.7 % / 1.2 % wrong completes with 0 / 0 unflagged, 0 / 0
causality violations, 8.5 % / 7.6 % ambiguous, 0 / 0 false findings. (Measured again after
the retried-flow rule and the keyed causality-only fallback: the same counts, e.g. 6 / 4 wrong
completes, 99 / 84 ambiguous of 3,018 / 2,984.)
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


@pytest.mark.slow
@pytest.mark.parametrize("metric,bound,kind", GOALS, ids=[g[0] for g in GOALS])
def test_goal(metric: str, bound: float, kind: str) -> None:
    _check("full", metric, bound, kind)


@pytest.mark.slow
@pytest.mark.parametrize(
    "metric,bound,kind", SHAPE_FREE_GOALS, ids=[g[0] for g in SHAPE_FREE_GOALS]
)
def test_goal_on_the_older_line_shape(metric: str, bound: float, kind: str) -> None:
    """The same traffic written in the older shape of the ``alternating-directions`` case
    (completes with ``announced``/``actualTurns`` only): what the log cannot tell apart is
    flagged, never wrong silently."""
    _check("minimal", metric, bound, kind)


# ---- a case the log cannot decide (found by the oracle property, dev profile) ----------------
# A sub-agent requester sends three times within 6 s under one conversation id; the last
# exchange is still running when the log ends. The requester's third turn (and the complete
# after it) belongs to the second exchange only if both ran on ONE sub-agent session (first
# come, first served); the log does not say which session a sub-agent send came from, so the
# matcher flags both exchanges ambiguous and gives the complete to the third.
_UNDECIDED_LOAD = dict(load=1.5, n_sends=23, work_sessions=3)
_UNDECIDED_FLOWS = dict(p_extra_send=0.3, p_send_back=0.0, p_subagent_requester=0.3)
_UNDECIDED = ({**_UNDECIDED_LOAD, **_UNDECIDED_FLOWS}, 6741)


# ---- a case the log DOES decide, once wrong (found by the oracle property, dev profile) -----
# Five agents at 3x load; hana sends bada eight times within four minutes under one
# conversation id. The request (line 5) had its wait retried (line 35: socket hang up, back
# on about 1.9 s later); the escalation sent at line 36 queued behind it on bada's
# conversation lane. The reply at line 45 could only be the escalation's if the request's run
# had ended first, and then the request's resumed wait would have returned an outcome: it
# has none, so the reply is the request's, and so are the turn at line 59 and the complete
# at line 78 (messageIntent "request"). The first-outcome pairing exempted a retried
# exchange from having an outcome at all, gave the reply to the escalation, and no reading
# of the rules then placed the request's turn and complete (2 wrong outcomes, 2 wrong first
# replies, a false a2a.turns_out_of_order).
_INTENT_LOAD = dict(load=3.0, n_sends=20, work_sessions=2, p_subagent_requester=0.0)
_INTENT_FLOWS = dict(p_extra_send=0.6, p_send_back=0.5)
_INTENT_DECIDES = ({**_INTENT_LOAD, **_INTENT_FLOWS}, 247)

# ---- a case the log cannot decide within its clock slack (found by a seed sweep) -------------
# The same configuration, seed 63: eden's collaboration request (line 47) had its wait
# retried (line 71, back on 1.36 s later); two replies of one text come 48 ms and 485 ms after
# that (lines 78, 79). The first is the retried flow's (its wait returned as it resumed), the
# second the question's sent at line 48. Swapped, the retried wait would have returned 485 ms
# after resuming on a run already over: within the matcher's clock slack, so both pairings
# keep the rules; the turns (lines 93, 96) follow either. The matcher gives the earlier reply
# to the question (the least squared lags) and flags both exchanges (main does the same).
_WITHIN_SLACK = ({**_INTENT_LOAD, **_INTENT_FLOWS}, 63)


def _undecided_score(case: tuple[dict[str, float], int] | None = None) -> dict[str, object]:
    import tempfile
    from pathlib import Path

    from tests.support.exchange_score import score_lines
    from tests.support.reference_model import ModelConfig, simulate

    cfg, seed = case or _UNDECIDED
    run = simulate(ModelConfig(**cfg), seed=seed)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.ndjson"
        run.write(path)
        return score_lines(path, run.truth)


def test_undecided_exchanges_are_flagged() -> None:
    import polars as pl

    s = _undecided_score()
    rows = s["rows"]
    assert isinstance(rows, pl.DataFrame)
    wrong = rows.filter(pl.col("wrong_outcome") | pl.col("wrong_complete"))
    assert wrong.height > 0  # the case still shows the gap the xfail below records
    # every row the matcher got wrong says the log cannot decide it
    assert wrong["p_ambiguous"].fill_null(False).all()
    assert s["wrong_complete_unflagged"] == s["causality"] == s["wrong_first_reply"] == 0
    # and check's missing_complete names every exchange it cannot tell apart, not a wrong one
    assert s["false_findings"] == 0


@pytest.mark.xfail(
    strict=True,
    reason="the log cannot decide: with sub-agent requesters it does not record whether two "
    "sends came from one session, so a flagged complete can flip two outcomes",
)
def test_undecided_exchanges_outcomes_exact() -> None:
    s = _undecided_score()
    assert s["wrong_outcome"] == 0


def test_intent_decided_case_exact() -> None:
    import polars as pl

    s = _undecided_score(_INTENT_DECIDES)
    assert s["wrong_outcome"] == s["wrong_first_reply"] == s["false_findings"] == 0
    assert s["wrong_complete"] == s["wrong_turns"] == s["causality"] == 0
    rows = s["rows"]
    assert isinstance(rows, pl.DataFrame)
    # the log decides the direction: none of hana -> bada's exchanges is flagged
    hana_bada = rows.filter(
        pl.col("conversation_id").str.starts_with("0681bc52")
        & (pl.col("requester") == "hana")
        & (pl.col("target") == "bada")
    )
    assert hana_bada.height == 8
    assert not hana_bada["p_ambiguous"].fill_null(False).any()


def test_replies_within_the_clock_slack_are_flagged() -> None:
    import polars as pl

    s = _undecided_score(_WITHIN_SLACK)
    rows = s["rows"]
    assert isinstance(rows, pl.DataFrame)
    wrong = rows.filter(pl.col("wrong_first_reply"))
    assert wrong["send_line"].sort().to_list() == [47, 48]  # the gap the xfail below records
    assert wrong["p_ambiguous"].fill_null(False).all()
    assert s["wrong_outcome"] == s["wrong_complete"] == s["wrong_turns"] == 0
    assert s["causality"] == s["false_findings"] == 0


@pytest.mark.xfail(
    strict=True,
    reason="the log cannot decide: two replies of one text within the clock slack of a "
    "retried wait's resumption fit either exchange",
)
def test_replies_within_the_clock_slack_exact() -> None:
    s = _undecided_score(_WITHIN_SLACK)
    assert s["wrong_first_reply"] == 0


# ---- more of the seed-247 kind (a sweep of seeds 0-99 of the same configuration) ----------
# main (99a0b0a) had wrong outcomes or first replies on these 11 seeds (a later exchange
# took the reply of a retried flow whose wait was back on); seed 63 is the undecided case
# above. Exact since the retried-flow rule.
_SWEPT_SEEDS = (3, 9, 15, 29, 50, 54, 55, 62, 87, 89, 92)


@pytest.mark.slow
@pytest.mark.parametrize("seed", _SWEPT_SEEDS)
def test_retried_flows_of_the_sweep_exact(seed: int) -> None:
    s = _undecided_score(({**_INTENT_LOAD, **_INTENT_FLOWS}, seed))
    assert s["wrong_outcome"] == s["wrong_first_reply"] == s["false_findings"] == 0
    assert s["wrong_complete_unflagged"] == s["causality"] == s["unmatched"] == 0
