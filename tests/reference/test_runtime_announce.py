"""The announce decision (reference shouldRunAnnounce)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_lab.reference.runtime.announce import (
    AnnounceTarget,
    is_agent_session_key,
    should_run_announce,
)
from tests.support.paths import DATA

FIXTURE = DATA / "runtime" / "a2a-intent-classifier.test-cases.json"


def _cases(function: str) -> list[Any]:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return [pytest.param(c, id=c["name"]) for c in doc["cases"] if c["function"] == function]


@pytest.mark.parametrize("case", _cases("shouldRunAnnounce"))
def test_should_run_announce_cases(case: dict[str, Any]) -> None:
    given = case["input"]
    target = given["announceTarget"]
    result = should_run_announce(
        AnnounceTarget(**target) if target is not None else None,
        given.get("latestReply"),
        given.get("requesterSessionKey"),
        given.get("targetSessionKey"),
    )
    assert result is case["expect"]["result"]


@pytest.mark.parametrize(
    ("requester", "target", "announce"),
    [
        ("agent:ruda:main", "agent:eden:a2a:c-1", False),
        ("AGENT:ruda:SUBAGENT:x", "agent:eden:main", False),
        ("agent:ruda:main", "agent:eden:discord:group:1", True),
        ("agent:ruda:main", None, True),  # both keys are needed to call it internal
        ("agent:ruda:mainline", "agent:eden:main", False),  # the reference regex is a prefix test
        ("agent::main", "agent:eden:main", True),
    ],
)
def test_internal_exchanges_are_not_announced(
    requester: str, target: str | None, announce: bool
) -> None:
    assert (
        should_run_announce(AnnounceTarget("discord", "1"), "Done.", requester, target) is announce
    )


def test_blank_reply_uses_javascript_trim() -> None:
    target = AnnounceTarget("discord", "1")
    assert should_run_announce(target, "\ufeff\u3000") is False
    assert should_run_announce(target, "\x1c") is True  # not white space in JavaScript
    assert is_agent_session_key("agent:a:main") and not is_agent_session_key(" agent:a:main")


def test_simulated_complete_follows_the_announce_step_within_its_timeout() -> None:
    """Runtime §2 step 5 and the reference flow: the announce step is a ``runAgentStep`` on
    the target's session whose ``agent.wait`` gives up after ``announceTimeoutMs`` (30 s on
    the asynchronous path, ``timeoutSeconds`` 0), counted from the step's start (its queueing
    on the session included); ``a2a.complete`` is written once the step returns. So the
    complete comes at the step's end, or 30 s after its start when the run outlives that
    (the run goes on unseen, holding the session)."""
    import numpy as np

    from a2a_lab.analysis.calibrate._occupancy import ANNOUNCE_TIMEOUT_MS
    from a2a_lab.sim import AnnouncePolicy, SimConfig, simulate

    assert AnnouncePolicy().timeout_s * 1000.0 == ANNOUNCE_TIMEOUT_MS == 30_000.0
    res = simulate(SimConfig(n_messages=1200), seed=4)
    tr = res.trace
    ann = np.asarray(tr.job_kind) == 2  # the announce step's jobs
    msg = np.asarray(tr.job_message)[ann]
    start, end = np.asarray(tr.job_enqueue)[ann], np.asarray(tr.job_end)[ann]
    complete = res.messages.sort("message")["complete_s"].to_numpy()[msg]
    expected = np.minimum(np.nan_to_num(end, nan=np.inf), start + 30.0)
    np.testing.assert_allclose(complete, expected, rtol=0, atol=1e-6)
    timed_out = complete < np.nan_to_num(end, nan=np.inf) - 1e-6
    assert 0 < timed_out.sum() < len(msg)  # both cases occur
    # every message whose announce step ran has exactly one
    ran = res.messages.filter("announce_ran")["message"].to_numpy()
    assert sorted(msg.tolist()) == sorted(ran.tolist())
