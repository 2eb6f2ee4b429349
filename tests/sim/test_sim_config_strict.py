"""Strict simulator configuration (issue 14 item 7): every invalid config fails at construction.

A matrix of invalid configurations, each refused with a :class:`pydantic.ValidationError`
that names the offending field by its path: strict types (no ``"0.5"``, ``true`` or
``"10"`` for a number, no ``1.5`` for an integer), finite floats, negative limits refused,
referenced agents that exist. Valid configurations (the presets, the defaults, JSON and TOML
documents) still construct.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pydantic
import pytest

from a2a_lab.sim import SimConfig, presets

INF, NAN = math.inf, math.nan


def _nest(path: str, value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for ``"a.b"``."""
    head, _, rest = path.partition(".")
    return {head: _nest(rest, value) if rest else value}


#: float fields: path where the value goes, the path pydantic reports, whether 0 is allowed
FLOATS = [
    ("duration_s", "duration_s"),
    ("channel_share", "channel_share"),
    ("gate.queue_timeout_s", "gate.queue_timeout_s"),
    ("wait.chunk_s", "wait.chunk_s"),
    ("wait.max_wait_s", "wait.max_wait_s"),
    ("ping_pong.turn_timeout_s", "ping_pong.turn_timeout_s"),
    ("ping_pong.endings.conclusion", "ping_pong.endings.conclusion"),
    ("announce.internal_share", "announce.internal_share"),
    ("announce.skip_probability", "announce.skip_probability"),
    ("announce.timeout_s", "announce.timeout_s"),
    ("tasks.mean_duration_s", "tasks.mean_duration_s"),
    ("tasks.duration_cv", "tasks.duration_cv"),
    ("tasks.mean_gap_s", "tasks.mean_gap_s"),
    ("mix.payload_share", "mix.payload_share"),
    ("mix.intents.request", "mix.intents.request"),
    ("failures.llm_timeout_s", "failures.llm_timeout_s"),
    ("failures.retry_after_s", "failures.retry_after_s"),
    ("failures.rates.server_overload", "failures.rates.server_overload"),
    ("loop_guard.window_s", "loop_guard.window_s"),
    ("collaborate_limit.window_s", "collaborate_limit.window_s"),
    ("rate_limit.message_window_s", "rate_limit.message_window_s"),
    ("rate_limit.thread_window_s", "rate_limit.thread_window_s"),
    ("rate_limit.thread_reuse_s", "rate_limit.thread_reuse_s"),
    ("idempotency.ttl_s", "idempotency.ttl_s"),
    ("sync.timeout_s", "sync.timeout_s"),
    ("relays.continue_probability", "relays.continue_probability"),
]
INTS = [
    "n_messages",
    "queue_capacity",
    "gate.max_concurrent_flows",
    "ping_pong.max_turns",
    "loop_guard.max_messages_per_window",
    "loop_guard.max_depth",
    "collaborate_limit.max_calls",
    "rate_limit.messages_per_window",
    "rate_limit.threads_per_window",
]
BOOLS = ["gate.corrected_release", "loop_guard.count_turns", "sync.emit_on_timeout"]

CASES: list[tuple[str, dict[str, Any], str]] = []
for where, reported in FLOATS:
    for label, bad in (
        ("inf", INF),
        ("nan", NAN),
        ("string", "0.5"),
        ("bool", True),
        ("negative", -1.0),
    ):
        CASES.append((f"{where}={label}", _nest(where, bad), reported))
for where in INTS:
    for label, bad in (("float", 1.5), ("string", "10"), ("bool", True), ("negative", -5)):
        CASES.append((f"{where}={label}", _nest(where, bad), where))
for where in BOOLS:
    for label, bad in (("string", "yes"), ("int", 1)):
        CASES.append((f"{where}={label}", _nest(where, bad), where))

