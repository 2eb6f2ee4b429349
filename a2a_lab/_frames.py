"""Small frame helpers shared by the analytics modules."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

import polars as pl

from a2a_lab.reference.jsstr import js_string_expr

P = ParamSpec("P")
R = TypeVar("R")

_D = pl.col("data")


def narrow(
    events: pl.DataFrame | pl.LazyFrame,
    where: pl.Expr,
    data_fields: Sequence[str],
    columns: Sequence[str] = ("file", "line", "type", "event_ms", "event_time"),
) -> pl.DataFrame:
    """The rows matching ``where`` with only ``columns`` and a ``data`` struct cut down to
    ``data_fields``, plus ``_seq`` (the row's position in ``events``).

    Filtering a lazy plan would gather every field of the 63-field ``data`` struct (and the
    raw line) for the kept rows before projecting; selecting first and then filtering
    touches only what the caller reads. A LazyFrame is selected lazily (the projection
    reaches a Parquet scan: only these columns and fields are read) and collected once.
    """
    names = events.collect_schema().names()
    present = [c for c in columns if c in names]
    frame: pl.DataFrame | pl.LazyFrame
    if isinstance(events, pl.LazyFrame):
        # a frame narrowed before (it has ``_seq``) is numbered again: positions in ``events``
        frame = events.drop("_seq", strict=False).with_row_index("_seq")
        seq = pl.col("_seq").cast(pl.UInt32)
    else:
        frame, seq = events, pl.int_range(pl.len(), dtype=pl.UInt32).alias("_seq")
    narrowed = frame.select(
        seq,
        *present,
        where.alias("_keep"),
        *[_D.struct.field(f).alias("_d_" + f) for f in data_fields],
    )
    kept = narrowed.filter(pl.col("_keep")).select(
        pl.exclude("_keep", "^_d_.*$"),
        pl.struct([pl.col("_d_" + f).alias(f) for f in data_fields]).alias("data"),
    )
    out = kept.collect() if isinstance(kept, pl.LazyFrame) else kept
    # an enriched frame's columns are split at different rows (enrich adds columns built
    # whole); filtered, some come out with empty chunks, and Polars' ``pl.format`` panics on
    # such misaligned chunks ("assertion failed: i < self.len()", js-date-max-depth.ndjson).
    # The kept rows are few: one chunk each costs little.
    return out.rechunk() if len(set(out.n_chunks("all"))) > 1 else out


def data_text(field: str) -> pl.Expr:
    """A string field of ``data`` as the reference's ``asString`` (rules §1): the JS-trimmed
    string, null when absent, not a string or blank.

    >>> ev = pl.DataFrame({"data": [{"m": " hi "}, {"m": "  "}]})
    >>> ev.select(data_text("m")).to_series().to_list()
    ['hi', None]
    """
    return js_string_expr(_D.struct.field(field))


def number(value: object) -> float:
    """A numeric Polars scalar (``Series.max()``, ``DataFrame.item()``, a row value) as a float.

    Polars types these results as any Python literal; this narrows them once, loudly.

    >>> number(pl.Series([1, 3]).max())
    3.0
    """
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"expected a number, got {value!r}")


def ms_to_time(ms: pl.Expr) -> pl.Expr:
    """Epoch milliseconds as a UTC ``Datetime("ms")``, as the event frame's ``event_time``.

    Fractions of a millisecond are cut; a value that is no instant of JavaScript's ``Date``
    (non-finite, beyond ±8.64e15 ms, as ``event_time`` has it) is null: a time of -2**63
    would otherwise become the Int64 minimum, which no formatter can show.
    """
    return (
        pl.when(ms.is_between(-_MAX_TIME_MS, _MAX_TIME_MS))  # not abs(): Int64 min overflows
        .then(ms)
        .cast(pl.Int64, strict=False)
        .cast(pl.Datetime("ms"))
        .dt.replace_time_zone("UTC")
    )


#: JavaScript's time range (ECMAScript TimeClip), as :data:`a2a_lab.io._timestamps.MAX_TIME_MS`.
_MAX_TIME_MS = 8_640_000_000_000_000


def ms_to_seconds(ms: pl.Expr) -> pl.Expr:
    """A duration in milliseconds as float seconds (the ``*_s`` columns), divided as
    JavaScript's ``ms / 1000`` does: correctly rounded.

    Polars divides an array by a scalar as a multiplication by the reciprocal (one ulp off:
    15745 ms became 15.745000000000001 s), but not a chunk of one value, so the digits
    depended on how a frame happened to be chunked; numpy's division is exact.

    >>> pl.DataFrame({"ms": [15745.0, None]}).select(ms_to_seconds(pl.col("ms"))).to_series().to_list()
    [15.745, None]
    """
    return ms.cast(pl.Float64).map_batches(_exact_seconds, return_dtype=pl.Float64)


def _exact_seconds(ms: pl.Series) -> pl.Series:
    seconds = pl.Series(ms.name, ms.to_numpy() / 1000.0, dtype=pl.Float64)
    # to_numpy makes a null NaN: put the nulls back
    return seconds if not ms.has_nulls() else seconds.zip_with(ms.is_not_null(), ms)


def same_kind(*, collect: bool = False) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a public function return the frame kind it was given (lazy in → lazy out).

    Parameters
    ----------
    collect
        Collect a lazy first argument before the call: for functions whose work needs
        the whole frame in memory (a replay, a graph). The result is made lazy again, so
        the caller's plan still composes; docs/api.md lists these steps.
    """

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            first = args[0] if args else None
            lazy = isinstance(first, pl.LazyFrame)
            if collect and isinstance(first, pl.LazyFrame):
                # P.args cannot be re-bound to a tuple as far as mypy knows: the call is unchanged
                args = (first.collect(), *args[1:])  # type: ignore[assignment]
            out = fn(*args, **kwargs)
            if lazy and isinstance(out, pl.DataFrame):
                return out.lazy()  # type: ignore[return-value]
            if isinstance(first, pl.DataFrame) and isinstance(out, pl.LazyFrame):
                return out.collect()  # type: ignore[return-value]
            return out

        return call

    return wrap


def text_format(template: str, *args: pl.Expr | str) -> pl.Expr:
    """``pl.format(template, *args)`` built from :func:`polars.concat_str`: the same text
    (each ``{}`` replaced by the next argument cast to a string; null if any argument is).

    Why not ``pl.format``: in Polars 2.1 it panics ("assertion failed: i < self.len()") in
    the streaming engine on a string column of several chunks after a filter, e.g. the
    ``clock.future_ts`` finding of a log read in chunks; ``concat_str`` does not.

    Examples
    --------
    >>> df = pl.DataFrame({"a": ["x", None], "b": [1.5, 2.0]})
    >>> df.select(text_format("{} at {} s", "a", pl.col("b"))).to_series().to_list()
    ['x at 1.5 s', None]
    """
    pieces = template.split("{}")
    if len(pieces) != len(args) + 1:
        raise ValueError(f"text_format: {len(pieces) - 1} placeholders, {len(args)} arguments")
    exprs: list[pl.Expr] = []
    for i, piece in enumerate(pieces):
        if piece:
            exprs.append(pl.lit(piece, pl.String))
        if i < len(args):
            arg = args[i]
            exprs.append(pl.col(arg) if isinstance(arg, str) else arg)
    return pl.concat_str(exprs) if exprs else pl.lit("", pl.String)
