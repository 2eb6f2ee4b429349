"""Backoff of the wait-and-retry policy (runtime §2; reference calculateBackoffMs)."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_lab.reference.runtime.retry import REFERENCE_RETRY, backoff_ms
from tests.support.paths import DATA

FIXTURE = DATA / "runtime" / "a2a-error-classification.test-cases.json"


def _cases() -> list[Any]:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    cases = [c for c in doc["cases"] if c["function"] == "calculateBackoffMs"]
    assert len(cases) == 4
    return [pytest.param(c, id=c["name"]) for c in cases]


def _options(case: dict[str, Any]) -> dict[str, float]:
    opts = case["input"].get("opts", {})
    return {"base_ms": opts.get("baseMs", 2000), "max_ms": opts.get("maxMs", 60000)}


@pytest.mark.parametrize("case", _cases())
def test_calculate_backoff_ms_cases(case: dict[str, Any]) -> None:
    opts = _options(case)
    expect = case["expect"]
    if "samples" in case["input"]:
        # the reference draws Math.random(); here: every fixed draw it lists, and a seeded run
        for fixed in case["deterministic"]:
            if "rand_for_every_call" in fixed:
                rand = fixed["rand_for_every_call"]
                assert backoff_ms(0, rand, **opts) == fixed["mean_attempt0"]
                assert backoff_ms(3, rand, **opts) == fixed["mean_attempt3"]
            else:  # worst case: attempt 0 at the top of the range, attempt 3 at the bottom
                assert backoff_ms(0, 0.9999999, **opts) == fixed["mean_attempt0"]
                assert backoff_ms(3, 0.0, **opts) == fixed["mean_attempt3"]
                assert (fixed["mean_attempt3"] > 3 * fixed["mean_attempt0"]) is fixed["holds"]
        rng = np.random.default_rng(11)
        means = {
            s["attempt"]: np.mean(
                [backoff_ms(s["attempt"], rng.random(), **opts) for _ in range(s["count"])]
            )
            for s in case["input"]["samples"]
        }
        assert (
            bool(means[3] > 3 * means[0]) is expect["mean_attempt3_greater_than_3x_mean_attempt0"]
        )
        return
    attempt = case["input"]["attempt"]
    for fixed in case["deterministic"]:
        assert backoff_ms(attempt, fixed["rand"], **opts) == fixed["expected_ms"]
    for rand in np.linspace(0.0, 1.0, 1001, endpoint=False):
        value = backoff_ms(attempt, float(rand), **opts)
        assert expect.get("min_inclusive", 0) <= value <= expect["max_inclusive"]


def test_the_top_draw_can_reach_the_cap() -> None:
    # 0.5 + 0.5 * (1 - 2**-53) rounds to 1.0 in double arithmetic, in JavaScript too
    assert backoff_ms(0, 1 - 2**-53) == 2000 and backoff_ms(0, 1 - 2**-52) == 1999


def test_reference_policy_values() -> None:
    assert (REFERENCE_RETRY.chunk_ms, REFERENCE_RETRY.max_wait_ms, REFERENCE_RETRY.max_retries) == (
        30_000,
        300_000,
        3,
    )
    assert (
        backoff_ms(1, 0.0) == 2000 and backoff_ms(5, 0.0) == 30000 and backoff_ms(6, 0.0) == 30000
    )
    assert backoff_ms(5000, 0.5) == 45000  # 2^5000 overflows a double; the cap still applies


@given(
    attempt=st.integers(min_value=0, max_value=2000),
    rand=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    base_ms=st.integers(min_value=1, max_value=10_000),
    max_ms=st.integers(min_value=1, max_value=600_000),
)
def test_backoff_stays_in_range(attempt: int, rand: float, base_ms: int, max_ms: int) -> None:
    cap = min(max_ms, base_ms * 2**attempt)
    value = backoff_ms(attempt, rand, base_ms=base_ms, max_ms=max_ms)
    assert isinstance(value, int)
    assert math.floor(cap / 2) <= value <= cap
    # jitter is monotone in the draw
    assert value <= backoff_ms(attempt, rand + (1 - rand) / 2, base_ms=base_ms, max_ms=max_ms)
