"""Fixtures shared by the simulator's tests."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    """Two worker processes for the replications of a statistical validation (``spawn``:
    a fork of a process holding Polars' threads can deadlock)."""
    with ProcessPoolExecutor(
        max_workers=2, mp_context=multiprocessing.get_context("spawn")
    ) as executor:
        yield executor
