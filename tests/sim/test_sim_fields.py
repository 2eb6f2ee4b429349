"""The simulator writes exactly the reference's field set per event type (issue 11 item 1).

Log analyses must not lean on a field a real log lacks, so the simulated log carries the
fields ``runSessionsSendA2AFlow`` writes and no more (runtime §2): notably ``runId`` only on
``a2a.send`` and ``a2a.retry``, never on ``a2a.response`` / ``a2a.complete`` of the
``sessions_send`` path. The sets below are pinned per event type and variant (tasks on,
every policy on), from the written JSON lines.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from a2a_lab.io import write_events
from a2a_lab.sim import SimConfig, simulate
from a2a_lab.sim.experiments.sweep import scale_arrivals
from tests.support.sim_cases import every_policy, reference_retry

SHARED = {"conversationId", "taskId", "workSessionId", "depth"}
SIDES = {"fromAgent", "toAgent"}
SESSION_TYPES = {"eventRole", "fromSessionType", "toSessionType"}
WAIT = {"waitStatus", "waitError"}

#: variant → the data keys it carries (``depth`` only with relay depths, ``waitError`` only
#: when the wait met an error: the writer omits null fields).
EXPECTED = {
    "a2a.send": SHARED
    | SIDES
    | SESSION_TYPES
    | {"message", "runId", "targetSessionKey", "payloadType", "payloadJson"},
    "a2a.retry": SHARED
    | SIDES
    | {
        "runId",
        "attempt",
        "maxAttempts",
        "errorCategory",
        "errorCode",
        "reason",
        "backoffMs",
        "elapsedMs",
    },
    "a2a.response/reply": SHARED | SIDES | SESSION_TYPES | {"message", "replyPreview"},
    "a2a.response/turn": SHARED
    | SIDES
    | SESSION_TYPES
    | {"message", "replyPreview", "turn", "maxTurns", "messageIntent", "terminationReason"},
    "a2a.response/no_reply": SHARED
    | SIDES
    | SESSION_TYPES
    | WAIT
    | {"message", "replyPreview", "outcome"},
    "a2a.response/concurrency_blocked": SHARED | SIDES | {"message", "replyPreview", "outcome"},
    # a send a safety limit stopped, with blocked_as="logged" (the reference drops it; this
    # opt-in rendering is the simulator's own and names the limit in `reason`)
    "a2a.response/guard_blocked": SHARED | SIDES | {"message", "replyPreview", "outcome", "reason"},
    "a2a.complete/replied": SHARED
    | SIDES
    | SESSION_TYPES
    | {
        "announced",
        "targetSessionKey",
        "messageIntent",
        "configuredMaxTurns",
        "effectiveTurns",
        "actualTurns",
        "earlyTermination",
        "terminationReason",
        "announceSkipped",
    },
    "a2a.complete/no_reply": SHARED
    | SIDES
    | SESSION_TYPES
    | WAIT
    | {"announced", "targetSessionKey"},
    "a2a.complete/concurrency_blocked": SHARED
    | SIDES
    | {"announced", "targetSessionKey", "concurrencyBlocked"},
    "a2a.complete/guard_blocked": SHARED
    | SIDES
    | SESSION_TYPES
    | {"announced", "targetSessionKey"},
    "task.started": {"taskId", "workSessionId"},
    "task.completed": {"taskId", "workSessionId"},
}

CONFIGS = {
    "default": (SimConfig(n_messages=600), 777),
    # three times the load: the concurrency gate refuses flows (the lanes spread the load,
    # so the default load rarely reaches the gate)
    "busy": (scale_arrivals(SimConfig(n_messages=600), 3.0), 5),
    "policies": (every_policy(800), 11),
    "reference_retry": (reference_retry(600), 3),
}


def _variant(event: dict) -> str:
    kind, data = event["type"], event["data"]
    if kind == "a2a.response":
        if "turn" in data:
            return f"{kind}/turn"
        if data.get("outcome") == "no_reply":
            return f"{kind}/no_reply"
        if data.get("outcome") == "blocked":
            return f"{kind}/guard_blocked" if "reason" in data else f"{kind}/concurrency_blocked"
        return f"{kind}/reply"
    if kind == "a2a.complete":
        if data.get("concurrencyBlocked"):
            return f"{kind}/concurrency_blocked"
        if "actualTurns" in data:
            return f"{kind}/replied"
        return f"{kind}/no_reply" if "waitStatus" in data else f"{kind}/guard_blocked"
    return kind


@pytest.fixture(scope="module")
def keys_by_variant() -> dict[str, dict[str, set[str]]]:
    out: dict[str, dict[str, set[str]]] = {}
    for name, (cfg, seed) in CONFIGS.items():
        seen: dict[str, set[str]] = defaultdict(set)
        text = write_events(simulate(cfg, seed=seed).events)
        assert text is not None
        for line in text.splitlines():
            event = json.loads(line)
            assert set(event) == {"type", "agentId", "ts", "data"}
            seen[_variant(event)] |= set(event["data"])
        out[name] = dict(seen)
    return out


def test_every_variant_is_met(keys_by_variant: dict[str, dict[str, set[str]]]) -> None:
    met = set().union(*(set(v) for v in keys_by_variant.values()))
    assert met == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_each_event_type_carries_exactly_the_pinned_fields(
    name: str, keys_by_variant: dict[str, dict[str, set[str]]]
) -> None:
    for variant, keys in keys_by_variant[name].items():
        expected = EXPECTED[variant]
        optional = {"depth", "waitError"}  # present only when set (relays; an error met)
        assert keys <= expected, (variant, keys - expected)
        assert expected - optional <= keys, (variant, expected - keys)


def test_run_id_only_on_send_and_retry(keys_by_variant: dict[str, dict[str, set[str]]]) -> None:
    carriers = {
        v.split("/")[0]
        for found in keys_by_variant.values()
        for v, keys in found.items()
        if "runId" in keys
    }
    assert carriers == {"a2a.send", "a2a.retry"}
