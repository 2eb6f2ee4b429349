"""Follow ``simulate(config)`` (issue 25 goal: at most 15 stays, 3 returns) through a2a_lab's modules.

One run of :func:`a2a_lab.sim.simulate` on the default :class:`~a2a_lab.sim.SimConfig`
(seed 1) is traced with :func:`sys.settrace`. Two paths are counted, both at the
grain of a module (a *room*):

- ``config``: every call into an a2a_lab function that holds the config object as an
  argument or local (the value followed, as ``tools/follow_option.py`` follows ``--tz``);
- ``reading``: the first call of each a2a_lab function, in call order (what a reader opens
  following the run once; a function called a thousand times is read once).

A *stay* is a run of consecutive calls in one room, a *return* a stay in a room already
left (:func:`follow_option.stays`). ``--grain package`` makes the room a sub-package of
:mod:`a2a_lab.sim` (``sim.engine``, ``sim.workload``, ...; a top-level module of ``sim``
stays its own room) or a layer of a2a_lab (``reference``, ``io``, ...). Calls the import
system makes (a meta-path finder asked about a function-level import) are not the run's
and are skipped. Usage::

    python tools/follow_simulate.py                  # both paths, module by module
    python tools/follow_simulate.py --grain package  # both paths, sub-package by sub-package
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from follow_option import stays


def follow() -> tuple[list[str], list[str]]:
    """The modules of the config-holding calls and of each function's first call."""
    from a2a_lab import sim

    cfg = sim.SimConfig()
    holding: list[str] = []
    reading: list[str] = []
    seen: set[CodeType] = set()

    def tracer(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        mod = str(frame.f_globals.get("__name__", ""))
        if not mod.startswith("a2a_lab"):
            return
        caller = frame.f_back
        if caller is not None and str(caller.f_globals.get("__name__", "")).startswith("importlib"):
            return
        if frame.f_code not in seen:
            seen.add(frame.f_code)
            reading.append(mod)
        if any(v is cfg for v in frame.f_locals.values()):
            holding.append(mod)

    sys.settrace(tracer)  # type: ignore[arg-type]
    try:
        sim.simulate(cfg, seed=1)
    finally:
        sys.settrace(None)
    return holding, reading


def room(module: str, grain: str) -> str:
    """The room of ``module`` at ``grain`` (``module`` or ``package``)."""
    if grain == "module":
        return module
    parts = module.split(".")
    if parts[:2] == ["a2a_lab", "sim"]:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


if __name__ == "__main__":
    grain = "package" if sys.argv[1:] == ["--grain", "package"] else "module"
    for name, modules in zip(("config", "reading"), follow(), strict=True):
        calls = [room(m, grain) for m in modules]
        runs, back = stays(calls)
        short = [r.removeprefix("a2a_lab.") for r in runs]
        print(
            f"{name}: {len(calls)} calls, {len(runs)} stays in {len(set(runs))} rooms ({grain}s), "
            f"{back} returns\n  " + " > ".join(short)
        )
