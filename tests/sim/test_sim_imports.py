"""The simulator's modules import one way: no import circle, counting ``TYPE_CHECKING`` imports."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import networkx as nx
import pytest

import a2a_lab.sim
from a2a_lab.sim import MOVED

SIM = Path(a2a_lab.sim.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(SIM.parent).with_suffix("").parts
    return "a2a_lab." + ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> nx.DiGraph:
    """Every ``a2a_lab.sim`` module → the ``a2a_lab.sim`` modules it imports, anywhere in its source."""
    graph = nx.DiGraph()
    modules = {_module_name(p) for p in SIM.rglob("*.py")}
    for path in SIM.rglob("*.py"):
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


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_fails_naming_its_new_path(old: str) -> None:
    new = MOVED[old]
    importlib.import_module(new)  # the new path exists
    with pytest.raises(ModuleNotFoundError, match=f"^{re.escape(old)} moved to {re.escape(new)} "):
        importlib.import_module(old)


def test_every_sub_package_says_what_it_owns() -> None:
    for init in SIM.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and "owns" in " ".join(doc.split("\n\n")[:2]), init
