"""The runtime fixture files of tests/data/runtime/, as pytest parameters."""

from __future__ import annotations

import json
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
