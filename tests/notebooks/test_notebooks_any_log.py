"""Every notebook runs on logs other than the bundled sample (issue 13, item 1).

nbval compares the stored outputs on the sample only. Here each notebook executes, in a
kernel of its own, with ``A2A_LAB_LOGS`` pointing at logs made at test time: a generated
log of the sample's shape but not the sample's agents and sessions, and an edge log (every
line rejected, one agent, no A2A exchange, or a simulated log). Outputs are not compared;
any cell error fails the test. On the generated log no section may say it has nothing to
show (:data:`NOTHING`), since that log has data for every section; on a log without a
single event every notebook must say so.

Each notebook runs on one edge log (they rotate, so each edge log is run); set
``A2A_LAB_NOTEBOOKS_ALL_LOGS=1`` to run every notebook on every edge log (slow).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from a2a_lab.samples import write_log
from a2a_lab.sim import SimConfig, simulate
from a2a_lab.sim.output import write_logdir
from tests.support.paths import ROOT

# every notebook on logs the project does not ship: make test-all
pytestmark = pytest.mark.slow

NOTEBOOKS = ROOT / "notebooks"
STEMS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
NOTHING = "Nothing to show"
"""The text a notebook section prints when the log has no data for it."""

# The edge logs each notebook runs on, spread so that each appears at least once and the
# whole file stays near the time budget of ``make test`` on a two-core machine.
_EDGES = ("all_rejects", "one_agent", "no_exchanges", "simulated")
ALL_LOGS = os.environ.get("A2A_LAB_NOTEBOOKS_ALL_LOGS", "") not in ("", "0")
"""Run every notebook on every edge log instead of one each."""
# Logs without a single event: every notebook reads the log somewhere and must say that
# there is nothing to show rather than show empty tables without a word.
_EVENTLESS = ("all_rejects",)


def _edges(stem: str) -> tuple[str, ...]:
    return _EDGES if ALL_LOGS else (_EDGES[STEMS.index(stem) % len(_EDGES)],)


def _run(stem: str, logs: Path) -> nbformat.NotebookNode:
    """Execute ``notebooks/<stem>.ipynb`` with ``A2A_LAB_LOGS=logs``; raise on a cell error."""
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "A2A_LAB_TZ"}
    env.update({"A2A_LAB_LOGS": str(logs), "TZ": "UTC", "PYTHONHASHSEED": "0"})
    # The kernel imports this checkout, not an installed copy.
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(NOTEBOOKS.parent), env.get("PYTHONPATH")])
    )
    client = NotebookClient(
        nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    # execute() hands its keyword arguments to the kernel manager's start_kernel.
    client.execute(env=env)
    return nb


def _texts(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(out["text"])
            data = out.get("data", {})
            parts.extend(
                str(data[k]) for k in ("text/markdown", "text/plain", "text/html") if k in data
            )
    return "\n".join(parts)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("logs")
    made = {"large": root / "large" / "a2a.jsonl"}
    write_log(made["large"], 20_000, seed=13, bad_line_fraction=0.001)
    made["all_rejects"] = root / "all_rejects" / "a2a.jsonl"
    made["all_rejects"].parent.mkdir()
    made["all_rejects"].write_text(
        'not json\n[1, 2, 3]\n{"ts": "x"}\n{"type": ""}\n', encoding="utf-8"
    )
    made["one_agent"] = root / "one_agent" / "a2a.jsonl"
    made["one_agent"].parent.mkdir()
    # "timestamp" (ISO) gives the events their time; an ISO string in "ts" would not (rules §2)
    lines = [
        f'{{"type":"task.started","agentId":"solo","timestamp":"2026-02-18T0{h}:00:00.000Z",'
        f'"data":{{"workSessionId":"ws_{h}","taskId":"t{h}"}}}}'
        for h in range(1, 6)
    ]
    made["one_agent"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    made["no_exchanges"] = root / "no_exchanges" / "a2a.jsonl"
    made["no_exchanges"].parent.mkdir()
    rows = [
        f'{{"type":"task.{kind}","agentId":"{agent}","timestamp":"2026-02-18T0{h}:{m:02d}:00.000Z",'
        f'"data":{{"workSessionId":"ws_{h}","taskId":"t{h}","status":"{kind}"}}}}'
        for h, agent in enumerate(("ruda", "eden", "seum"), start=1)
        for m, kind in enumerate(("started", "completed"))
    ]
    made["no_exchanges"].write_text("\n".join(rows) + "\n", encoding="utf-8")
    # a log directory as the simulator writes it (rotated files, the live file last)
    made["simulated"] = root / "simulated"
    write_logdir(simulate(SimConfig(n_messages=1500), seed=13).events, made["simulated"])
    return made


@pytest.fixture(scope="module")
def runs(logs: dict[str, Path]) -> dict[tuple[str, str], nbformat.NotebookNode | BaseException]:
    """Every notebook on the large log and on one edge log, two kernels at a time."""
    jobs = [(stem, "large") for stem in STEMS]
    jobs += [(stem, edge) for stem in STEMS for edge in _edges(stem)]

    def one(job: tuple[str, str]) -> nbformat.NotebookNode | BaseException:
        try:
            return _run(job[0], logs[job[1]])
        except CellExecutionError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(jobs, pool.map(one, jobs), strict=True))


@pytest.mark.parametrize("stem", STEMS)
def test_notebook_shows_every_section_on_a_large_generated_log(runs: dict, stem: str) -> None:
    result = runs[(stem, "large")]
    if isinstance(result, BaseException):
        pytest.fail(f"{stem} on the generated log: {result}")
    # case-insensitive: "nothing to show" in any spelling is a section without data
    assert NOTHING.lower() not in _texts(result).lower(), (
        f"{stem}: a section had nothing to show on the generated log"
    )


@pytest.mark.parametrize("stem", STEMS)
def test_notebook_runs_on_an_edge_log(runs: dict, stem: str) -> None:
    for edge in _edges(stem):
        result = runs[(stem, edge)]
        if isinstance(result, BaseException):
            pytest.fail(f"{stem} on the {edge} log: {result}")
        if edge in _EVENTLESS:
            assert NOTHING in _texts(result), (
                f"{stem} on the {edge} log: no section says it has nothing to show"
            )
