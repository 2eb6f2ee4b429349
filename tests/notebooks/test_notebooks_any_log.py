"""Every notebook runs on logs other than the bundled sample (issues 13 and 23).

nbval compares the stored outputs on the sample only. Here each notebook executes, in a
kernel of its own, with ``A2A_LAB_LOGS`` pointing at logs made at test time: two *foreign*
logs the project does not ship — a generated log of the sample's shape but not the sample's
agents and sessions (``large``), and a log of the held-out reference model
(``tests/support/reference_model.py``: other agents, the reference gateway's lanes, gate and
failures; ``reference``) — and an edge log (every line rejected, one agent, no A2A
exchange, or a simulated log). Any cell error fails the test. On the generated log no
section may say it has nothing to show (:data:`NOTHING`), since that log has data for every
section; on a log without a single event every notebook must say so.

On both foreign logs the answers are checked (issue 23): each what-if that depends on the
log changes its output, and each takeaway's numbers are those of the table it cites. A probe
cell appended to the notebook (:data:`PROBES`) prints the notebook's own tables as JSON
after it ran; the takeaway is read from the notebook's Markdown output, and every number in
it must be a value of those tables at the precision shown (:func:`_cited`):

- 05 §4 replays the log with its busiest target three times slower: the p95 latency of the
  messages to it must change, and the sentence must cite the table's figures;
- 06 §0 counts the messages a 6 / 60 s loop guard would block: the count must be the one
  ``check`` reports for the same log (``guard.loop`` findings);
- 07 §3 runs each what-if scenario on the log's twin: every scenario must differ from
  today in at least one figure, and the takeaways must cite the scenario table and the
  capacity search.

Each notebook runs on one edge log (they rotate, so each edge log is run); set
``A2A_LAB_NOTEBOOKS_ALL_LOGS=1`` to run every notebook on every edge log (slow).
"""

from __future__ import annotations

import json
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import a2a_lab as al
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


#: The logs no notebook of the project was written on, whose answers are checked.
FOREIGN = ("large", "reference")

#: Marks the probe cell's output line.
_PROBE = "A2A_LAB_PROBE "
_PROBE_HEAD = (
    "import json as _json\n"
    "def _rows(name):\n"
    "    v = globals().get(name)\n"
    "    return v.to_dicts() if hasattr(v, 'to_dicts') else v\n"
)
#: Per notebook, the probe cell appended before it runs: it prints the tables its takeaways
#: cite (names of the notebook's own variables; absent on a log where the section was empty).
PROBES: dict[str, str] = {
    "05_capacity_whatif": _PROBE_HEAD
    + f"print({_PROBE!r} + _json.dumps({{'compare': _rows('compare'), 'slow': globals().get('SLOW')}}, default=str))",
    "06_policy_experiments": _PROBE_HEAD
    + f"print({_PROBE!r} + _json.dumps({{'blocked_at_6': globals().get('blocked_at_6')}}))",
    "07_calibrate_from_logs": _PROBE_HEAD
    + "_cap = globals().get('cap')\n"
    + f"print({_PROBE!r} + _json.dumps({{'whatif': _rows('whatif'), "
    + "'cap': None if _cap is None else {k: getattr(_cap, k) for k in ("
    + "'scale', 'scale_low', 'scale_high', 'rate_per_s', 'target_latency_s', 'quantile', 'level')}}, default=str))",
}


def _run(stem: str, logs: Path) -> nbformat.NotebookNode:
    """Execute ``notebooks/<stem>.ipynb`` with ``A2A_LAB_LOGS=logs``; raise on a cell error."""
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    if stem in PROBES:
        nb.cells.append(nbformat.v4.new_code_cell(PROBES[stem]))
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
    # the held-out model of the reference gateway's traffic (issue 22): other agents, lanes,
    # gate and failures of the reference, half a day of traffic
    from tests.support.reference_model import ModelConfig
    from tests.support.reference_model import simulate as reference_simulate

    made["reference"] = root / "reference" / "coordination-events.ndjson"
    made["reference"].parent.mkdir()
    reference_simulate(ModelConfig(n_sends=800), seed=23).write(made["reference"])
    # a log directory as the simulator writes it (rotated files, the live file last)
    made["simulated"] = root / "simulated"
    write_logdir(simulate(SimConfig(n_messages=1500), seed=13).events, made["simulated"])
    return made


@pytest.fixture(scope="module")
def runs(logs: dict[str, Path]) -> dict[tuple[str, str], nbformat.NotebookNode | BaseException]:
    """Every notebook on the foreign logs and on one edge log, two kernels at a time."""
    jobs = [(stem, log) for log in FOREIGN for stem in STEMS]
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


@pytest.mark.parametrize("stem", STEMS)
def test_notebook_runs_on_the_reference_model_log(runs: dict, stem: str) -> None:
    result = runs[(stem, "reference")]
    if isinstance(result, BaseException):
        pytest.fail(f"{stem} on the reference model's log: {result}")


