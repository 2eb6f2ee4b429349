"""Re-execute the notebooks and store their outputs (``make notebooks``).

For every notebook in ``notebooks/`` (a ``NAME.py`` jupytext ``py:percent`` file, its
``NAME.ipynb`` pair, or both) this script

1. takes the cell inputs from the pair member modified last (as ``jupytext --sync`` does;
   a freshly cloned pair is in sync, so then either one gives the same cells),
2. runs them top to bottom in a fresh ``python3`` kernel from ``notebooks/``,
3. writes ``NAME.ipynb`` with the outputs and ``NAME.py`` from the same cells.

Run it through ``make notebooks``, which also clears ``A2A_LAB_LOGS`` (so the notebooks
read the bundled sample) and fixes the time zone and hash seed, exactly as ``make test``
does when nbval compares the stored outputs.

Usage::

    python tools/run_notebooks.py [NOTEBOOK ...]   # names, .py or .ipynb paths; default all
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
PAIRED_FORMATS = "ipynb,py:percent"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
CELL_TIMEOUT_S = 600


def _stems(names: Sequence[str]) -> list[str]:
    if not names:
        found = {p.stem for p in NOTEBOOKS_DIR.glob("*.py")} | {
            p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb")
        }
        return sorted(found)
    return [Path(n).stem for n in names]


def _inputs(stem: str) -> tuple[nbformat.NotebookNode, Path]:
    """The notebook whose cells are current: the pair member modified last."""
    candidates = [
        p for p in (NOTEBOOKS_DIR / f"{stem}.py", NOTEBOOKS_DIR / f"{stem}.ipynb") if p.exists()
    ]
    if not candidates:
        raise SystemExit(f"run_notebooks: no notebooks/{stem}.py or notebooks/{stem}.ipynb")
    newest = max(candidates, key=lambda p: p.stat().st_mtime_ns)
    return jupytext.read(newest), newest


def _stable_cell_ids(nb: nbformat.NotebookNode) -> None:
    # Editors and jupytext make random cell ids; ids derived from the content keep a
    # re-run from rewriting every cell of the stored notebook.
    seen: dict[str, int] = {}
    for cell in nb.cells:
        digest = hashlib.sha1(f"{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:12]
        seen[digest] = seen.get(digest, 0) + 1
        cell["id"] = digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"


def _prepare(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["jupytext"] = {"formats": PAIRED_FORMATS}
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    _stable_cell_ids(nb)
    return nb


def run(stem: str) -> None:
    """Execute ``notebooks/<stem>`` and write both pair members."""
    nb, source = _inputs(stem)
    nb = _prepare(nb)
    started = time.monotonic()
    client = NotebookClient(
        nb,
        kernel_name=KERNELSPEC["name"],
        timeout=CELL_TIMEOUT_S,
        record_timing=False,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    client.execute()
    nbformat.validate(nb)
    jupytext.write(nb, NOTEBOOKS_DIR / f"{stem}.ipynb", fmt="ipynb")
    jupytext.write(nb, NOTEBOOKS_DIR / f"{stem}.py", fmt="py:percent")
    print(f"{stem}: inputs from {source.name}, executed in {time.monotonic() - started:.1f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebook names or paths (default: all)")
    args = parser.parse_args(argv)
    if os.environ.get("A2A_LAB_LOGS"):
        print(
            "run_notebooks: unset A2A_LAB_LOGS (or use `make notebooks`): stored outputs must come "
            "from the bundled sample",
            file=sys.stderr,
        )
        return 2
    stems = _stems(args.notebooks)
    if not stems:
        print("run_notebooks: no notebooks in notebooks/", file=sys.stderr)
        return 1
    for stem in stems:
        try:
            run(stem)
        except CellExecutionError as exc:
            # The stored notebook is left as it was: a failed run must not replace good outputs.
            print(f"{stem}: FAILED, nothing written\n{exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