_PAIR = {"kind": "poisson", "pairs": [{"from": "main", "to": "ruda", "rate_per_s": 0.1}]}
CASES += [
    # the cases
    (
        "trace at_s=inf",
        {"workload": {"kind": "trace", "sends": [{"at_s": INF, "from": "main", "to": "ruda"}]}},
        "workload.trace.sends.0.at_s",
    ),
    (
        "trace time_scale=inf",
        {
            "workload": {
                "kind": "trace",
                "sends": [{"at_s": 0, "from": "main", "to": "ruda"}],
                "time_scale": INF,
            }
        },
        "workload.trace.time_scale",
    ),
    (
        "trace time_scale='2'",
        {
            "workload": {
                "kind": "trace",
                "sends": [{"at_s": 0, "from": "main", "to": "ruda"}],
                "time_scale": "2",
            }
        },
        "workload.trace.time_scale",
    ),
    (
        "lognormal cv=inf",
        {"agents": [{"id": "a", "service": {"kind": "lognormal", "mean_s": 1, "cv": INF}}]},
        "agents.0.service.lognormal.cv",
    ),
    (
        "gamma mean='3'",
        {"agents": [{"id": "a", "service": {"kind": "gamma", "mean_s": "3", "cv": 1}}]},
        "agents.0.service.gamma.mean_s",
    ),
    (
        "exponential mean=nan",
        {"agents": [{"id": "a", "service": {"kind": "exponential", "mean_s": NAN}}]},
        "agents.0.service.exponential.mean_s",
    ),
    (
        "deterministic value=inf",
        {"agents": [{"id": "a", "service": {"kind": "deterministic", "value_s": INF}}]},
        "agents.0.service.deterministic.value_s",
    ),
    (
        "empirical sample=inf",
        {"agents": [{"id": "a", "service": {"kind": "empirical", "samples_s": [1.0, INF]}}]},
        "agents.0.service.empirical.samples_s.1",
    ),
    (
        "session_concurrency=true",
        {"agents": [{"id": "a", "session_concurrency": True}]},
        "agents.0.session_concurrency",
    ),
    (
        "all-inf hourly_profile",
        {"workload": {**_PAIR, "hourly_profile": [INF] * 24}},
        "workload.poisson.hourly_profile.0",
    ),
    (
        "hourly_profile of strings",
        {"workload": {**_PAIR, "hourly_profile": ["1"] * 24}},
        "workload.poisson.hourly_profile.0",
    ),
    (
        "pair rate=inf",
        {
            "workload": {
                "kind": "poisson",
                "pairs": [{"from": "main", "to": "ruda", "rate_per_s": INF}],
            }
        },
        "workload.poisson.pairs.0.rate_per_s",
    ),
    (
        "pair rate='0.1'",
        {
            "workload": {
                "kind": "poisson",
                "pairs": [{"from": "main", "to": "ruda", "rate_per_s": "0.1"}],
            }
        },
        "workload.poisson.pairs.0.rate_per_s",
    ),
    (
        "agent rate=true",
        {"workload": {"kind": "poisson", "agents": [{"agent": "main", "rate_per_s": True}]}},
        "workload.poisson.agents.0.rate_per_s",
    ),
    (
        "target weight=inf",
        {
            "workload": {
                "kind": "poisson",
                "agents": [{"agent": "main", "rate_per_s": 1, "targets": {"ruda": INF}}],
            }
        },
        "workload.poisson.agents.0.targets.ruda",
    ),
    (
        "failures for an unknown agent",
        {"failures": {"agents": {"nobody": {"rate_limit": 0.5}}}},
        "failures.agents.nobody",
    ),
    (
        "failures for an agent outside the trace",
        {
            "workload": {"kind": "trace", "sends": [{"at_s": 0, "from": "main", "to": "ruda"}]},
            "agents": [{"id": "main"}],
            "failures": {"agents": {"eden": {"rate_limit": 0.5}}},
        },
        "failures.agents.eden",
    ),
    ("loop_guard.max_depth=-5", {"loop_guard": {"max_depth": -5}}, "loop_guard.max_depth"),
    (
        "loop guard override of an unknown agent",
        {"loop_guard": {"overrides": {"main::nobody": {"window_s": 1}}}},
        "loop_guard.overrides.main::nobody",
    ),
    (
        "loop guard override key out of order",
        {"loop_guard": {"overrides": {"ruda::main": {"window_s": 1}}}},
        "loop_guard.overrides",
    ),
    (
        "loop guard override key without a pair",
        {"loop_guard": {"overrides": {"main": {"window_s": 1}}}},
        "loop_guard.overrides",
    ),
    (
        "loop guard override window=inf",
        {"loop_guard": {"overrides": {"main::ruda": {"window_s": INF}}}},
        "loop_guard.overrides.main::ruda.window_s",
    ),
    (
        "loop guard override limit=-1",
        {"loop_guard": {"overrides": {"main::ruda": {"max_messages_per_window": -1}}}},
        "loop_guard.overrides.main::ruda.max_messages_per_window",
    ),
    (
        "reference retry max_retries=1000",
        {"retry": {"kind": "reference", "max_retries": 1000}},
        "retry.reference.max_retries",
    ),
    (
        "reference retry base_ms='2000'",
        {"retry": {"kind": "reference", "base_ms": "2000"}},
        "retry.reference.base_ms",
    ),
    (
        "reference retry max_ms=1.5",
        {"retry": {"kind": "reference", "max_ms": 1.5}},
        "retry.reference.max_ms",
    ),
    (
        "exponential retry base_s=inf",
        {"retry": {"kind": "exponential", "base_s": INF}},
        "retry.exponential.base_s",
    ),
    (
        "exponential retry max_retries='2'",
        {"retry": {"kind": "exponential", "max_retries": "2"}},
        "retry.exponential.max_retries",
    ),
    (
        "exponential retry attempt_timeout=inf",
        {"retry": {"kind": "exponential", "attempt_timeout_s": INF}},
        "retry.exponential.attempt_timeout_s",
    ),
    (
        "exponential retry unknown code",
        {"retry": {"kind": "exponential", "retry_codes": ["server_overlaod"]}},
        "retry.exponential.retry_codes",
    ),
    (
        "retry budget ratio=inf",
        {"retry": {"kind": "exponential", "budget": {"ratio": INF}}},
        "retry.exponential.budget.ratio",
    ),
    (
        "retry budget min_retries=-1",
        {"retry": {"kind": "exponential", "budget": {"min_retries": -1}}},
        "retry.exponential.budget.min_retries",
    ),
    (
        "collaboration retry delay=inf",
        {"retry": {"kind": "collaboration", "delays_s": [1.0, INF]}},
        "retry.collaboration.delays_s.1",
    ),
    (
        "collaboration retry delay='1'",
        {"retry": {"kind": "collaboration", "delays_s": ["1"]}},
        "retry.collaboration.delays_s.0",
    ),
    (
        "collaboration retry unknown code",
        {"retry": {"kind": "collaboration", "retry_codes": ["404"]}},
        "retry.collaboration.retry_codes",
    ),
    (
        "suggested turns=1.5",
        {"mix": {"suggested_turns": {"request": 1.5}}},
        "mix.suggested_turns.request",
    ),
    (
        "payload weight='1'",
        {"mix": {"payload_types": {"question": "1"}}},
        "mix.payload_types.question",
    ),
    ("start naive", {"start": "2026-03-02T09:00:00"}, "start"),
    ("start not a date", {"start": "next monday"}, "start"),
    ("start as epoch", {"start": 1_700_000_000}, "start"),
    ("channels of numbers", {"channels": [1187423365011234816]}, "channels.0"),
    ("target_session unknown", {"target_session": "thread"}, "target_session"),
]


