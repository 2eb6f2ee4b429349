"""The per-agent concurrency gate, driven with explicit (fake) time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import a2a_lab.reference.runtime.concurrency as concurrency_module
from a2a_lab.reference.runtime.concurrency import (
    DEFAULT_CONCURRENCY,
    ConcurrencyConfig,
    ConcurrencyError,
    ConcurrencyGate,
)
from tests.support.runtime_cases import every_case

CASES = every_case("a2a-concurrency", 14, label=lambda c: f"{c['describe']}: {c['name']}")


def _check_counts(gate: ConcurrencyGate, expected: dict[str, Any]) -> None:
    for agent, count in expected.get("activeCount", {}).items():
        assert gate.active_count(agent) == count
    for agent, count in expected.get("queuedCount", {}).items():
        assert gate.queued_count(agent) == count


_ERROR_FIELDS = {
    "agentId": "agent_id",
    "flowId": "flow_id",
    "queueTimeoutMs": "queue_timeout_ms",
    "activeCount": "active_count",
}


def _check_error(error: ConcurrencyError, fields: dict[str, Any]) -> None:
    for key, value in fields.items():
        if key == "name":
            assert value == "A2AConcurrencyError"  # the reference's class for ConcurrencyError
        elif key == "message":
            assert str(error) == value
        else:
            assert getattr(error, _ERROR_FIELDS[key]) == value


def _run(case: dict[str, Any]) -> None:
    """Replay a case's steps; time advances only through the steps' ``t`` (a fake clock).

    The reference's module-level singleton (reset / init / get) has no counterpart, as
    a2a_lab keeps no global state: ``initA2AConcurrencyGate(config)`` is building a gate from
    the partial config (merged over the defaults), and ``getA2AConcurrencyGate()`` returning
    null before that is the module holding no gate at all.
    """
    given_ = case["input"]
    gate = ConcurrencyGate(ConcurrencyConfig.model_validate(given_.get("config") or {}))
    initialised = False
    woken: dict[str, str] = {}  # flow id -> agent id, woken by a release
    refused: dict[str, ConcurrencyError] = {}
    granted_after_wait: list[str] = []
    for step in given_["steps"]:
        for error in gate.expire(step.get("t", 0)):  # the queue timers that are due by now
            refused[error.flow_id] = error
        op = step["op"]
        if op == "resetA2AConcurrencyGate":
            initialised = False
        elif op == "getA2AConcurrencyGate":
            assert not any(
                isinstance(v, ConcurrencyGate) for v in vars(concurrency_module).values()
            )
        elif op == "initA2AConcurrencyGate":
            gate = ConcurrencyGate(ConcurrencyConfig.model_validate(step["config"] or {}))
            initialised = True
        elif op == "acquire":
            status = gate.acquire(step["agentId"], step["flowId"], step["t"])
            assert status == {"granted": "granted", "pending": "queued"}[step["expect"]]
        elif op == "release":
            flow = gate.release(step["agentId"])
            if flow is not None:
                woken[flow] = step["agentId"]
        elif op == "await" and step["expect"] == "resolved":
            gate.resume(woken.pop(step["flowId"]), step["flowId"])
            granted_after_wait.append(step["flowId"])
        elif op == "await":
            assert step.get("error_type", "A2AConcurrencyError") == "A2AConcurrencyError"
            _check_error(refused[step["flowId"]], step.get("error", {}))
            assert refused[step["flowId"]].at_ms == step["t"]
        else:
            assert op == "check"
            _check_counts(gate, step)
    expect, derived = case["expect"], case.get("derived", {})
    _check_counts(gate, expect.get("final", {}))
    _check_counts(gate, derived.get("final", {}))
    if "grant_order" in expect:
        assert granted_after_wait == expect["grant_order"]
    if "gate" in expect:
        assert expect["gate"] is None and not initialised
    if "gate_is_null" in expect:
        assert initialised is not expect["gate_is_null"]
    if "effective_config" in derived:
        assert gate.config == ConcurrencyConfig.model_validate(derived["effective_config"])
    for flow, outcome in expect.items():
        if flow.startswith("flow-"):  # this flow's acquire rejects
            assert flow in refused
            _check_error(refused[flow], outcome.get("error_fields", {}))
    if "error" in derived:
        (error,) = refused.values()
        _check_error(error, derived["error"])


@pytest.mark.parametrize("case", CASES)
def test_concurrency_cases(case: dict[str, Any]) -> None:
    _run(case)


def test_production_defaults() -> None:
    assert (DEFAULT_CONCURRENCY.max_concurrent_flows, DEFAULT_CONCURRENCY.queue_timeout_ms) == (
        3,
        30_000,
    )


def test_reference_release_quirk_can_exceed_the_maximum() -> None:
    gate = ConcurrencyGate(ConcurrencyConfig(max_concurrent_flows=1, queue_timeout_ms=1000))
    assert gate.acquire("eden", "f1", 0) == "granted"
    assert gate.acquire("eden", "f2", 0) == "queued"
    assert gate.release("eden") == "f2"
    # before f2's continuation runs, another flow sees the lowered count and takes the slot
    assert gate.acquire("eden", "f3", 0) == "granted"
    gate.resume("eden", "f2")
    assert gate.active_count("eden") == 2  # above the maximum of 1


def test_corrected_release_hands_the_permit_over() -> None:
    gate = ConcurrencyGate(
        ConcurrencyConfig(max_concurrent_flows=1, queue_timeout_ms=1000), corrected_release=True
    )
    gate.acquire("eden", "f1", 0)
    gate.acquire("eden", "f2", 0)
    assert gate.release("eden") == "f2"
    assert gate.active_count("eden") == 1
    assert gate.acquire("eden", "f3", 0) == "queued"
    gate.resume("eden", "f2")
    assert gate.active_count("eden") == 1


def test_timeouts_deadlines_and_misuse() -> None:
    gate = ConcurrencyGate(ConcurrencyConfig(max_concurrent_flows=1, queue_timeout_ms=30))
    gate.acquire("eden", "f1", 0)
    gate.acquire("eden", "f2", 10)
    gate.acquire("ruda", "r1", 0)
    gate.acquire("ruda", "r2", 5)
    assert gate.next_deadline_ms() == 35
    assert gate.expire(34) == []
    assert [e.flow_id for e in gate.expire(40)] == ["r2", "f2"]  # deadline order
    assert (
        gate.queued_count("eden") == gate.queued_count("ruda") == 0
        and gate.next_deadline_ms() is None
    )
    assert gate.release("eden") is None and gate.release("eden") is None
    assert gate.active_count("eden") == 0  # never negative
    with pytest.raises(ValueError, match="was not woken"):
        gate.resume("eden", "f2")


_ops = st.lists(
    st.tuples(
        st.sampled_from(["acquire", "release", "resume", "tick"]),
        st.sampled_from(["eden", "ruda"]),
        st.integers(min_value=0, max_value=20),
    ),
    max_size=60,
)


@given(ops=_ops, max_flows=st.integers(min_value=1, max_value=3))
def test_corrected_gate_never_exceeds_the_maximum(
    ops: list[tuple[str, str, int]], max_flows: int
) -> None:
    gate = ConcurrencyGate(
        ConcurrencyConfig(max_concurrent_flows=max_flows, queue_timeout_ms=15),
        corrected_release=True,
    )
    now, serial = 0, 0
    woken: list[tuple[str, str]] = []
    for op, agent, step in ops:
        now += step
        gate.expire(now)
        if op == "acquire":
            serial += 1
            gate.acquire(agent, f"f{serial}", now)
        elif op == "release":
            flow = gate.release(agent)
            if flow is not None:
                woken.append((agent, flow))
        elif op == "resume" and woken:
            gate.resume(*woken.pop(0))
        for name in ("eden", "ruda"):
            assert 0 <= gate.active_count(name) <= max_flows
            assert gate.queued_count(name) >= 0