# ---- the answers on foreign logs (issue 23) ----------------------------------------------


def _probe(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """What the probe cell printed (the notebook's own tables)."""
    for out in nb.cells[-1].get("outputs", []):
        for line in out.get("text", "").splitlines():
            if line.startswith(_PROBE):
                found: dict[str, Any] = json.loads(line[len(_PROBE) :])
                return found
    raise AssertionError("the probe cell printed nothing")


def _markdown(nb: nbformat.NotebookNode, start: str) -> str:
    """The notebook's one Markdown output that starts with ``start``."""
    texts = [
        str(out["data"]["text/markdown"])
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "text/markdown" in out.get("data", {})
    ]
    hits = [t for t in texts if t.lstrip("*").startswith(start.lstrip("*"))]
    assert len(hits) == 1, f"{len(hits)} Markdown outputs start with {start!r}"
    return hits[0]


_NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(\s*%)?")


def _numbers(text: str) -> list[tuple[float, int, bool]]:
    """``(value, decimals, percent)`` of every number in ``text`` outside code spans."""
    prose = re.sub(r"`[^`]*`", " ", text)
    out = []
    for m in _NUMBER.finditer(prose):
        digits = m.group(1).replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        out.append((float(digits), decimals, bool(m.group(2))))
    return out


def _values(table: Any) -> list[float]:
    """Every finite number in a table (rows of dicts, a dict, or a number)."""
    if isinstance(table, dict):
        return [v for x in table.values() for v in _values(x)]
    if isinstance(table, list):
        return [v for x in table for v in _values(x)]
    if isinstance(table, bool) or not isinstance(table, int | float):
        return []
    return [float(table)] if math.isfinite(table) else []


def _cited(text: str, values: list[float]) -> list[float]:
    """The numbers of ``text`` that are no value of ``values`` at the precision shown (a
    percentage as 100 × the value, or the value itself)."""

    def shown(v: float, decimals: int) -> float:
        return round(v, decimals)

    missing = []
    for x, decimals, percent in _numbers(text):
        scaled = [100 * v for v in values] if percent else []
        if not any(shown(v, decimals) == x for v in [*values, *scaled]):
            missing.append(x)
    return missing


def _foreign(runs: dict, stem: str, log: str) -> tuple[nbformat.NotebookNode, dict[str, Any]]:
    """Notebook ``stem`` as run on the foreign ``log``, and what its probe cell printed."""
    result = runs[(stem, log)]
    if isinstance(result, BaseException):
        pytest.fail(f"{stem} on the {log} log: {result}")
    return result, _probe(result)


@pytest.mark.parametrize("log", FOREIGN)
def test_05_replay_what_if_changes_the_answer_and_the_sentence_cites_it(
    runs: dict, log: str
) -> None:
    nb, probe = _foreign(runs, "05_capacity_whatif", log)
    before, after = probe["compare"]
    p95 = "p95 latency s"
    assert after[p95] != before[p95], f"{log}: three times slower changed nothing: {before}"
    slow = probe["slow"]
    sentence = _markdown(nb, f"With `{slow}` three times slower")
    missing = _cited(sentence, _values(probe["compare"]))
    assert not missing, f"{log}: {missing} are not in the table it cites: {sentence}"


@pytest.mark.parametrize("log", FOREIGN)
def test_06_loop_guard_count_is_the_one_check_reports(runs: dict, logs: dict, log: str) -> None:
    nb, probe = _foreign(runs, "06_policy_experiments", log)
    blocked = probe["blocked_at_6"]
    found = al.check(al.load(logs[log]).events)
    loop = found.filter(found["rule"] == "guard.loop")
    assert blocked == int(loop["lines"].list.len().sum()), log
    sentence = _markdown(nb, "The log has **")
    assert f"would have blocked **{blocked}**" in sentence


@pytest.mark.parametrize("log", FOREIGN)
def test_07_every_what_if_changes_the_twin_and_the_takeaways_cite_the_tables(
    runs: dict, log: str
) -> None:
    nb, probe = _foreign(runs, "07_calibrate_from_logs", log)
    rows = probe["whatif"]
    assert rows, f"{log}: no what-if table (the twin was not fitted)"
    figures = ("p50_latency_s", "p95_latency_s", "mean_wait_s", "no_reply_rate")
    today = rows[0]
    for row in rows[1:]:
        assert any(row[f] != today[f] for f in figures), (
            f"{log}: {row['scenario']} changes nothing: {row}"
        )
    cap = probe["cap"]
    takeaways = _markdown(nb, "**Takeaways.**")
    # constants of the sentence itself: "95 % CI", and the capacity search's target
    constants = [95.0, 100 * cap["quantile"], 100 * cap["level"], cap["target_latency_s"]]
    rate_per_hour = cap["rate_per_s"] * 3600
    missing = _cited(takeaways, [*_values(rows), *_values(cap), rate_per_hour, *constants])
    assert not missing, f"{log}: {missing} are not in the tables cited: {takeaways}"
