"""The events a server answers from: a log or a history store, kept current by the follower.

A history store SOURCE, or a log directory given a store to follow it into (``store=``;
``a2a-lab serve`` gives it one), is answered from the store's materialised tables
(:class:`~a2a_lab.serve._stored.StoredView`): each refresh ingests the new lines of the
log into the store (the follower with ``store=``) and brings the enriched columns and the
per-work-session table up to date (:func:`a2a_lab.materialize.materialize`), which
re-makes only the sessions the new lines touch. The server holds the sessions rows and the
texts of the bodies it made, never the event frame.

A log SOURCE without a store (a single file, or a directory with ``store=None``) is
followed in memory: the first refresh reads it whole, later ones only what was appended.
Only the new lines are enriched at each refresh: enrichment is computed row by row (see
``a2a_lab.sessions._build._session_events``), so the enriched frame of the old rows plus
that of the new ones is the enriched frame of all of them. When a file the rows were read
from is no longer there under its name (the live file was rotated) or lines arrive from a
file not seen yet, everything is read again: the earlier rows would carry the old name,
and the file order ``GET /api/events`` sorts by would be wrong.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from a2a_lab.enrich import enrich
from a2a_lab.io import (
    LogFollower,
    StoreError,
    ingest,
    is_store,
    open_store,
    rotation_key,
)
from a2a_lab.serve._bodies import Body, EventTexts, SessionTexts
from a2a_lab.serve._stored import StoredView, open_view, with_tail

#: The ``data`` fields the handlers read after enrichment (sessions §7-§8); the page's
#: event objects are written from ``raw``, the original line.
KEPT_DATA_FIELDS = ("workSessionId", "conversationId", "status")


def _narrow(enriched: pl.DataFrame) -> pl.DataFrame:
    """Drop the ``data`` fields no handler reads (messages, previews: most of the memory)."""
    data = pl.col("data")
    kept = pl.struct([data.struct.field(name) for name in KEPT_DATA_FIELDS])
    return enriched.with_columns(pl.when(data.is_not_null()).then(kept).alias("data"))


#: Appended chunks of the event frame merged into one past this many.
MAX_CHUNKS = 64
#: Bodies at least this long are gzip-encoded when made (a large page: tens of MB).
PRE_GZIP_BYTES = 1_000_000
#: How many of the queries asked for last :meth:`LiveEvents.prefetch` makes again after a
#: refresh (a dashboard asks a few; a client asking a new query each time must not make
#: the server compute hundreds).
WATCHED_KEYS = 4


class CollectorPause:
    """While any thread is inside, the cyclic garbage collector does not run by itself.

    A body is made of about 100,000 short-lived dicts and lists (the page's summary), which
    reference counting frees: a collection while they live only traverses them. A full one
    holds the interpreter, so every client waits: 0.28 s of wall time measured in one body
    at a load average of 13. Collections resume when the last thread leaves.
    """

    def __init__(self) -> None:
        self._inside = 0
        self._lock = threading.Lock()
        self._was_enabled = True

    def __enter__(self) -> None:
        with self._lock:
            if self._inside == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._inside += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._was_enabled:
                gc.enable()


#: One for the process: the collector is the process's.
COLLECTOR_PAUSED = CollectorPause()


@dataclass(frozen=True)
class Snapshot:
    """The enriched events at one refresh.

    Attributes
    ----------
    events
        Enriched events (``raw`` kept, ``data`` narrowed to :data:`KEPT_DATA_FIELDS`), in
        the order they were read; empty when answering from a store (``view``).
    files
        The files in reading order (rotated oldest first, the live file last).
    version
        Increases with every change of ``events``; cached bodies are keyed by it.
    times
        ``event_ms`` of every event, sorted, nulls dropped: the instants at which a session
        may turn ARCHIVED are these plus the archive window (from a store: every session's
        last time, the only such instants for a query without role or type filters).
    view
        The store's tables the server answers from, or None (the events in memory).
    """

    events: pl.DataFrame
    files: list[str]
    version: int
    times: pl.Series
    view: StoredView | None = None

    @property
    def event_count(self) -> int:
        """Events the server answers from."""
        return self.view.events if self.view is not None else self.events.height


def _file_order(names: Collection[str]) -> list[str]:
    """Files in the loader's reading order: per directory, rotated oldest first, live last."""
    return sorted(names, key=lambda name: (str(Path(name).parent), rotation_key(Path(name))))


#: The worker process is replaced after a task that took it past this peak (MB).
WORKER_RECYCLE_MB = 400.0
#: With a worker, the log directory is ingested when a file changed, and at least this often.
FULL_CHECK_S = 5.0

T = TypeVar("T")


def _measured(work: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``work(*args)`` and this process's peak resident memory so far (MB)."""
    result = work(*args)
    peak = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return result, peak


def _end_with_parent(parent: int) -> None:
    """In the worker: end it when the server is gone (a server killed by a signal never
    shuts its worker down; the worker must not live on alone)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="a2a-lab-serve-parent", daemon=True).start()


def _ingest_events(logdir: Path, store: Path, tz: str) -> pl.DataFrame:
    """Ingest a log directory's new lines into a store; the new events."""
    return LogFollower(logdir, tz=tz, store=store).refresh().events


def _first_ingest(logdir: Path, store: Path, tz: str) -> None:
    """Ingest a log directory into a new store (:meth:`LiveEvents._run` may run it in a child)."""
    ingest(logdir, store, tz=tz, progress=False)


def _materialize_store(store: Path, main_agents: frozenset[str] | None) -> None:
    """Bring a store's tables up to date as ``a2a-lab ingest`` does, but for the matched
    tables: matching at every update would delay the next (serve answers work sessions and
    events only); the next ``a2a-lab ingest`` or a query of them makes them."""
    from a2a_lab.materialize import materialize

    materialize(store, main_agents=main_agents, matched=False)


@dataclass(frozen=True)
class BodyJob:
    """A body to make: its cache key, the snapshot and clock it is made at, and how."""

    key: Any
    snap: Snapshot
    now_ms: float | None
    archive_window_ms: float
    compute: Callable[[Snapshot], tuple[bytes | Body, pl.Series | None]]

    @property
    def t0(self) -> float:
        """The clock the body was made at (0: it does not depend on the clock)."""
        return self.now_ms if self.now_ms is not None else 0.0

    def valid_until(self, candidates: pl.Series | None) -> float:
        """The clock until which the body holds (see :meth:`LiveEvents.cached`)."""
        if self.now_ms is None:
            return float("inf")
        # the first event time at or after now - window: at that time + window (and just
        # after) a session may turn ARCHIVED
        times = self.snap.times if candidates is None else candidates.drop_nulls().sort()
        index = times.search_sorted(self.now_ms - self.archive_window_ms, side="left")
        if index < times.len():
            return float(times[index]) + self.archive_window_ms
        return float("inf")


@dataclass
class LiveEvents:
    """A source's enriched events, refreshed on demand, with a small cache of bodies.

    Parameters
    ----------
    source
        A log directory, a log file, or a history store (see :func:`a2a_lab.io.ingest`).
    store
        A store to follow a log directory ``source`` into (made by a first ingest if it is
        not one yet); None: a store ``source`` is its own, a log is held in memory.
    tz
        Zone of ISO timestamps without an offset (a store: its own zone when None).
    main_agents
        As for :func:`a2a_lab.enrich` (None: the rule set's default).
    cache_size
        How many response bodies to keep (least recently used dropped first).
    tail_rows, tail_s
        From a store: the store's tables are brought up to date once this many events
        were ingested since they were, or this many seconds after the first of them (each
        refresh answers from the tables and the events since, held in memory).
    in_child
        Run the ingests of the log's new lines and the updates of the store's tables in a
        worker process (``a2a-lab serve`` does: the server's own peak memory stays that of
        serving), and ingest only when a file of the log directory changed.
    texts, sessions
        The event object and session texts kept for the work-session bodies.
    """

    source: Path
    store: Path | None = None
    tz: str | None = None
    main_agents: frozenset[str] | None = None
    cache_size: int = 64
    tail_rows: int = 100_000
    tail_s: float = 900.0
    in_child: bool = False
    #: The worker process's highest peak resident memory (MB) seen after a task.
    worker_peak_mb: float = field(default=0.0, init=False)
    texts: EventTexts = field(default_factory=EventTexts, repr=False)
    sessions: SessionTexts = field(default_factory=SessionTexts, repr=False)
    _follower: LogFollower = field(init=False, repr=False)
    _snapshot: Snapshot = field(init=False, repr=False)
    # re-entrant: a reload from inside refresh() refreshes a store source once more
    _refresh_lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _cache_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _cache: OrderedDict[Any, tuple[float, float, Body]] = field(
        default_factory=OrderedDict, repr=False
    )
    _computing: dict[Any, threading.Lock] = field(default_factory=dict, repr=False)
    # per key (any snapshot): the newest body's snapshot version, clock validity (ms), the
    # time it was begun, and the body; and when each replaced snapshot was replaced
    _latest: OrderedDict[Any, tuple[int, float, float, Body]] = field(
        default_factory=OrderedDict, repr=False
    )
    _replaced: dict[int, float] = field(default_factory=dict, repr=False)
    _background: set[Any] = field(default_factory=set, repr=False)
    _listing: set[str] = field(default_factory=set, repr=False)
    _tail_since: float = field(default=0.0, repr=False)
    _worker: ProcessPoolExecutor | None = field(default=None, init=False, repr=False)
    _stamp: tuple[Any, ...] = field(default=(), init=False, repr=False)
    _checked: float = field(default=0.0, init=False, repr=False)
    # the queries asked for lately: how to make each one's job, and when it was last asked
    _watched: OrderedDict[Any, tuple[Callable[[], BodyJob], float]] = field(
        default_factory=OrderedDict, repr=False
    )
    #: the snapshot version :meth:`prefetch` last began its bodies on (0: never)
    prefetched_version: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.source = Path(self.source).expanduser()
        if self.store is not None:
            self.store = Path(self.store).expanduser()
        elif is_store(self.source):
            self.store = self.source
        self._snapshot = Snapshot(pl.DataFrame(), [], 0, pl.Series("event_ms", [], pl.Float64))
        self._reload()

    @property
    def is_store(self) -> bool:
        """Whether the server answers from a history store (refreshes ingest into it)."""
        return self.store is not None

    @property
    def snapshot(self) -> Snapshot:
        """The current events (an immutable value: a request keeps the one it started with)."""
        return self._snapshot

    def _reload(self) -> None:
        """Read the whole source again (first start, or a file the server has not seen)."""
        if self.store is not None:
            self._start_store(self.store)
            return
        self._follower = LogFollower(self.source, tz=self.tz or "UTC")
        self._listing = self._current_files()
        self._install(self._enriched(self._follower.refresh().events), replace=True)

    def _start_store(self, store: Path) -> None:
        """Follow the log into ``store`` (created by a first ingest of a log directory)."""
        first = None if is_store(store) else self.source
        if first is not None:
            self._run(_first_ingest, first, store, self.tz or "UTC")
        snap = open_store(store)
        self._follower = LogFollower(snap.logdir, tz=self.tz or snap.timezone, store=store)
        self._ingest_new()  # lines written since the last ingest
        self._listing = self._current_files()
        self._materialize()
        view = open_view(store, main_agents=self.main_agents, tz=self.tz)
        if view is None:
            raise StoreError(
                f"the store {store} cannot answer: its zone is {snap.timezone}, not {self.tz}, "
                "or its tables could not be brought up to date (an ingest holds it?)"
            )
        self._install_view(view, clear=True)

    def _enriched(self, events: pl.DataFrame) -> pl.DataFrame:
        return _narrow(enrich(events, main_agents=self.main_agents))

    def _install(self, enriched: pl.DataFrame, *, replace: bool) -> None:
        old = self._snapshot
        if replace:
            self.texts.clear()
            self.sessions.clear()
        events = enriched if replace or old.events.width == 0 else pl.concat([old.events, enriched])
        files = _file_order(set(events.get_column("file").unique().drop_nulls().to_list()))
        times = events.get_column("event_ms").drop_nulls().sort()
        # appended rows stay chunks of their own (a rechunk copies every row, raw lines
        # included, at each refresh: seconds at 860,000 events); merged now and then
        if replace or events.n_chunks() > MAX_CHUNKS:
            events = events.rechunk()
        self._publish(Snapshot(events, files, old.version + 1, times))

    def _install_view(self, view: StoredView, *, clear: bool) -> None:
        if clear:  # the files were renamed: a kept text's (file, line) may be another line
            self.texts.clear()
            self.sessions.clear()
        version = self._snapshot.version + 1
        self._publish(Snapshot(pl.DataFrame(), view.files, version, view.last_times(), view))

    def _publish(self, snapshot: Snapshot) -> None:
        old = self._snapshot
        self._snapshot = snapshot
        self._replaced[old.version] = time.monotonic()
        if len(self._replaced) > 4 * self.cache_size:
            for version in sorted(self._replaced)[: len(self._replaced) // 2]:
                del self._replaced[version]
        with self._cache_lock:
            self._cache.clear()

    def refresh(self) -> int:
        """Read what was appended since the last refresh; returns how many events arrived."""
        with self._refresh_lock:
            if self.store is not None:
                return self._refresh_store(self.store)
            new = self._follower.refresh().events
            held = set(self._snapshot.files)
            # the source's files changed (the live file was rotated: its rows would keep the
            # old name) or lines came from a file not seen: read everything again
            listing = self._current_files()
            changed = listing != self._listing
            if new.height == 0 and not changed:
                return 0
            if changed or (held and not set(new.get_column("file").unique().drop_nulls()) <= held):
                self._reload()
            else:
                self._install(self._enriched(new), replace=False)
            return new.height

    def _refresh_store(self, store: Path) -> int:
        """Ingest the new lines and answer from the tables and those lines at once.

        The new lines are enriched here and held as the view's tail, and the sessions
        they touch are made again from their events (:func:`with_tail`): visible within a
        refresh. The store's tables are brought up to date (:meth:`_materialize`, which
        holds the store's lock: the next ingest waits for it) when the tail reaches
        :attr:`tail_rows` events or :attr:`tail_s` seconds, when the files were renamed
        (a rotation), or when the store holds events the server has not read (an ingest
        from cron); the view then starts again from the tables, with an empty tail.
        """
        if not self._log_changed():
            return 0
        new = self._ingest_new()
        current = self._snapshot.view
        assert current is not None
        try:
            snap = open_store(store)
        except StoreError:
            return 0  # an ingest is committing: the next refresh decides
        listing = set(snap.files().get_column("file").to_list())
        changed = listing != self._listing
        outside = snap.events != current.events + new.height
        due = current.tail.height + new.height >= self.tail_rows or (
            current.tail.height > 0 and time.monotonic() - self._tail_since >= self.tail_s
        )
        if changed or outside or due:
            self._materialize()
            view = open_view(store, main_agents=self.main_agents, tz=self.tz)
            if view is None:  # not materialised this time (busy): the next refresh tries again
                return 0
            self._listing = listing
            self._install_view(view, clear=changed)
            return max(view.events - current.events, 1)
        if new.height == 0:
            return 0
        if current.tail.height == 0:
            self._tail_since = time.monotonic()
        self._install_view(with_tail(current, self._enriched(new), snap.files()), clear=False)
        return new.height

    def current_view(self) -> StoredView | None:
        """The store's view as committed now (None: no store, or its tables are behind)."""
        if self.store is None:
            return None
        return open_view(self.store, main_agents=self.main_agents, tz=self.tz)

    def _current_files(self) -> set[str]:
        """The files a fresh read of the source would name (as the ``file`` column does)."""
        from a2a_lab.io import SourceError, resolve_source

        try:
            if self.store is not None:
                return set(open_store(self.store).files()["file"].to_list())
            return {str(path) for path in resolve_source(self.source)}
        except (SourceError, StoreError, OSError):
            # the source is briefly unreadable (a rotation in progress): no decision now
            return self._listing

    def _materialize(self) -> None:
        """Keep the store's materialised tables current, as ``a2a-lab ingest`` does."""
        assert self.store is not None
        try:
            self._run(_materialize_store, self.store, self.main_agents)
        except StoreError as exc:  # an ingest from cron holds the store: it materialises too
            print(f"a2a-lab serve: not materialised this time: {exc}", file=sys.stderr)

    def _ingest_new(self) -> pl.DataFrame:
        """Ingest the log's new lines into the store; the new events (in the worker with
        :attr:`in_child`: an ingest that compacts the store's parts reads and rewrites
        them, memory the server would keep)."""
        follower = self._follower
        assert follower.store is not None
        if not self.in_child:
            return follower.refresh().events
        events: pl.DataFrame = self._run(_ingest_events, follower.path, follower.store, follower.tz)
        return events

    def _log_changed(self) -> bool:
        """Whether a file of the log directory changed (name, size, time or inode) since the
        last call; True at least every :data:`FULL_CHECK_S` seconds (and without a worker:
        the follower's own refresh is cheap enough), so a cron ingest is seen too."""
        if not self.in_child:
            return True
        try:
            stamp = tuple(
                sorted(
                    (entry.name, st.st_size, st.st_mtime_ns, st.st_ino)
                    for entry in os.scandir(self._follower.path)
                    for st in [entry.stat()]
                )
            )
        except OSError:
            stamp = ()
        moment = time.monotonic()
        if stamp == self._stamp and moment - self._checked < FULL_CHECK_S:
            return False
        self._stamp, self._checked = stamp, moment
        return True

    def _run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)``, in the worker process with :attr:`in_child` (its exceptions
        raised here): the memory an ingest or an update of the tables takes for a while
        stays in the worker, which is replaced when its peak passed
        :data:`WORKER_RECYCLE_MB` (its memory then goes back to the system)."""
        if not self.in_child:
            return work(*args)
        if self._worker is None:
            context = multiprocessing.get_context("spawn")  # no fork of a threaded server
            self._worker = ProcessPoolExecutor(
                max_workers=1,
                mp_context=context,
                initializer=_end_with_parent,
                initargs=(os.getpid(),),
            )
        result, peak_mb = self._worker.submit(_measured, work, *args).result()
        self.worker_peak_mb = max(self.worker_peak_mb, peak_mb)
        if peak_mb > WORKER_RECYCLE_MB:
            self._worker.shutdown()
            self._worker = None
        return result

    def close(self) -> None:
        """Stop the worker process, if any."""
        if self._worker is not None:
            self._worker.shutdown()
            self._worker = None

    def cached(
        self,
        key: Any,
        now_ms: float | None,
        archive_window_ms: float,
        compute: Callable[[Snapshot], tuple[bytes | Body, pl.Series | None]],
        *,
        max_stale_s: float = 0.0,
    ) -> Body:
        """The body for ``key`` at ``now_ms``, computed once per snapshot while valid.

        A work-session body depends on the clock only through which sessions are ARCHIVED
        (``now − last > window``), and every session's last time is an event time. A body
        computed at ``t0`` therefore holds at ``t1 ≥ t0`` unless an event time lies in
        ``[t0 − window, t1 − window)``; the cache checks exactly that, so a cached body is
        never stale. ``compute`` may narrow the event times to the only ones that can
        matter (the sessions' last times, when no session is filtered out by its status);
        None: every event time. ``now_ms=None``: the body does not depend on the clock.

        With ``max_stale_s`` > 0, when the body no longer holds (new lines, or the clock
        crossed an archive time) but the last body made for ``key`` stopped being current at
        most that many seconds ago (its snapshot was replaced, or the clock passed its
        validity, that long ago), that body is returned at once and the new one is made in the
        background (one at a time per key): a client then sees the log as it was at most
        ``max_stale_s`` ago, instead of waiting for the new body. 0: never (always current).
        """
        job = BodyJob(key, self._snapshot, now_ms, archive_window_ms, compute)
        body = self.ready(job, max_stale_s=max_stale_s)
        return body if body is not None else self._compute(job)

    def job(
        self,
        key: Any,
        now_ms: float | None,
        archive_window_ms: float,
        compute: Callable[[Snapshot], tuple[bytes | Body, pl.Series | None]],
    ) -> BodyJob:
        """The making of ``key``'s body on the current snapshot (see :meth:`cached`)."""
        return BodyJob(key, self._snapshot, now_ms, archive_window_ms, compute)

    def ready(self, job: BodyJob, *, max_stale_s: float = 0.0) -> Body | None:
        """:meth:`cached`'s body if it needs no computing by the caller, else None.

        Never blocks on a computation (a stale body's successor is begun in a background
        thread): the server answers from its event loop when this returns a body, and
        computes in a worker thread (:meth:`compute`) only when it does not.
        """
        body = self._lookup((job.snap.version, job.key), job.now_ms)
        if body is not None or max_stale_s <= 0:
            return body
        with self._cache_lock:
            last = self._latest.get(job.key)
            fresh_enough = last is not None and self._stale_s(last, job.now_ms) <= max_stale_s
            start = fresh_enough and job.key not in self._background
            if start:
                self._background.add(job.key)
        if not fresh_enough:
            return None
        assert last is not None
        if start:
            threading.Thread(
                target=self._compute_later, args=(job,), name="a2a-lab-serve-body", daemon=True
            ).start()
        return last[3]

    def watch(self, key: Any, make_job: Callable[[], BodyJob]) -> None:
        """Note that ``key`` was just asked for (:meth:`prefetch` makes its next body)."""
        with self._cache_lock:
            self._watched[key] = (make_job, time.monotonic())
            self._watched.move_to_end(key)
            while len(self._watched) > WATCHED_KEYS:
                self._watched.popitem(last=False)

    def prefetch(self, within_s: float = 60.0) -> int:
        """Begin the bodies of the queries asked for in the last ``within_s`` seconds on the
        current snapshot, each in a background thread; returns how many were begun.

        Called after a refresh brought new lines: a dashboard that asks every few seconds
        then gets the new page at its next request, instead of the previous page while its
        request begins the new one (which it would see one request later).
        """
        moment = time.monotonic()
        with self._cache_lock:
            makers = [make for make, asked in self._watched.values() if moment - asked <= within_s]
        jobs = [make() for make in makers]
        begun = []
        with self._cache_lock:
            self.prefetched_version = max(
                (job.snap.version for job in jobs), default=self.prefetched_version
            )
            for job in jobs:
                full_key = (job.snap.version, job.key)
                if job.key in self._background or full_key in self._cache:
                    continue
                self._background.add(job.key)
                begun.append(job)
        for job in begun:
            threading.Thread(
                target=self._compute_later, args=(job,), name="a2a-lab-serve-body", daemon=True
            ).start()
        return len(begun)

    def compute(self, job: BodyJob) -> Body:
        """The body of ``job``, made now unless cached (others asking meanwhile wait)."""
        return self._compute(job)

    def _stale_s(self, last: tuple[int, float, float, Body], now_ms: float | None) -> float:
        """Seconds since a body stopped being current: its snapshot replaced by a newer
        one, or the clock past the time a session of it may have turned ARCHIVED."""
        version, valid_until, _, _ = last
        age = 0.0
        replaced = self._replaced.get(version)
        if version != self._snapshot.version:
            # a version no longer recorded was replaced long ago: too old
            age = time.monotonic() - replaced if replaced is not None else float("inf")
        if now_ms is not None and now_ms >= valid_until:
            age = max(age, (now_ms - valid_until) / 1000.0)
        return age

    def _compute_later(self, job: BodyJob) -> None:
        """:meth:`_compute` in a background thread (a failure is logged, not raised)."""
        try:
            self._compute(job)
        except Exception as exc:  # the stale body stays; the next request tries again
            print(f"a2a-lab serve: body failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            with self._cache_lock:
                self._background.discard(job.key)

    def _compute(self, job: BodyJob) -> Body:
        """Make the body of ``job`` (once: others asking meanwhile wait) and cache it."""
        full_key = (job.snap.version, job.key)
        # one computation per key at a time: clients asking the same thing while it is
        # computed wait for it instead of computing it again each (8 clients, 2 cores)
        with self._cache_lock:
            gate = self._computing.setdefault(full_key, threading.Lock())
        with gate:
            try:
                body = self._lookup(full_key, job.now_ms)
                if body is not None:
                    return body
                made = time.monotonic()
                with COLLECTOR_PAUSED:
                    data, candidates = job.compute(job.snap)
                body = data if isinstance(data, Body) else Body(data)
                if body.size >= PRE_GZIP_BYTES:
                    body.gzipped()  # made now, not by the first client that asks
            except BaseException:
                with self._cache_lock:
                    self._computing.pop(full_key, None)
                raise
            valid_until = job.valid_until(candidates)
            with self._cache_lock:
                self._cache[full_key] = (job.t0, valid_until, body)
                self._cache.move_to_end(full_key)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
                self._computing.pop(full_key, None)
                last = self._latest.get(job.key)
                if last is None or last[2] <= made:
                    self._latest[job.key] = (job.snap.version, valid_until, made, body)
                    self._latest.move_to_end(job.key)
                    while len(self._latest) > self.cache_size:
                        self._latest.popitem(last=False)
        return body

    def _lookup(self, full_key: Any, now_ms: float | None) -> Body | None:
        """The cached body of ``full_key`` if it holds at ``now_ms``."""
        with self._cache_lock:
            hit = self._cache.get(full_key)
            if hit is None:
                return None
            t0, valid_until, body = hit
            if now_ms is None or t0 <= now_ms < valid_until:
                self._cache.move_to_end(full_key)
                return body
            return None
