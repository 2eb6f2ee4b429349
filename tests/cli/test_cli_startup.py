"""``a2a-lab --help`` and ``--version`` start fast: they import no heavy library (issue 23).

A wall-clock assertion would fail on a busy machine and pass on a broken one; what makes
``--help`` slow is importing Polars, NumPy, Altair, SimPy and friends (0.85 s of imports
before the CLI went lazy, ``python -X importtime -m a2a_lab --help``), so each case runs a
fresh interpreter and asserts that none of them was imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

#: Libraries the CLI's parser must not need (each costs 0.05-0.5 s to import).
HEAVY = ("polars", "numpy", "altair", "simpy", "pydantic", "networkx", "scipy", "pyarrow")

_PROBE = f"""
import contextlib, io, json, sys
from a2a_lab.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    status = main(sys.argv[1:])
print(json.dumps({{"status": status, "out": out.getvalue(), "heavy": sorted(
    m for m in sys.modules if m.split(".")[0] in {HEAVY!r})}}))
"""


def _probe(*argv: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["simulate", "--help"],
        ["sweep", "--help"],
        ["calibrate", "--help"],
        ["work-sessions", "--help"],
        ["conversations", "--help"],
        ["check", "--help"],
    ],
)
def test_help_imports_no_heavy_library(argv: list[str]) -> None:
    got = _probe(*argv)
    assert got["status"] == 0
    assert "a2a-lab" in str(got["out"]) or "usage" in str(got["out"])
    assert got["heavy"] == [], got["heavy"]


def test_the_probe_can_fail() -> None:
    """The probe sees a heavy import when a command does one (the check is not vacuous)."""
    got = _probe("simulate", "/no/such/config.json")
    assert got["status"] == 2
    assert "pydantic" in got["heavy"]  # type: ignore[operator]


def test_package_names_resolve_lazily() -> None:
    """``import a2a_lab`` loads no Polars; the exported names load on use and ``enrich`` stays
    the function after its module is imported by another one."""
    code = (
        "import sys, types, a2a_lab as al\n"
        "assert 'polars' not in sys.modules\n"
        "import a2a_lab.sessions\n"  # imports the module a2a_lab.enrich on the way
        "assert callable(al.enrich) and not isinstance(al.enrich, types.ModuleType)\n"
        "from a2a_lab import enrich, load, schema\n"
        "assert enrich is al.enrich and isinstance(schema, types.ModuleType)\n"
        "assert al.conversations.__module__ == 'a2a_lab.analysis.conversations'\n"
        "print(sorted(set(al.__all__) - set(dir(al))))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
