"""The runtime fixture files of tests/data/runtime/, as pytest parameters."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.paths import DATA

RUNTIME_DATA = DATA / "runtime"


def load_doc(name: str) -> dict[str, Any]:
    """The whole fixture file ``<name>.test-cases.json``."""
    return json.loads((RUNTIME_DATA / f"{name}.test-cases.json").read_text(encoding="utf-8"))


def cases(name: str, function: str) -> list[Any]:
    """The cases of fixture ``name`` that test ``function``, one pytest param each (id = case name)."""
    return [
        pytest.param(c, id=c["name"] + (f" [{c['part']}]" if "part" in c else ""))
        for c in load_doc(name)["cases"]
        if c["function"] == function
    ]


def every_case(
    name: str, count: int, skipped: int = 0, label: Callable[[Any], str] = lambda c: c["name"]
) -> list[Any]:
    """Every case of fixture ``name``, one pytest param each (id: ``label(case)``); the file
    must hold exactly ``count`` cases and ``skipped`` skipped ones (a case added or dropped
    upstream fails here instead of going unnoticed)."""
    doc = load_doc(name)
    assert len(doc["cases"]) == count and len(doc["skipped"]) == skipped
    return [pytest.param(c, id=label(c)) for c in doc["cases"]]
