"""Follow the CLI's ``--tz`` (issue 25 goal: at most 8 stays) through a2a_lab's modules.

Every call into an a2a_lab function that holds the zone (as an argument or in the parsed
``args``) is recorded with its module; a *stay* is a run of consecutive calls in one
module, a *return* a stay in a module already left. The zone is followed in every form it
takes: the name, the resolved :class:`a2a_lab.time.Zone` the CLI parses it into (a ``str``
equal to the name), a ``zoneinfo.ZoneInfo`` of that key, and ``args`` holding either.
(Values derived from it, such as its event-time expressions or a converted column, are
not the zone and are not followed.) Usage::

    python tools/follow_option.py report LOG -o r.html --tz Pacific/Chatham
    python tools/follow_option.py --calls load LOG --tz Pacific/Chatham  # and each call

(``--tz Pacific/Chatham`` must be among the arguments: it is the value followed.)
"""

from __future__ import annotations

import argparse
import sys
from types import FrameType
from typing import Any
from zoneinfo import ZoneInfo

TZ = "Pacific/Chatham"
#: ``module:function`` of each call of the last :func:`follow` (``--calls`` prints them).
names: list[str] = []


def _holds(value: object) -> bool:
    """Whether ``value`` is the zone followed, or ``args`` holding it."""
    if isinstance(value, str):  # the name, and a2a_lab.time.Zone (a str subclass)
        return value == TZ
    if isinstance(value, ZoneInfo):
        return value.key == TZ
    if isinstance(value, argparse.Namespace):
        return _holds(getattr(value, "tz", None))
    return False


def follow(argv: list[str]) -> tuple[int, list[str]]:
    """Run ``a2a-lab argv``; its exit status and the modules of the calls holding ``TZ``."""
    from a2a_lab.cli import main

    seq: list[str] = []
    names.clear()

    def tracer(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            mod = str(frame.f_globals.get("__name__", ""))
            if mod.startswith("a2a_lab") and any(_holds(v) for v in frame.f_locals.values()):
                seq.append(mod)
                names.append(f"{mod}:{frame.f_code.co_name}")

    sys.settrace(tracer)  # type: ignore[arg-type]
    try:
        rc = main(argv)
    finally:
        sys.settrace(None)
    return rc, seq


def stays(seq: list[str]) -> tuple[list[str], int]:
    """The stays of a call sequence and how many of them return to a module already left."""
    runs = [m for i, m in enumerate(seq) if i == 0 or seq[i - 1] != m]
    left: set[str] = set()
    returns = 0
    for i, m in enumerate(runs):
        returns += m in left
        if i:
            left.add(runs[i - 1])
    return runs, returns


if __name__ == "__main__":
    show_calls = sys.argv[1:2] == ["--calls"]
    code, calls = follow(sys.argv[2:] if show_calls else sys.argv[1:])
    if show_calls:
        print("\n".join(names), file=sys.stderr)
    runs, back = stays(calls)
    print(
        f"exit {code}: {len(calls)} calls, {len(runs)} stays in {len(set(runs))} modules, "
        f"{back} returns\n  " + " > ".join(runs),
        file=sys.stderr,
    )
