"""Work-session bodies from event texts made once: the page is mostly its event objects.

The dashboard's default page holds every event of a hundred sessions as an enriched event
object (rules §6). Each object depends on its own line only (enrichment is row by row), so
its JSON text is made the first time a body needs it and kept; a body is then the session
and thread skeleton (``to_api(thread_events="summary")``, a small part of the work) with
the kept texts put in place. After the log grows or a session turns ARCHIVED, a new body
costs the sessions query and a join of texts, not a parse and a write of every event.
"""

from __future__ import annotations

import threading
from typing import Any

import polars as pl

from a2a_lab.serve._json import Fragment, js_json_bytes
from a2a_lab.sessions import WorkSessionsResult, event_objects

#: Where a thread's events stand in the body: body → sessions → session → threads → thread
#: → events → the event, two spaces a level.
EVENT_INDENT = " " * 12


class EventTexts:
    """Event object texts by ``(file, line)``, at most about ``budget_chars`` bytes.

    Parameters
    ----------
    budget_chars
        When the kept texts would pass this many characters, the older ones are dropped
        first (memory is bounded by construction, whatever the pages ask for).
    """

    def __init__(self, budget_chars: int = 256_000_000) -> None:
        self.budget_chars = budget_chars
        self._texts: dict[tuple[str, int], Fragment] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every text (the source was read again: a line may now be another event)."""
        with self._lock:
            self._texts.clear()
            self._chars = 0

    def texts(self, events: pl.DataFrame, keys: pl.DataFrame) -> list[Fragment]:
        """The texts of the events at ``keys`` (``file, line`` rows of ``events``), in order."""
        wanted = list(keys.select("file", "line").iter_rows())
        with self._lock:
            found = {k: self._texts[k] for k in wanted if k in self._texts}
        missing = pl.DataFrame(
            list(dict.fromkeys(k for k in wanted if k not in found)),
            schema={"file": pl.String, "line": pl.Int64},
            orient="row",
        )
        if missing.height:
            rows = (
                missing.with_row_index("_order")
                .join(events, on=["file", "line"], how="left")
                .sort("_order")
                .drop("_order")
            )
            made = {
                key: Fragment.of(obj, EVENT_INDENT)
                for key, obj in zip(missing.iter_rows(), event_objects(rows), strict=True)
            }
            found.update(made)
            self._keep(made)
        return [found[k] for k in wanted]

    def _keep(self, made: dict[tuple[str, int], Fragment]) -> None:
        with self._lock:
            for key, text in made.items():
                if key in self._texts:
                    continue
                self._texts[key] = text
                self._chars += len(text.data)
            # dicts keep insertion order: drop the oldest texts past the budget
            while self._chars > self.budget_chars and self._texts:
                old = next(iter(self._texts))
                self._chars -= len(self._texts.pop(old).data)


def work_sessions_bytes(
    result: WorkSessionsResult, events: pl.DataFrame, texts: EventTexts
) -> bytes:
    """``JSON.stringify(result.to_api(), null, 2)``, the event objects from ``texts``.

    Parameters
    ----------
    result
        The sessions query on ``events``.
    events
        The enriched events the query ran on (their ``raw`` lines give the objects).
    texts
        The kept event texts (filled with the ones this body makes).

    Returns
    -------
    bytes
        The same bytes as ``js_json_bytes(result.to_api())``.
    """
    body: dict[str, Any] = result.to_api(thread_events="summary")
    threads = [t for s in body["sessions"] for t in s["threads"]]
    count = sum(len(t["events"]) for t in threads)
    # the summary lists the events as the thread-event membership does, in the same order
    keys = result.thread_events.head(count).select("file", "line")
    made = iter(texts.texts(events, keys))
    for thread in threads:
        thread["events"] = [next(made) for _ in thread["events"]]
    return js_json_bytes(body)
