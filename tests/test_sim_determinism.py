"""Same seed → the same simulated log, byte for byte, across refactors of the simulator.

The hashes below were taken with the code BEFORE the one-model refactor (issue 16 item 3,
commit 8c787c5): a change of the model's internals must not change a single byte of the log
a seed gives. A deliberate change of the simulated behaviour updates them AND says why in
CHANGELOG.md.
"""

from __future__ import annotations

import hashlib

import pytest

from a2a_lab.io import write_events
from a2a_lab.sim import SimConfig, presets, simulate
from a2a_lab.sim.sweep import scale_arrivals

# name → (configuration, seed, sha256 of the written log, its lines)
CASES = {
    "default": (lambda: SimConfig(n_messages=400), 777, "3ef40d4d1d8481d7b92dc64cb1d6725ee0784f5314b44140df8bfb843d8a71ca", 1863),
    "default_x3": (
        lambda: scale_arrivals(SimConfig(n_messages=400), 3.0),
        5,
        "2c29e4c376f176123b06c3345ff31066744b26f91b434fb3a6139edfd4fa8d55",
        1682,
    ),
    "mm1": (lambda: presets.mm1(0.8, 1.0, n_messages=1000), 1, "ead134e2df9fa45aff2c1fd822b85be26f4f220244a968b02084c316ae02240d", 3000),
    "policies": (
        lambda: SimConfig.model_validate(
            {
                "n_messages": 600,
                "failures": {
                    "rates": {"server_overload": 0.05, "gateway_connection": 0.03, "run_not_found": 0.01, "llm_timeout": 0.01}
                },
                "retry": {"kind": "exponential", "max_retries": 2, "budget": {"ratio": 0.1}},
                "loop_guard": {"max_messages_per_window": 2, "window_s": 600, "blocked_as": "logged"},
                "collaborate_limit": {"max_calls": 3, "window_s": 900, "blocked_as": "logged"},
                "rate_limit": {},
                "relays": {"continue_probability": 0.3},
                "queue_capacity": 4,
            }
        ),
        11,
        "365b43f9d443c84d35d20da2fbc5727db5c7a0ab4d9e77b838e4d12f8f532c8a",
        2352,
    ),
    "reference_retry": (
        lambda: SimConfig.model_validate(
            {"n_messages": 400, "failures": {"rates": {"gateway_connection": 0.2, "rate_limit": 0.05, "auth_failure": 0.02}}}
        ),
        3,
        "5cc840c5ca1e1a2d7e8a8afab2fb9c57dbecb1bd9ff81bb4368772990d5b3539",
        2038,
    ),
    "sync": (
        lambda: SimConfig.model_validate({"n_messages": 300, "sync": {"timeout_s": 20}}),
        4,
        "49c8d5d963b69f1c82244f7f765edd013a11a03ad50ea85d29873df0a69241c8",
        406,
    ),
    "sync_fixed_a2a": (
        lambda: SimConfig.model_validate(
            {"n_messages": 300, "sync": {"timeout_s": 20, "emit_on_timeout": True}, "target_session": "a2a"}
        ),
        4,
        "d8f0955db9a60a7a197431ec2779b8f5c36e025b8b01db6b4e731a0940718f76",
        1431,
    ),
    "collab_retry": (
        lambda: SimConfig.model_validate(
            {
                "n_messages": 300,
                "failures": {"rates": {"rate_limit": 0.1, "server_overload": 0.05}},
                "retry": {"kind": "collaboration", "attempt_timeout_s": 90},
                "idempotency": False,
            }
        ),
        8,
        "c0dc738a2192393872f85695c0a211804ce6b4a83cd85965fdec1fec3263714b",
        1547,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_seed_gives_the_same_log_as_before_the_refactor(name: str) -> None:
    make, seed, digest, lines = CASES[name]
    text = write_events(simulate(make(), seed=seed).events)
    assert text is not None
    assert text.count("\n") == lines
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == digest


@pytest.mark.parametrize("name", ["default", "policies", "sync"])
def test_the_full_flow_gives_the_same_log_as_the_shortcut(name: str) -> None:
    make, seed, _, _ = CASES[name]
    cfg = make()
    assert write_events(simulate(cfg, seed=seed).events) == write_events(simulate(cfg, seed=seed, full_flow=True).events)
