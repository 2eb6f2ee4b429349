"""The list of sub-command modules; each adds itself with ``register(subparsers)``."""

from __future__ import annotations

from a2a_lab.cli import _load

REGISTRY = [
    _load.register,
]
