"""Every notebook is a jupytext pair in sync, stored executed, and the nbval setup holds.

``make test`` also runs each ``notebooks/*.ipynb`` under strict nbval, which compares the
stored outputs with a fresh run; the checks here make that comparison meaningful: nbval
does not compare a cell stored without an execution count, and a ``.py`` pair that drifted
from its ``.ipynb`` would be reviewed while something else is tested.
"""

from __future__ import annotations

import difflib
import re

import jupytext
import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns

from tests.support.paths import ROOT

NOTEBOOKS = ROOT / "notebooks"
SANITIZE_FILE = NOTEBOOKS / "nbval-sanitize.cfg"
STEMS = sorted(
    {p.stem for p in NOTEBOOKS.glob("*.py")} | {p.stem for p in NOTEBOOKS.glob("*.ipynb")}
)
FIX = "run `make notebooks` (or `jupytext --sync` on the pair) and commit both files"


def _body(py_text: str) -> str:
    """The py:percent text without its YAML header (which carries the jupytext version)."""
    return re.sub(r"\A# ---\n(?:#.*\n)*?# ---\n\n?", "", py_text, count=1)


@pytest.mark.parametrize("stem", STEMS)
def test_notebook_has_both_pair_members(stem: str) -> None:
    missing = [n for n in (f"{stem}.ipynb", f"{stem}.py") if not (NOTEBOOKS / n).is_file()]
    assert not missing, f"notebooks/{stem}: missing {missing}; {FIX}"


@pytest.mark.parametrize("stem", STEMS)
def test_ipynb_is_paired_with_py_percent_and_uses_python3_kernel(stem: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    assert nb.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent", FIX
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", FIX


@pytest.mark.parametrize("stem", STEMS)
def test_py_pair_matches_ipynb_cells(stem: str) -> None:
    expected = _body(jupytext.writes(jupytext.read(NOTEBOOKS / f"{stem}.ipynb"), fmt="py:percent"))
    actual = _body((NOTEBOOKS / f"{stem}.py").read_text(encoding="utf-8"))
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            f"{stem}.ipynb (as py:percent)",
            f"{stem}.py",
        )
    )
    assert not diff, f"notebooks/{stem}.py is out of sync with its .ipynb; {FIX}\n{diff}"


@pytest.mark.parametrize("stem", STEMS)
def test_every_code_cell_is_stored_executed_in_order(stem: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert counts, f"notebooks/{stem}.ipynb has no code"
    assert counts == list(range(1, len(counts) + 1)), (
        f"notebooks/{stem}.ipynb was not stored from one top-to-bottom run "
        f"(execution counts {counts}); {FIX}"
    )


@pytest.mark.parametrize("stem", STEMS)
def test_no_error_output_is_stored(stem: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    errors = [
        (i, o.get("ename"))
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors, f"notebooks/{stem}.ipynb stores errors (cell index, exception): {errors}"


def _sanitize(text: str) -> str:
    for regex, replace in get_sanitize_patterns(SANITIZE_FILE.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return text


@pytest.mark.parametrize(
    ("run_a", "run_b"),
    [
        ("<polars.LazyFrame at 0x7f3a2c1b5e90>", "<polars.LazyFrame at 0x7f00deadbeef>"),
        (
            "/tmp/ipykernel_4242/1234567.py:3: UserWarning: x",
            "/tmp/ipykernel_17/99.py:3: UserWarning: x",
        ),
        (
            "/work/main/.venv/lib/python3.11/site-packages/polars/frame.py:12: Warn",
            "/home/ann/a2a/.venv/lib/python3.11/site-packages/polars/frame.py:12: Warn",
        ),
        ("wrote /tmp/tmpab12_xyz/out.ndjson", "wrote /var/tmp/tmp9z8y7x6w/out.ndjson"),
        ("~ is /root/logs", "~ is /home/ann/logs"),
        (
            "<Client: 'tcp://127.0.0.1:38123' processes=2>",
            "<Client: 'tcp://127.0.0.1:40001' processes=2>",
        ),
        ("run 6f1c2a9e-3b4d-4e5f-8a7b-1c2d3e4f5a6b", "run 0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b"),
        (
            "CPU times: user 1.2 s, sys: 10 ms, total: 1.21 s\nWall time: 1.3 s",
            "CPU times: user 980 ms, sys: 4 ms, total: 984 ms\nWall time: 990 ms",
        ),
        (
            "4.2 ms ± 120 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)",
            "3.9 ms ± 98.1 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)",
        ),
        (
            "100%|##########| 10/10 [00:01<00:00,  9.50it/s]",
            "100%|##########| 10/10 [00:02<00:00,  4.75it/s]",
        ),
        ("2026-11-22 00:10:14,123 INFO loaded", "2026-11-23 09:01:59,987 INFO loaded"),
    ],
)
def test_sanitize_masks_what_varies_between_runs(run_a: str, run_b: str) -> None:
    assert run_a != run_b
    assert _sanitize(run_a) == _sanitize(run_b)


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-01T08:15:00.000Z",  # event times from the sample are data: compared
        "1,234 events from 15 agents",
        "../a2a_lab/samples/data/coordination-events.ndjson",
        "data-71eaeaf9cad70ff93bdad53907f72edf",
    ],
)
def test_sanitize_leaves_deterministic_output_alone(text: str) -> None:
    assert _sanitize(text) == text
