"""Every code block of docs/guide.md runs, in order, on the bundled sample (issue 23 item 4).

The guide's fenced ``bash`` blocks run in ``bash -e`` with the installed ``a2a-lab`` entry
point on ``PATH`` (importing this checkout), its ``python`` blocks in one shared namespace,
as a reader's session would; all in one empty temporary directory, with ``LOGS`` set to a
copy of the sample. A ``bash exit=N`` block must exit with status N (a CI gate that fires on
the sample); every other block must succeed, and every file a block names after ``-o`` or
``>`` must exist afterwards and not be empty.

Running every block takes 36 s of CPU (sections 1-4 alone 24 s: ``_run_guide(...,
slow=False)`` runs them without sections 5 and 6, which simulate days of traffic), so the
run is a slow test; the structure check is fast.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import a2a_lab as al
from tests.support.paths import ROOT

GUIDE = ROOT / "docs" / "guide.md"
#: Headings whose blocks simulate (slow test only).
SLOW_SECTIONS = ("## 5.", "## 6.")

_FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    """One fenced block of the guide."""

    lang: str
    code: str
    exit_status: int
    section: str
    line: int

    @property
    def slow(self) -> bool:
        return self.section.startswith(SLOW_SECTIONS)

    def where(self) -> str:
        return f"docs/guide.md:{self.line} ({self.section or 'intro'})"


def blocks(text: str) -> list[Block]:
    """The guide's ``bash`` and ``python`` blocks, in order, with their section heading."""
    out = []
    for m in _FENCE.finditer(text):
        lang, info, code = m.group(1), m.group(2), m.group(3)
        before = text[: m.start()]
        headings = re.findall(r"^## .*$", before, re.M)
        status = re.search(r"\bexit=(\d+)", info)
        out.append(
            Block(
                lang=lang,
                code=code,
                exit_status=int(status.group(1)) if status else 0,
                section=headings[-1] if headings else "",
                line=before.count("\n") + 1,
            )
        )
    return out


def _written(code: str) -> list[str]:
    """Files a shell block writes: the argument of ``-o`` and the target of ``>``."""
    return re.findall(r"(?:-o|>)\s+([\w.-]+\.\w+)", code)


def _env(tmp: Path, logs: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("A2A_LAB_TZ", "A2A_LAB_LOGS")}
    bindir = str(Path(sys.executable).parent)  # the venv's a2a-lab entry point
    env.update(
        LOGS=str(logs),
        TZ="UTC",
        A2A_LAB_PROGRESS="0",
        PATH=os.pathsep.join([bindir, env.get("PATH", "")]),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        HOME=str(tmp),
    )
    return env


def _run_guide(tmp: Path, *, slow: bool) -> list[Block]:
    """Run the guide's blocks (the fast ones only unless ``slow``); return those run."""
    logs = tmp / "logs"
    shutil.copytree(al.samples.sample_dir(), logs)
    work = tmp / "work"
    work.mkdir()
    env = _env(tmp, logs)
    namespace: dict[str, object] = {"__name__": "__guide__"}
    ran = []
    cwd, saved_env = os.getcwd(), dict(os.environ)
    os.chdir(work)
    os.environ["LOGS"] = str(logs)  # the Python blocks read LOGS as the shell blocks do
    try:
        for block in blocks(GUIDE.read_text(encoding="utf-8")):
            if block.slow and not slow:
                continue
            ran.append(block)
            if block.lang == "python":
                exec(compile(block.code, block.where(), "exec"), namespace)
                continue
            assert block.lang == "bash", f"{block.where()}: a {block.lang} block"
            done = subprocess.run(
                ["bash", "-e", "-c", block.code],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert done.returncode == block.exit_status, (
                f"{block.where()}: exit {done.returncode}, expected {block.exit_status}\n"
                f"{done.stderr[-2000:]}"
            )
            for name in _written(block.code):
                path = work / name
                assert path.is_file() and path.stat().st_size > 0, f"{block.where()}: no {name}"
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return ran


def test_the_guide_has_every_job_and_only_runnable_blocks() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    sections = re.findall(r"^## \d\. (.*)$", text, re.M)
    assert sections == [
        "Read my logs",
        "Find the slow or silent pairs",
        "Gate CI on log health",
        "Share a report",
        "Calibrate a twin and trust its intervals",
        "Ask a capacity what-if",
    ]
    found = blocks(text)
    # every fence of the guide is a block the test runs (no untested language)
    assert len(found) == text.count("```") // 2
    assert {b.lang for b in found} == {"bash", "python"}
    assert [b.exit_status for b in found].count(1) == 1  # the CI gate that fires


@pytest.mark.slow
def test_every_block_of_the_guide_runs(tmp_path: Path) -> None:
    ran = _run_guide(tmp_path, slow=True)
    assert len(ran) == len(blocks(GUIDE.read_text(encoding="utf-8")))
