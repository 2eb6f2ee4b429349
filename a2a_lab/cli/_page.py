"""The work-session body written as it is made: one batch of event objects held at a time.

``print_json(result.to_api())`` holds every event object of the page as Python dicts, then
the whole text (on a 148,515-event store whose default page holds 76,206 objects: a 907 MB
peak for a 72 MB output). Here the sessions and threads are written from the summary body
and each thread's events from :meth:`WorkSessionsResult.event_object_batches`, so the
bytes are the same and only one batch of objects is alive at a time.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import uuid
from typing import Any


def _dumps(value: Any) -> str:
    from a2a_lab.reference.jsstr import js_well_formed_json

    return js_well_formed_json(json.dumps(value, ensure_ascii=False))


def print_work_sessions(result: Any, batch_rows: int = 5000) -> None:
    """Write ``print_json(result.to_api())``'s bytes to stdout, streaming the event objects.

    Parameters
    ----------
    result
        A :class:`a2a_lab.sessions.WorkSessionsResult`.
    batch_rows
        Event objects made at a time.
    """
    body = result.to_api(thread_events="summary")
    threads = [thread for session in body["sessions"] for thread in session["threads"]]
    counts = [len(thread["events"]) for thread in threads]
    # each thread's events stand in as a string no input can hold (a fresh random nonce)
    nonce = uuid.uuid4().hex
    for index, thread in enumerate(threads):
        thread["events"] = f"\x00{nonce}:{index}\x00"
    pieces = re.split(r'"\\u0000' + nonce + r':(\d+)\\u0000"', _dumps(body))
    objects = itertools.chain.from_iterable(result.event_object_batches(sum(counts), batch_rows))
    write = sys.stdout.write
    write(pieces[0])
    for k in range(1, len(pieces), 2):
        write("[")
        write(", ".join(_dumps(next(objects)) for _ in range(counts[int(pieces[k])])))
        write("]")
        write(pieces[k + 1])
    write("\n")
