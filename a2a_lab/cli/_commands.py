"""The list of sub-command modules; each adds itself with ``register(subparsers)``."""

from __future__ import annotations

from a2a_lab.cli import (
    _check,
    _conversations,
    _enrich,
    _events,
    _ingest,
    _load,
    _otlp,
    _report,
    _serve,
    _sessions,
    _sim,
)

REGISTRY = [
    _load.register,
    _enrich.register,
    _sessions.register,
    _events.register,
    _conversations.register,
    _check.register,
    _ingest.register,
    _report.register,
    _sim.register,
    _otlp.register,
    _serve.register,
]
