"""The simulator's modules import one way: no import circle, counting ``TYPE_CHECKING`` imports."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import a2a_lab.sim

SIM = Path(a2a_lab.sim.__file__).parent


def _module_name(path: Path) -> str:
    return "a2a_lab.sim" if path.name == "__init__.py" else f"a2a_lab.sim.{path.stem}"


def _imports() -> nx.DiGraph:
    """Every ``a2a_lab.sim`` module → the ``a2a_lab.sim`` modules it imports, anywhere in its source."""
    graph = nx.DiGraph()
    modules = {_module_name(p) for p in SIM.glob("*.py")}
    for path in SIM.glob("*.py"):
        source = _module_name(path)
        graph.add_node(source)
        for node in ast.walk(
            ast.parse(path.read_text(encoding="utf-8"))
        ):  # TYPE_CHECKING blocks included
            if isinstance(node, ast.ImportFrom) and node.module:
                # `from a2a_lab.sim import _texts` imports the submodule, not the package's names
                submodules = [
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if f"{node.module}.{a.name}" in modules
                ]
                targets = submodules or [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph.add_edges_from((source, t) for t in targets if t in modules and t != source)
    return graph


def test_no_module_of_the_simulator_imports_the_package_or_closes_a_circle() -> None:
    graph = _imports()
    assert not [m for m in graph.predecessors("a2a_lab.sim")], (
        "a module imports the package (and so every module)"
    )
    assert list(nx.simple_cycles(graph)) == []


def test_no_module_of_the_simulator_is_over_800_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in SIM.glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > 800} == {}
