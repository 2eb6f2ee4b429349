"""Where the suite's files are, for tests in any folder of ``tests/``."""

from __future__ import annotations

from pathlib import Path

#: ``tests/``
TESTS = Path(__file__).resolve().parents[1]
#: the repository's root (``pyproject.toml``, ``notebooks/``, ``data/samples/``)
ROOT = TESTS.parent
#: ``tests/data/``: conformance cases and fixtures
DATA = TESTS / "data"
#: the workplace's shared conformance cases, beside the repository
SHARED = ROOT.parent / "shared"
