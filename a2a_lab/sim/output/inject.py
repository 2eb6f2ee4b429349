"""What a recorded log holds and the simulator does not write, added to its written lines.

The simulator writes the current runtime's events, one clean JSON line each, in time order
(:func:`a2a_lab.io.write_events`). A log from a real gateway also holds the older runtime's
wording, lines the loader must reject or count (rules §10) and timestamps in the other
fields rules §2 reads. Each function here takes such lines (a :class:`polars.Series`, one
line each, without its newline) and returns an :class:`Injected`: the new lines and where it
put what. Where a function draws (which lines, which kinds where), the draws come from its
``seed`` argument (an integer or a :class:`numpy.random.SeedSequence`): the same lines and
seed give the same bytes.

Apply :func:`legacy_wording` and :func:`odd_timestamps` before :func:`malformed`, whose
output is bytes (an invalid UTF-8 line is not a string).

Examples
--------
>>> import polars as pl
>>> from a2a_lab.io import write_events
>>> from a2a_lab.sim import simulate
>>> from a2a_lab.sim.workload.presets import sample_like
>>> lines = pl.Series(write_events(simulate(sample_like(n_messages=60), seed=1).events).splitlines())
>>> bad = malformed(lines, ["not_json", "blank", "crlf"], seed=7)
>>> bad.lines.len() - lines.len(), bad.marks["kind"].to_list()
(2, ['blank', 'crlf', 'not_json'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np
import polars as pl

from a2a_lab.reference.runtime.outcome import LEGACY_NO_REPLY_TEXT, NO_REPLY_TEXT

__all__ = [
    "MALFORMED_KINDS",
    "REJECT_REASONS",
    "TIMESTAMP_KINDS",
    "Injected",
    "MalformedKind",
    "TimestampKind",
    "legacy_wording",
    "malformed",
    "odd_timestamps",
]

MalformedKind = Literal[
    "not_json",
    "truncated",
    "non_object",
    "nan",
    "missing_type",
    "blank_type",
    "blank",
    "crlf",
    "invalid_utf8",
]
#: Every kind of :func:`malformed`.
MALFORMED_KINDS: Final[tuple[MalformedKind, ...]] = get_args(MalformedKind)
#: The kinds the loader rejects, with the start of the reason its load report gives (the rest
#: of a ``not JSON`` reason is the parser's message, which depends on where the line breaks).
#: ``blank`` lines are counted, not rejected; ``crlf`` and ``invalid_utf8`` lines stay events.
REJECT_REASONS: Final[Mapping[MalformedKind, str]] = {
    "not_json": "not JSON: ",
    "truncated": "not JSON: ",
    "nan": "not JSON: ",
    "non_object": "not an object: JSON array",
    "missing_type": "no type field",
    "blank_type": "type is blank",
}
TimestampKind = Literal["timestamp_ms", "iso_timestamp", "out_of_order"]
#: Every kind of :func:`odd_timestamps`.
TIMESTAMP_KINDS: Final[tuple[TimestampKind, ...]] = get_args(TimestampKind)

#: Lines a process shares the log with sometimes writes into it (stderr, a supervisor).
_STRAY_LINES: Final = (
    "Error: EPIPE: broken pipe, write",
    "[gateway] restarting after SIGTERM",
    "<<< truncated by logrotate >>>",
)
# The event time written by the simulator: `"ts":<ms>`, the first such field of the line (the
# top-level one, written before `data`; inside a string value a quote is escaped).
_TS: Final = r'"ts":(-?\d+)'
_HANGUL_MESSAGE: Final = r'"message":"(?:[^"\\]|\\.)*?[\x{AC00}-\x{D7A3}]'


@dataclass(frozen=True)
class Injected:
    """Lines after an injection, and what was injected where.

    Attributes
    ----------
    lines
        The log's lines, without newlines: ``String``, or ``Binary`` after :func:`malformed`.
    marks
        ``line`` (1-based, in ``lines``) and ``kind`` of every injected or changed line,
        ordered by line.
    """

    lines: pl.Series
    marks: pl.DataFrame


def _marks(lines: Sequence[int] | np.ndarray, kinds: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"line": np.asarray(lines, dtype=np.int64) + 1, "kind": list(kinds)},
        schema={"line": pl.Int64, "kind": pl.String},
    ).sort("line")


def _event_ms(lines: pl.Series) -> pl.Series:
    return lines.str.extract(_TS, 1).cast(pl.Int64)


def legacy_wording(lines: pl.Series, until_ms: int) -> Injected:
    """Rewrite the events before ``until_ms`` as the older runtime wrote them.

    The older runtime called an exchange without reply ``outcome: "blocked"`` with the text
    ``[outcome] blocked: 응답을 받지 못했습니다 (…)`` (the reason in parentheses unchanged), and
    its spawn results said ``status: "ok"`` where today's say ``"accepted"``. Nothing is
    drawn.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them (with a numeric ``ts``).
    until_ms
        Epoch ms at which the current runtime took over.

    Examples
    --------
    >>> line = '{"type":"a2a.response","agentId":"a","ts":5,"data":{"message":"[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다","outcome":"no_reply"}}'
    >>> out = legacy_wording(pl.Series([line, line.replace('"ts":5', '"ts":9')]), until_ms=9)
    >>> out.lines[0]
    '{"type":"a2a.response","agentId":"a","ts":5,"data":{"message":"[outcome] blocked: 응답을 받지 못했습니다","outcome":"blocked"}}'
    >>> out.lines[1] == line.replace('"ts":5', '"ts":9'), out.marks.rows()
    (True, [(1, 'legacy_no_reply')])
    """
    frame = pl.DataFrame({"line": lines.cast(pl.String)}).with_columns(
        before=pl.col("line").str.extract(_TS, 1).cast(pl.Int64) < until_ms,
        spawn=pl.col("line").str.starts_with('{"type":"a2a.spawn_result"'),
    )
    no_reply = pl.col("before") & pl.col("line").str.contains('"outcome":"no_reply"', literal=True)
    spawn_ok = (
        pl.col("before")
        & pl.col("spawn")
        & pl.col("line").str.contains('"status":"accepted"', literal=True)
    )
    frame = frame.with_columns(
        kind=pl.when(no_reply)
        .then(pl.lit("legacy_no_reply"))
        .when(spawn_ok)
        .then(pl.lit("legacy_spawn_ok"))
    ).with_columns(
        line=pl.when(no_reply)
        .then(
            pl.col("line")
            .str.replace('"outcome":"no_reply"', '"outcome":"blocked"', literal=True)
            .str.replace_all(NO_REPLY_TEXT, LEGACY_NO_REPLY_TEXT, literal=True)
        )
        .when(spawn_ok)
        .then(pl.col("line").str.replace('"status":"accepted"', '"status":"ok"', literal=True))
        .otherwise(pl.col("line"))
    )
    changed = frame.with_row_index("index").filter(pl.col("kind").is_not_null())
    return Injected(
        frame["line"].alias(lines.name),
        _marks(changed["index"].to_numpy(), changed["kind"].to_list()),
    )


def _iso(ms: pl.Expr) -> pl.Expr:
    """JavaScript ``new Date(ms).toISOString()``."""
    return ms.cast(pl.Datetime("ms")).dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")


def odd_timestamps(
    lines: pl.Series, counts: Mapping[TimestampKind, int], seed: int | np.random.SeedSequence
) -> Injected:
    """Give some events their time in the other fields rules §2 reads, or out of order.

    ``timestamp_ms`` renames ``ts`` to ``timestampMs`` and ``iso_timestamp`` replaces it by an
    ISO ``timestamp`` (``toISOString()``, milliseconds and ``Z``): the event time stays what it
    was, read by the rule's first and last choice. ``out_of_order`` swaps an event with the
    next one of a later time, as two writers racing for the file do (the mark is on the
    event that now follows a later one). Lines are drawn without
    replacement.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them (with a numeric ``ts``).
    counts
        How many lines of each kind.
    seed
        Seed of the draws.

    Examples
    --------
    >>> lines = pl.Series([f'{{"type":"x","agentId":"a","ts":{t},"data":{{}}}}' for t in (1000, 2000, 3000)])
    >>> out = odd_timestamps(lines, {"timestamp_ms": 1, "iso_timestamp": 1}, seed=2)
    >>> out.lines.to_list()
    ['{"type":"x","agentId":"a","timestamp":"1970-01-01T00:00:01.000Z","data":{}}', '{"type":"x","agentId":"a","ts":2000,"data":{}}', '{"type":"x","agentId":"a","timestampMs":3000,"data":{}}']
    >>> out.marks.rows()
    [(1, 'iso_timestamp'), (3, 'timestamp_ms')]
    """
    for kind in counts:
        if kind not in TIMESTAMP_KINDS:
            raise ValueError(f"counts: unknown kind {kind!r} (one of {', '.join(TIMESTAMP_KINDS)})")
    rng = np.random.default_rng(seed)
    ms = _event_ms(lines)
    has_ts = ms.is_not_null().to_numpy()
    # an event can move forward only if the next line is an event of a later time
    swappable = np.zeros(len(lines), dtype=bool)
    if len(lines) > 1:
        values = ms.to_numpy()
        swappable[:-1] = has_ts[:-1] & has_ts[1:] & (values[1:] > values[:-1])
    taken = np.zeros(len(lines), dtype=bool)
    chosen: dict[str, np.ndarray] = {}
    for kind in TIMESTAMP_KINDS:
        n = counts.get(kind, 0)
        if n < 0:
            raise ValueError(f"counts.{kind}: must be at least 0")
        ok = (swappable if kind == "out_of_order" else has_ts) & ~taken
        if kind == "out_of_order":
            # a swap moves two lines: the next one must be free too
            ok[:-1] &= ~taken[1:]
            # one by one, so that no two swaps share a line
            drawn: list[int] = []
            for _ in range(n):
                left = np.flatnonzero(ok)
                if left.size == 0:
                    raise ValueError(f"counts.{kind}: {n} lines asked, {len(drawn)} available")
                p = int(left[rng.integers(left.size)])
                drawn.append(p)
                ok[max(p - 1, 0) : p + 2] = False
            picks = np.sort(np.asarray(drawn, dtype=np.int64))
            taken[picks + 1] = True
        else:
            candidates = np.flatnonzero(ok)
            if n > candidates.size:
                raise ValueError(f"counts.{kind}: {n} lines asked, {candidates.size} available")
            picks = np.sort(rng.choice(candidates, size=n, replace=False))
        taken[picks] = True
        chosen[kind] = picks
    kinds = np.full(len(lines), "", dtype=object)
    for name, picks in chosen.items():
        kinds[picks] = name
    frame = pl.DataFrame(
        {"line": lines.cast(pl.String), "kind": pl.Series(kinds, dtype=pl.String), "ms": ms}
    )
    frame = frame.with_columns(
        line=pl.when(pl.col("kind") == "timestamp_ms")
        .then(pl.col("line").str.replace(_TS, '"timestampMs":$1'))
        .when(pl.col("kind") == "iso_timestamp")
        .then(
            pl.col("line").str.replace(
                _TS, pl.concat_str(pl.lit('"timestamp":"'), _iso(pl.col("ms")), pl.lit('"'))
            )
        )
        .otherwise(pl.col("line"))
    )
    order = np.arange(len(lines))
    swaps = chosen.get("out_of_order", np.empty(0, np.int64))
    order[swaps], order[swaps + 1] = swaps + 1, swaps
    out = frame[order]
    marked = np.flatnonzero(out["kind"].to_numpy() != "")
    return Injected(
        out["line"].alias(lines.name), _marks(marked, out["kind"].gather(marked).to_list())
    )


def _malformed_line(kind: MalformedKind, line: bytes, rng: np.random.Generator) -> bytes:
    """The line inserted before ``line`` (an event) for an inserting kind."""
    if kind == "not_json":
        return _STRAY_LINES[int(rng.integers(len(_STRAY_LINES)))].encode()
    if kind == "non_object":
        return b"[1,2,3]"
    if kind == "missing_type":
        return b"{" + line[line.index(b",") + 1 :]
    if kind == "blank_type":
        return b'{"type":"  "' + line[line.index(b",") :]
    if kind == "nan":
        start = line.index(b'"ts":') + 5
        end = start + len(line[start:]) - len(line[start:].lstrip(b"-0123456789"))
        return line[:start] + b"NaN" + line[end:]
    if kind == "truncated":
        # a torn write: the process died three fifths into the line (cut at a character)
        return line[: len(line) * 3 // 5].decode("utf-8", errors="ignore").encode()
    return b""


def _cut_hangul(line: bytes) -> bytes:
    """The line with the first Hangul syllable of its message cut to 2 of its 3 UTF-8 bytes."""
    start = line.index(b'"message":"')
    for i in range(start, len(line)):
        if 0xEA <= line[i] <= 0xED:
            return line[: i + 2] + line[i + 3 :]
    raise ValueError("no Hangul syllable in the message")


def _positions(
    text: pl.Series, kinds: Sequence[MalformedKind], rng: np.random.Generator
) -> np.ndarray:
    """A distinct event line for each of ``kinds``, drawn among the lines it can take."""
    eligible = {
        "nan": text.str.contains(_TS).to_numpy(),
        "invalid_utf8": text.str.contains(_HANGUL_MESSAGE).to_numpy(),
        "missing_type": text.str.starts_with('{"type":').to_numpy(),
    }
    eligible["blank_type"] = eligible["missing_type"]
    anywhere = np.ones(len(text), dtype=bool)
    taken = np.zeros(len(text), dtype=bool)
    # the kinds that need particular lines draw first, so the others cannot use them up
    order = sorted(range(len(kinds)), key=lambda i: (kinds[i] not in eligible, i))
    position = np.empty(len(kinds), dtype=np.int64)
    for i in order:
        kind = kinds[i]
        candidates = np.flatnonzero(eligible.get(kind, anywhere) & ~taken)
        if candidates.size == 0:
            raise ValueError(
                f"kinds: no line left for {kind!r} ({len(kinds)} lines asked of {len(text)})"
            )
        position[i] = candidates[rng.integers(candidates.size)]
        taken[position[i]] = True
    return position


def _mark_changed(
    frame: pl.DataFrame, changed_at: list[int], kinds: Sequence[MalformedKind]
) -> pl.DataFrame:
    """``frame`` (``key`` order) with the kind of each changed event line, and its row index."""
    changed_kinds = dict(
        zip(changed_at, (k for k in kinds if k in ("crlf", "invalid_utf8")), strict=True)
    )
    return frame.with_columns(
        kind=pl.col("kind").fill_null(
            pl.col("key").replace_strict(
                {2 * p + 1: k for p, k in changed_kinds.items()},
                default=None,
                return_dtype=pl.String,
            )
        )
    ).with_row_index("index")


def malformed(
    lines: pl.Series, kinds: Sequence[MalformedKind], seed: int | np.random.SeedSequence
) -> Injected:
    """Add the lines a loader must reject or count, and events written oddly.

    One line per entry of ``kinds``, each at a distinct event line drawn without replacement:

    - inserted BEFORE that event: ``not_json`` (a stray stderr line), ``truncated`` (the
      first three fifths of the event, a torn write), ``non_object`` (``[1,2,3]``), ``nan``
      (a copy of the event with ``"ts":NaN``), ``missing_type`` (a copy without ``type``),
      ``blank_type`` (a copy with ``type`` all blanks), ``blank`` (an empty line);
    - the event itself changed, still an event: ``crlf`` (ends in CR LF), ``invalid_utf8``
      (the first Hangul syllable of its message cut to 2 of its 3 bytes).

    Parameters
    ----------
    lines
        Event lines as :func:`a2a_lab.io.write_events` writes them.
    kinds
        The lines to add, one per entry (a kind may repeat).
    seed
        Seed of the draws.

    Returns
    -------
    Injected
        ``Binary`` lines; ``marks`` gives each injected or changed line.

    Raises
    ------
    ValueError
        On an unknown kind, or more lines asked than there are events to place them at.

    Examples
    --------
    >>> lines = pl.Series(['{"type":"x","agentId":"a","ts":1,"data":{"message":"한국어"}}'] * 3)
    >>> out = malformed(lines, ["nan", "invalid_utf8"], seed=1)
    >>> out.marks.rows()
    [(2, 'nan'), (4, 'invalid_utf8')]
    >>> out.lines[1][30:], out.lines[3][52:]
    (b':NaN,"data":{"message":"\\xed\\x95\\x9c\\xea\\xb5\\xad\\xec\\x96\\xb4"}}', b'\\xed\\x95\\xea\\xb5\\xad\\xec\\x96\\xb4"}}')
    """
    for kind in kinds:
        if kind not in MALFORMED_KINDS:
            raise ValueError(f"kinds: unknown kind {kind!r} (one of {', '.join(MALFORMED_KINDS)})")
    rng = np.random.default_rng(seed)
    text = lines.cast(pl.String)
    position = _positions(text, kinds, rng)
    binary = text.cast(pl.Binary)
    at = [int(p) for p in position]
    originals = binary.gather(at).to_list() if at else []
    inserted_keys: list[int] = []
    inserted: list[bytes] = []
    changed_at: list[int] = []
    changed: list[bytes] = []
    for kind, p, line in zip(kinds, at, originals, strict=True):
        if kind == "crlf":
            changed_at.append(p)
            changed.append(line + b"\r")
        elif kind == "invalid_utf8":
            changed_at.append(p)
            changed.append(_cut_hangul(line))
        else:
            inserted_keys.append(2 * p)
            inserted.append(_malformed_line(kind, line, rng))
    if changed_at:
        binary = binary.scatter(changed_at, pl.Series(changed, dtype=pl.Binary))
    frame = pl.concat(
        [
            pl.DataFrame(
                {
                    "key": np.arange(len(lines), dtype=np.int64) * 2 + 1,
                    "line": binary,
                    "kind": None,
                },
                schema={"key": pl.Int64, "line": pl.Binary, "kind": pl.String},
            ),
            pl.DataFrame(
                {
                    "key": inserted_keys,
                    "line": inserted,
                    "kind": [k for k in kinds if k not in ("crlf", "invalid_utf8")],
                },
                schema={"key": pl.Int64, "line": pl.Binary, "kind": pl.String},
            ),
        ]
    ).sort("key")
    frame = _mark_changed(frame, changed_at, kinds)
    marked = frame.filter(pl.col("kind").is_not_null())
    return Injected(
        frame["line"].alias(lines.name),
        _marks(marked["index"].to_numpy(), marked["kind"].to_list()),
    )
