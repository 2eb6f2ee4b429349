"""Code health, run by ``make test``: lint and format, strict types, the layers, duplication,
short functions.

Each check runs the pinned tool (requirements/lock.txt) on this checkout, so a failure
prints the tool's own report. mypy keeps its incremental cache in the system temp
directory (one per checkout), so only the first run on a machine is slow; a clean clone
needs nothing but the venv.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

BIN = Path(sys.executable).parent
PACKAGE = ROOT / "a2a_lab"

#: Pairs of places sharing 6+ lines, as pylint's duplicate-code checker counts them over
#: the package, tools/ and benchmarks/ (comments, docstrings, imports and signatures
#: ignored). Lower it when a clean-up removes a pair; never raise it to let one in.
DUPLICATE_PAIRS_MAX = 0

#: No function of the package is longer than this many lines (its ``def`` to its last line,
#: docstring included): a function is read whole, so it is cut by step, not by file size.
FUNCTION_LINES_MAX = 100
#: No signature takes more parameters than this (``self``/``cls`` not counted); past it, the
#: options travel in one object (e.g. :class:`a2a_lab.sim.experiments.capacity.CapacityOptions`).
PARAMETERS_MAX = 8
#: Functions still over :data:`FUNCTION_LINES_MAX`, in files other engineers were changing
#: while the rule came in (issue 25), each with its length then. The list only shrinks: a
#: function may not grow past its listed length, one cut under the limit must leave the list,
#: and a function not named here may not cross the limit.
LONG_FUNCTIONS: dict[str, int] = {}
#: Signatures still over :data:`PARAMETERS_MAX` in those files, with their parameter count
#: then (the same rules: only shrinks, never grows).
WIDE_SIGNATURES: dict[str, int] = {}


def _run(*args: str | Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(a) for a in args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in {BIN}: run `make venv` (it is in the lock)")
    return path


def _cache_dir(tool: str) -> Path:
    """A per-checkout cache directory outside the tree (the tree stays clean)."""
    key = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"a2a_lab-{tool}-{key}"


def test_ruff_lint_is_clean() -> None:
    out = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_is_clean() -> None:
    out = _run(_tool("ruff"), "format", "--check", "--no-cache", ".")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_is_clean_on_the_package() -> None:
    # the configuration ([tool.mypy] in pyproject.toml) names the package and `strict`
    out = _run(sys.executable, "-m", "mypy", "--cache-dir", _cache_dir("mypy"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found" in out.stdout


def test_mypy_configuration_is_strict_on_the_package() -> None:
    """The check above means what it says: strict mode, on the whole package."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert config["packages"] == ["a2a_lab"]
    # only untyped third-party libraries may skip their imports, never a2a_lab itself
    for override in config.get("overrides", []):
        modules = (
            override["module"] if isinstance(override["module"], list) else [override["module"]]
        )
        assert not any(m.startswith("a2a_lab") for m in modules), override


def test_import_layers_and_no_circles() -> None:
    """import-linter: the layer contract of docs/architecture.md and acyclic siblings,
    counting imports under TYPE_CHECKING and imports inside functions."""
    out = _run(_tool("lint-imports"), "--cache-dir", _cache_dir("importlinter"))
    assert out.returncode == 0, out.stdout + out.stderr
    kept = re.search(r"Contracts: (\d+) kept, (\d+) broken", out.stdout)
    assert kept is not None, out.stdout
    assert (int(kept[1]), int(kept[2])) == (2, 0), out.stdout


def _functions() -> dict[str, tuple[int, int]]:
    """``path::qualified.name`` of every function of the package → (lines, parameters)."""
    found: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, where: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                a = child.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                n = len(params)  # *args / **kwargs (catch-alls) are not parameters
                if params and params[0].arg in ("self", "cls"):
                    n -= 1
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                found[f"{where}::{name}"] = (lines, n)
                visit(child, where, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, where, prefix + child.name + ".")
            else:
                visit(child, where, prefix)

    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        visit(tree, path.relative_to(ROOT).as_posix(), "")
    return found


@pytest.mark.parametrize(
    ("index", "limit", "listed"),
    [(0, FUNCTION_LINES_MAX, LONG_FUNCTIONS), (1, PARAMETERS_MAX, WIDE_SIGNATURES)],
    ids=["no function over 100 lines", "no signature over 8 parameters"],
)
def test_functions_are_short_and_narrow(index: int, limit: int, listed: dict[str, int]) -> None:
    sizes = {name: v[index] for name, v in _functions().items()}
    over = {name: n for name, n in sizes.items() if n > limit}
    assert {name: n for name, n in over.items() if name not in listed} == {}
    # a listed function may not grow, and one cut under the limit leaves the list
    assert {name: n for name, n in over.items() if name in listed and n > listed[name]} == {}
    assert sorted(set(listed) - set(over)) == []


@pytest.mark.slow
def test_duplicate_code_stays_under_the_threshold() -> None:
    out = _run(
        _tool("pylint"),
        "--jobs=2",
        "--disable=all",
        "--enable=duplicate-code",
        "--min-similarity-lines=6",
        "--score=n",
        "--reports=n",
        "a2a_lab",
        "tools",
        "benchmarks",
    )
    assert "Traceback" not in out.stderr, out.stderr
    pairs = re.findall(r"R0801: Similar lines in \d+ files", out.stdout)
    assert len(pairs) <= DUPLICATE_PAIRS_MAX, (
        f"{len(pairs)} duplicate-code pairs (at most {DUPLICATE_PAIRS_MAX}):\n{out.stdout}"
    )
