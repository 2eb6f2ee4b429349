"""Simulator configurations several test files run: every policy on, and the reference's retries."""

from __future__ import annotations

from a2a_lab.sim import SimConfig


def every_policy(n_messages: int) -> SimConfig:
    """Failures of four kinds, exponential retries with a budget, both guards, relays, a queue cap."""
    return SimConfig.model_validate(
        {
            "n_messages": n_messages,
            "failures": {
                "rates": {
                    "server_overload": 0.05,
                    "gateway_connection": 0.03,
                    "run_not_found": 0.01,
                    "llm_timeout": 0.01,
                }
            },
            "retry": {"kind": "exponential", "max_retries": 2, "budget": {"ratio": 0.1}},
            "loop_guard": {"max_messages_per_window": 2, "window_s": 600, "blocked_as": "logged"},
            "collaborate_limit": {"max_calls": 3, "window_s": 900, "blocked_as": "logged"},
            "rate_limit": {},
            "relays": {"continue_probability": 0.3},
            "queue_capacity": 4,
        }
    )


def reference_retry(n_messages: int) -> SimConfig:
    """The reference's own retry of transient failures (no retry policy configured)."""
    return SimConfig.model_validate(
        {
            "n_messages": n_messages,
            "failures": {
                "rates": {"gateway_connection": 0.2, "rate_limit": 0.05, "auth_failure": 0.02}
            },
        }
    )
