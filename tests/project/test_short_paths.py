"""The package's short module names are real paths: ``from a2a_lab.checks import check`` works.

``al.calibrate`` and ``al.checks`` load lazily (``a2a-lab --help`` imports no Polars), which
made ``from a2a_lab.calibrate import fit_log`` fail while ``al.calibrate.fit_log`` worked
(issue 25). Each short path is now a module of its own re-exporting the same objects.
"""

from __future__ import annotations

import importlib

import pytest

import a2a_lab as al


@pytest.mark.parametrize(
    ("short", "full"),
    [("calibrate", "a2a_lab.analysis.calibrate"), ("checks", "a2a_lab.analysis.checks")],
)
def test_a_short_path_imports_statically_and_holds_the_same_objects(short: str, full: str) -> None:
    module = importlib.import_module(f"a2a_lab.{short}")
    source = importlib.import_module(full)
    assert all(getattr(module, name) is getattr(source, name) for name in source.__all__)
    assert getattr(al, short) is module  # the lazy attribute is the same module


def test_the_two_names_of_the_issue_import() -> None:
    from a2a_lab.calibrate import fit_log
    from a2a_lab.checks import check

    assert fit_log is al.fit_log
    assert check is al.check