def test_the_matrix_holds_at_least_100_invalid_configs() -> None:
    assert len(CASES) >= 100
    assert len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(("data", "where"), [pytest.param(d, w, id=n) for n, d, w in CASES])
def test_an_invalid_config_is_refused_naming_the_field(data: dict[str, Any], where: str) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        SimConfig.model_validate(data)
    located = [".".join(str(p) for p in e["loc"]) for e in info.value.errors()]
    messages = [e["msg"] for e in info.value.errors()]
    assert any(
        where == loc or loc.startswith(where + ".") or where in msg
        for loc, msg in zip(located, messages, strict=True)
    ), (
        located,
        messages,
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"wait": {"max_wait_s": Infinity}}', "wait.max_wait_s"),
        ('{"n_messages": "10"}', "n_messages"),
        ('{"gate": {"max_concurrent_flows": true}}', "gate.max_concurrent_flows"),
        ('{"mix": {"payload_share": "0.5"}}', "mix.payload_share"),
        ('{"loop_guard": {"max_depth": -5}}', "loop_guard.max_depth"),
    ],
)
def test_a_json_document_is_as_strict(text: str, where: str) -> None:
    with pytest.raises(pydantic.ValidationError, match="(?m)^" + re.escape(where) + "$"):
        SimConfig.from_json(text)


def test_a_toml_document_is_as_strict() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"(?m)^duration_s$"):
        SimConfig.from_toml('duration_s = "3600"')
    with pytest.raises(pydantic.ValidationError, match=r"(?m)^wait\.chunk_s$"):
        SimConfig.from_toml("wait = {chunk_s = inf}")


def test_valid_configs_still_construct() -> None:
    for cfg in (
        SimConfig(),
        presets.mm1(0.8, 1.0, n_messages=10),
        presets.mmc(2.4, 1.0, 3, n_messages=10),
        presets.md1(0.5, 1.0, n_messages=10),
        presets.mg1_lognormal(0.5, 1.0, 2.0, n_messages=10),
    ):
        assert SimConfig.from_json(cfg.to_json()) == cfg
        assert (
            SimConfig.model_validate(json.loads(cfg.to_json())) == cfg
        )  # Python input of the JSON form
    # an integer is a valid float; TOML arrays fill tuples; ISO strings fill datetimes
    cfg = SimConfig.from_toml(
        """
duration_s = 3600
n_messages = false
start = 2026-03-02T09:00:00+09:00
retry = {kind = "collaboration", delays_s = [1, 2.5], retry_codes = ["rate_limit"]}
loop_guard = {overrides = {"main::ruda" = {window_s = 5}}}
failures = {agents = {eden = {rate_limit = 0.1}}}
"""
    )
    assert cfg.duration_s == 3600.0 and cfg.retry is not None
    assert cfg.retry.delays_s == (1.0, 2.5)  # type: ignore[union-attr]
    assert SimConfig(start="2026-03-02T09:00:00+09:00").start == cfg.start  # type: ignore[arg-type]
