"""No private name crosses a room of the package (issue 25, Goals).

A room is a top-level sub-package or module of ``a2a_lab`` (``a2a_lab.io``,
``a2a_lab.sessions``, ``a2a_lab.exchanges``, ...). Inside a room, modules share their
private helpers freely; across rooms, an import names only public things: no
``_name`` imported from another room and no import from another room's ``_module``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "a2a_lab"

#: Crossings still to remove: the list may only shrink (an entry that no longer occurs fails
#: the test too). Empty since session 8: no private name crosses a room.
KNOWN: set[tuple[str, str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _room(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def crossings() -> set[tuple[str, str, str]]:
    """(importing module, imported module, name) for every private name crossing rooms."""
    found: set[tuple[str, str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _target(module, path, node)
            if not target.startswith("a2a_lab") or _room(target) == _room(module):
                continue
            if any(_private(part) for part in target.split(".")[2:]):
                found.add((module, target, "<private module>"))
            found.update((module, target, a.name) for a in node.names if _private(a.name))
    return found


def test_the_checker_sees_a_crossing() -> None:
    """The rule can fail: a relative private import across rooms is found."""
    src = "from ..io._decode import file_label\nfrom ..sessions import _js_number\n"
    node = ast.parse(src)
    path = PACKAGE / "views" / "x.py"
    targets = [_target("a2a_lab.views.x", path, n) for n in node.body]  # type: ignore[arg-type]
    assert targets == ["a2a_lab.io._decode", "a2a_lab.sessions"]


def test_no_private_name_crosses_a_room() -> None:
    found = crossings()
    assert sorted(found - KNOWN) == []
    # a crossing removed leaves the list, so the list cannot hide a new one
    assert sorted(KNOWN - found) == []
