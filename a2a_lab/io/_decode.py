"""Decode NDJSON into the event frame, exactly and fast, a bounded chunk at a time.

Design (measured in ``benchmarks/bench_load.py``):

1. A chunk of whole lines (``ChunkDecoder.decode``; the loader reads 8 MB at a time) is
   split on ``\\n`` only and JS-trimmed (rules §10); blank lines are counted. Invalid UTF-8
   becomes U+FFFD, as Node decodes it, and is reported.
2. The FAST path hands the lines that look like JSON objects to Polars' JSON decoder
   (``str.json_decode`` of the lines already split: half the cost of ``read_ndjson`` on
   the chunk's bytes, same decoder) with a LEAN schema: the top-level
   fields and the ``data`` fields nearly every log carries (``_CORE_DATA``); a declared
   field that many lines of a file carry joins the schema for that file. Fields absent from
   the schema are null literals in the frame, which cost no memory.
3. Polars' reader is not strict in the ways the rules need (it turns numbers, booleans,
   arrays and objects into strings, booleans into numbers, keeps the FIRST of duplicate
   keys, skips fields outside the schema), so lines where that could have happened are
   ROUTED to the exact path: a string field written as a non-string in the text, or a count
   of declared keys in the text that differs from the fields decoded (unless the difference
   is explicit nulls and no key repeats). Every line of a block Polars refuses is routed
   too, narrowed down by bisection.
4. The EXACT path (:mod:`a2a_lab.io._exact`) parses with the standard library (strict JSON: NaN and Infinity are
   rejected, the last duplicate key wins, as ``JSON.parse`` does; nesting of any depth) and
   validates each field against the pydantic model; a field of the wrong type becomes null
   and is reported.

Every physical line thus ends up as exactly one event, reject or blank line.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import cache

import polars as pl
from polars.datatypes import DataTypeClass

from a2a_lab.io._exact import (
    _F,
    RAW_PREVIEW,
    _exact,
    event_columns_schema,
    issues_frame,
    parse_line,
    rows_to_events,
    typed_row,
)
from a2a_lab.io._exact import _parse_deep as _parse_deep

# here before: the names of files need no decoder (the store's queries import only _paths)
from a2a_lab.io._paths import file_label as file_label
from a2a_lab.io._paths import label_path as label_path
from a2a_lab.reference.jsstr import JS_WHITESPACE
from a2a_lab.schema import FRAME_COLUMN_NAMES, EventData, data_dtype, raw_event_dtype
from a2a_lab.time import MAX_TIME_MS, EventTime, check_tz

__all__ = [
    "RAW_PREVIEW",
    "ChunkDecoder",
    "DecodedText",
    "decode_chunk",
    "decode_text",
    "event_columns_schema",
    "file_label",
    "issues_frame",
    "label_path",
    "parse_line",
    "rows_to_events",
    "typed_row",
]

#: A block of lines Polars refuses is bisected down to ``_MIN_CHUNK`` lines.
_MIN_CHUNK = 16

# a string Polars may have made of a number or a boolean
_NUMERIC_TEXT = r"^(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false)$"
# ... or of an array or object (re-serialised): such a string starts with a bracket
_NESTED_TEXT = r"^[\[{]"
# Lines the fast path must not see: NaN/Infinity tokens and trailing commas (not JSON, but
# tolerated by Polars' decoder), UTF-16 surrogate escapes (Polars mis-decodes a lone one) and
# keys written with \u escapes (one can spell a declared key the key count cannot see).
_NOT_JSON_HINT = r'(?:NaN|Infinity|,\s*[}\]]|\\u[dD][89a-fA-F]|\\u[0-9a-fA-F]{4}[^"]*"\s*:)'


_KEY_PATTERN = '"(?:' + "|".join(re.escape(k) for k in _F.all_keys) + r')"\s*:'


# ---------------------------------------------------------------------------------------
# fast path
# ---------------------------------------------------------------------------------------

#: ``data`` fields always handed to Polars' decoder (the ones nearly every log carries);
#: others join per file when lines carry them (see :class:`ChunkDecoder`).
_CORE_DATA = (
    "fromAgent",
    "toAgent",
    "conversationId",
    "workSessionId",
    "taskId",
    "eventRole",
    "fromSessionType",
    "toSessionType",
    "message",
    "targetSessionKey",
    "runId",
    "replyPreview",
    "outcome",
    "waitStatus",
    "waitError",
    "payloadType",
    "payloadJson",
    "turn",
    "maxTurns",
    "announced",
)
#: Lines routed to the exact path for an undecoded field before that field joins the schema.
_ADOPT_AFTER = 32
#: Lines of a file looked at for such fields before its first decode.
_PRIME_LINES = 4096


def _schema_order(fields: set[str]) -> tuple[str, ...]:
    """``fields`` in the derived dtype's order."""
    return tuple(f for f in data_dtype().to_schema() if f in fields)


def _decode_schema(data_fields: tuple[str, ...]) -> dict[str, pl.DataType | DataTypeClass]:
    """The schema handed to Polars: every top-level field, ``data`` cut to ``data_fields``."""
    top = raw_event_dtype()
    full = {f.name: f.dtype for f in data_dtype().fields}
    schema = {f.name: f.dtype for f in top.fields if f.name != "data"}
    schema["data"] = pl.Struct({k: full[k] for k in full if k in data_fields})
    return schema


def _read_json(texts: pl.Series, schema: dict[str, pl.DataType | DataTypeClass]) -> pl.DataFrame:
    """Polars' JSON decoder on the given lines, one row per line.

    ``str.json_decode`` of the lines already in memory: the same decoder as
    ``pl.read_ndjson`` (same coercions, checked by the tests) at half its cost, as the
    lines are not split and copied again.
    """
    return texts.str.json_decode(pl.Struct(schema)).struct.unnest()


def _decode_rows(
    texts: pl.Series, schema: dict[str, pl.DataType | DataTypeClass]
) -> tuple[pl.DataFrame, list[int]]:
    """Decode lines with Polars; returns the frame (one row per line) and positions refused.

    A refused block is bisected down to ``_MIN_CHUNK`` lines; the rows of refused lines are
    nulls (the exact path decides them).
    """
    parts: list[pl.DataFrame] = []
    refused: list[int] = []
    null_row = pl.DataFrame(schema=schema)
    # an explicit stack of blocks, first block on top: a recursive closure would be a
    # reference cycle holding the chunk's lines until the cyclic collector runs
    todo = [(0, len(texts))] if len(texts) else []
    while todo:
        start, stop = todo.pop()
        try:
            parts.append(_read_json(texts.slice(start, stop - start), schema))
            continue
        except pl.exceptions.PolarsError:
            pass
        if stop - start <= _MIN_CHUNK:
            refused.extend(range(start, stop))
            parts.append(null_row.clear(stop - start))
            continue
        mid = (start + stop) // 2
        todo += [(mid, stop), (start, mid)]
    return (pl.concat(parts, how="vertical", rechunk=False) if parts else null_row), refused


# a string field written as a number, boolean, array or object: Polars' reader turns these
# into text (JSON.parse keeps them, and the rules then treat the field as absent)
_STRING_COERCED = (
    '"(?:'
    + "|".join(re.escape(k) for k in _F.top_strings + _F.data_strings)
    + r')"\s*:\s*(?:[-0-9\[{]|true|false)'
)
_BOOL_AS_NUMBER = (
    '"(?:'
    + "|".join(re.escape(k) for k in _F.top_numbers + _F.data_numbers)
    + r')"\s*:\s*(?:true|false)'
)


@cache
def _suspect_exprs(text: str, data_fields: tuple[str, ...]) -> list[pl.Expr]:
    """Rows whose fast decode may differ from the exact one: coerced values, key-count mismatch.

    Returned as columns: ``_s_value`` (a value may be a coercion; looked for in the text,
    where a false alarm only costs the exact path), and what :func:`_gaps` needs for the
    gap (declared keys in the text minus fields decoded: ``_s_present`` fields decoded,
    ``_s_quick`` the gap is 0 for sure). The key count covers every declared key, so a line carrying
    a field outside ``data_fields``, a duplicate or an explicit null has a gap;
    :func:`_cleared` clears the lines whose gap is only explicit nulls.
    """
    dd = pl.col("data")
    data_strings = [k for k in _F.data_strings if k in data_fields]
    data_numbers = [k for k in _F.data_numbers if k in data_fields]
    data_lists = [k for k in _F.data_lists if k in data_fields]
    data_bools = [k for k in _F.data_bools if k in data_fields]
    strings = [pl.col(k) for k in _F.top_strings] + [dd.struct.field(k) for k in data_strings]
    lists = [dd.struct.field(k) for k in data_lists]
    list_suspect = pl.any_horizontal(
        [pl.lit(False)]
        + [
            lst.is_not_null()
            & ~lst.list.eval(
                pl.element().str.contains(_NUMERIC_TEXT + "|" + _NESTED_TEXT).not_()
            ).list.all()
            for lst in lists
        ]
        + [
            lst.is_not_null() & ~pl.col(text).str.contains(r'"' + k + r'"\s*:\s*\[')
            for k, lst in zip(data_lists, lists, strict=True)
        ]
    ).fill_null(False)
    numbers = [pl.col(k) for k in _F.top_numbers] + [dd.struct.field(k) for k in data_numbers]
    # a number field written as true/false decodes to 1/0: only such rows are searched for it
    zero_one = pl.any_horizontal([n.is_in([0.0, 1.0]) for n in numbers]).fill_null(False)
    present = pl.sum_horizontal(
        [s.is_not_null().cast(pl.UInt32) for s in strings + numbers + lists]
        + [dd.struct.field(k).is_not_null().cast(pl.UInt32) for k in data_bools]
        + [dd.is_not_null().cast(pl.UInt32)]
    )
    # The gap is 0 for sure when the text has exactly as many `":`, `" `, `"\t`, `"\r` and
    # `\u` (one count, one pass) as fields were decoded. Every key in the text ends in a
    # quote followed by a colon or whitespace, and each decoded field has a key, so the
    # count is at least the fields decoded; equal means no other key (no undecoded field,
    # duplicate or explicit null), no `\u` (every key written literally, so each is a
    # declared key the key pattern sees) and no such pair inside a string value (which
    # could fake a key): declared keys = fields. Only the other lines pay for counting
    # declared keys.
    quick = pl.col(text).str.count_matches(_QUICK_PAIRS).cast(pl.Int64) == present.cast(pl.Int64)
    return [
        (pl.col(text).str.contains(_STRING_COERCED) | list_suspect).alias("_s_value"),
        zero_one.alias("_s_zero_one"),
        present.cast(pl.Int64).alias("_s_present"),
        quick.alias("_s_quick"),
    ]


def _gaps(texts: pl.Series, checks: pl.DataFrame) -> pl.Series:
    """Declared keys in each text minus fields decoded (0 where ``_s_quick`` proves it)."""
    gap = pl.repeat(0, len(texts), dtype=pl.Int64, eager=True)
    idx = (~checks["_s_quick"]).arg_true()
    if len(idx) == 0:
        return gap
    counted = pl.DataFrame({"t": texts.gather(idx), "p": checks["_s_present"].gather(idx)}).select(
        pl.col("t").str.count_matches(_KEY_PATTERN).cast(pl.Int64) - pl.col("p")
    )
    return gap.scatter(idx, counted.to_series())


#: What :func:`_suspect_exprs` counts for the quick gap test: a quote then a colon or JSON
#: whitespace (every key ends so), or a ``\u`` escape.
_QUICK_PAIRS = r'"[: \t\r]|\\u'


def _bool_as_number(texts: pl.Series, zero_one: pl.Series) -> pl.Series:
    """Lines where a number field may be a boolean in the text (Polars decodes true as 1):
    searched only where a number field decoded to 0 or 1."""
    out = pl.repeat(False, len(texts), eager=True)
    idx = zero_one.arg_true()
    if len(idx) == 0:
        return out
    return out.scatter(idx, texts.gather(idx).str.contains(_BOOL_AS_NUMBER))


_NULL_PATTERN = (
    '"(?:' + "|".join(re.escape(k) for k in _F.all_keys if k != "data") + r')"\s*:\s*null'
)


def _cleared(texts: pl.Series, gap: pl.Series, candidates: pl.Series) -> pl.Series:
    """Candidate lines the fast decode got right after all.

    A line is cleared when its key-count gap is exactly its ``"field": null`` members and no
    declared key is written twice (Polars keeps the first of duplicates, JSON.parse the
    last). ``"data": null`` is not a null member here: the exact path reports it as a wrong
    type.
    """
    idx = candidates.arg_true()
    sub = pl.DataFrame({"text": texts.gather(idx), "gap": gap.gather(idx)})
    keys = (
        pl.col("text")
        .str.extract_all(_KEY_PATTERN)
        .list.eval(pl.element().str.replace_all(r"\s", ""))
    )
    fine = sub.select(
        (pl.col("text").str.count_matches(_NULL_PATTERN) == pl.col("gap"))
        & (keys.list.n_unique() == keys.list.len())
    ).to_series()
    out = pl.repeat(False, len(texts), eager=True)
    return out.scatter(idx.filter(fine), True)


@cache
def _widen(data_fields: tuple[str, ...], null_data: bool) -> list[pl.Expr]:
    """Expressions giving the event columns of the derived schema from a lean decode
    (``null_data``: some rows have no ``data``)."""
    full = data_dtype()
    data = pl.struct(
        [
            pl.col("data").struct.field(f.name)
            if f.name in data_fields
            else pl.lit(None, f.dtype).alias(f.name)
            for f in full.fields
        ]
    )
    # a null `data` (absent in the line) stays null, as the exact path has it
    return [
        *[
            pl.col(f.name).alias(FRAME_COLUMN_NAMES.get(f.name, f.name))
            for f in raw_event_dtype().fields
            if f.name != "data"
        ],
        (
            pl.when(pl.col("data").is_not_null()).then(data)
            if null_data
            else data  # no line without ``data``: spare copying every field
        ).alias("data"),
    ]


# ---------------------------------------------------------------------------------------
# one chunk of lines → events, rejects, issues
# ---------------------------------------------------------------------------------------


@dataclass
class DecodedText:
    """What one file's text (or one chunk of it) decoded to."""

    events: pl.DataFrame  # columns of the event frame (``raw`` only when asked for)
    rejects: pl.DataFrame  # line, reason, raw
    issues: pl.DataFrame  # line, kind, field
    lines: int
    blank: int
    exact_lines: int = 0


_COMPRESSED_MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")


def _physical_lines(data: bytes) -> tuple[pl.Series, list[int]]:
    """The physical lines of ``data`` (LF-split, CR kept) and the lines that are not UTF-8.

    Invalid UTF-8 is decoded as Node does (each bad sequence → U+FFFD; the line is kept).
    """
    if not data:
        return pl.Series("text", [], dtype=pl.String), []
    bad: list[int] = []
    # Polars' line reader decompresses bytes that start like gzip or zstd: such text (a
    # line of binary garbage) is split below
    if b"\r" not in data and not data.startswith(_COMPRESSED_MAGIC):
        try:
            return pl.read_lines(data, name="text").to_series(), bad
        except (pl.exceptions.ComputeError, OSError):
            pass  # not UTF-8: split below
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for i, line in enumerate(data.split(b"\n"), start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                bad.append(i)
        text = data.decode("utf-8", errors="replace")
    lines = pl.Series("text", [text]).str.split("\n").explode()
    if text.endswith("\n"):
        lines = lines.slice(0, len(lines) - 1)
    return lines, bad


class ChunkDecoder:
    """Decode one file's lines chunk by chunk, remembering which ``data`` fields it carries.

    Parameters
    ----------
    event_time
        The event time of the zone of ISO ``timestamp`` values without an offset
        (:attr:`a2a_lab.time.Zone.event_time`: the zone is resolved once, before the files
        are read); default UTC's.
    raw
        Keep each event's physical line (CR and surrounding whitespace included) in ``raw``.
    exact
        Send every line through the exact standard-library path (slow; for tests).
    file
        The ``file`` value of the events.
    """

    def __init__(
        self,
        *,
        event_time: EventTime | None = None,
        raw: bool = False,
        exact: bool = False,
        file: str | None = None,
    ) -> None:
        self.event_time = check_tz("UTC").event_time if event_time is None else event_time
        self.raw = raw
        self.exact = exact
        # a name with bytes that are not UTF-8 cannot be a Polars string: its label can
        self.file = None if file is None else file_label(file)
        self.data_fields: tuple[str, ...] = tuple(
            f for f in _CORE_DATA if f in EventData.model_fields
        )
        self._primed = False

    def fork(self) -> ChunkDecoder:
        """A copy that decodes a chunk on its own (e.g. in another thread): the fields it
        adopts stay its own until :meth:`learn` takes them over."""
        return copy.copy(self)

    def learn(self, other: ChunkDecoder) -> None:
        """Adopt the ``data`` fields a :meth:`fork` adopted."""
        self._primed = self._primed or other._primed
        if set(other.data_fields) - set(self.data_fields):
            self.data_fields = _schema_order(set(self.data_fields) | set(other.data_fields))

    def decode(self, data: bytes, first_line: int = 1) -> DecodedText:
        """Decode complete lines (``data``; its first line is number ``first_line``)."""
        lines, bad_utf8 = _physical_lines(data)
        dec = self.decode_lines(lines, first_line=first_line)
        if bad_utf8:
            extra = issues_frame(
                [
                    {"line": first_line + i - 1, "kind": "invalid_utf8", "field": None}
                    for i in bad_utf8
                ]
            )
            dec.issues = pl.concat([dec.issues, extra]).sort("line", maintain_order=True)
        return dec

    def decode_lines(self, lines: pl.Series, *, first_line: int = 1) -> DecodedText:
        """Decode physical lines (a String series)."""
        n = len(lines)
        # a line that starts with '{' and ends with '}' has nothing to trim: skipping the
        # trim then keeps the text a view of the lines read, not a copy
        trimmed = lines
        braced = lines.str.starts_with("{") & lines.str.ends_with("}")
        all_braced = bool(braced.all())
        if n and not all_braced:
            trimmed = lines.str.strip_chars(JS_WHITESPACE)
        frame = pl.DataFrame(
            {
                "line": pl.int_range(first_line, first_line + n, dtype=pl.Int64, eager=True),
                "text": trimmed,
            }
        )
        if self.raw:
            frame = frame.with_columns(lines.alias("raw"))
        not_blank = frame["text"].str.len_bytes() > 0
        blank = n - int(not_blank.sum())
        if blank:
            frame = frame.filter(not_blank)
        hint = ~frame["text"].str.contains(_NOT_JSON_HINT)
        # when every line is braced there is nothing to trim and no blank line: ``braced``
        # is then already the test on ``text``
        looks_ok = (
            hint & braced
            if all_braced
            else hint & frame["text"].str.starts_with("{") & frame["text"].str.ends_with("}")
        )
        if self.exact:
            looks_ok = pl.repeat(False, frame.height, eager=True)
        if looks_ok.all():
            fast, slow = frame, frame.clear()
        else:
            fast, slow = frame.filter(looks_ok), frame.filter(~looks_ok)
        fast_events, routed = self._fast(fast)
        slow = pl.concat([slow, routed]).sort("line") if routed.height else slow
        slow_events, rejects, issues = _exact(slow, self.raw)
        events = (
            fast_events
            if slow_events.height == 0
            else (
                slow_events
                if fast_events.height == 0
                else fast_events.merge_sorted(slow_events, key="line")
            )
        )
        events, range_issues = _out_of_range(events)
        if range_issues.height:
            issues = pl.concat([issues, range_issues]).sort("line", maintain_order=True)
        return DecodedText(
            events=self._provenance(events),
            rejects=rejects,
            issues=issues,
            lines=n,
            blank=blank,
            exact_lines=slow.height,
        )

    def _fast(self, frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Events Polars decodes exactly, and the rows (line, text[, raw]) it must not decide."""
        keep = ["line", "raw"] if self.raw else ["line"]
        if frame.height == 0:
            return self._empty_events(), frame
        if not self._primed:
            # the fields the first lines carry join the schema before the first decode
            self._primed = True
            new = self._adopt(frame["text"].head(_PRIME_LINES))
            if new:
                self.data_fields = _schema_order(set(self.data_fields) | new)
        fields = self.data_fields
        decoded, refused = _decode_rows(frame["text"], _decode_schema(fields))
        cand = pl.concat([frame, decoded], how="horizontal")
        routed = []
        if refused:
            mask = pl.int_range(0, cand.height, eager=True).is_in(refused)
            routed.append(cand.filter(mask).select(frame.columns))
            cand = cand.filter(~mask)
        typ = pl.col("type")
        checks = cand.select(
            *_suspect_exprs("text", fields),
            (typ.is_not_null() & (typ.str.strip_chars(JS_WHITESPACE).str.len_bytes() > 0)).alias(
                "_typed"
            ),
        )
        checks = checks.with_columns(
            _gaps(cand["text"], checks).alias("_s_gap"),
            (checks["_s_value"] | _bool_as_number(cand["text"], checks["_s_zero_one"])).alias(
                "_s_value"
            ),
        )
        plain = ~pl.col("_s_value") & pl.col("_typed")
        ok = checks.select(plain & (pl.col("_s_gap") == 0)).to_series()
        if not ok.all():
            # explicit nulls (a common way to write an absent field) are no reason: check
            # those lines more closely
            closer = checks.select(plain & (pl.col("_s_gap") > 0)).to_series()
            if closer.any():
                ok = ok | _cleared(cand["text"], checks["_s_gap"], closer)
        if not ok.all():
            suspects = cand.filter(~ok).select(frame.columns)
            new = self._adopt(suspects["text"])
            if new:
                # fields this file carries in many lines join Polars' schema: decode again
                self.data_fields = _schema_order(set(fields) | new)
                return self._fast(frame)
            routed.append(suspects)
            cand = cand.filter(ok)
        events = cand.select("line", *_widen(fields, cand["data"].null_count() > 0), *keep[1:])
        return events, (pl.concat(routed) if routed else frame.clear())

    def _adopt(self, texts: pl.Series) -> set[str]:
        """Declared ``data`` fields outside the schema that at least ``_ADOPT_AFTER`` lines carry."""
        if len(texts) < _ADOPT_AFTER:
            return set()
        keys = (
            texts.str.extract_all(_KEY_PATTERN).explode().str.extract(r'^"([^"]+)"').value_counts()
        )
        data_keys = set(data_dtype().to_schema()) - set(self.data_fields)
        return {k for k, c in keys.iter_rows() if k in data_keys and c >= _ADOPT_AFTER}

    def _empty_events(self) -> pl.DataFrame:
        schema = event_columns_schema()
        return pl.DataFrame(
            schema=schema if self.raw else {k: v for k, v in schema.items() if k != "raw"}
        )

    def _provenance(self, events: pl.DataFrame) -> pl.DataFrame:
        """Add ``file`` and the event time, in the event frame's column order."""
        from a2a_lab.schema import polars_schema

        events = self.event_time.add(
            events.with_columns(pl.lit(self.file, dtype=pl.String).alias("file"))
        )
        return events.select(list(polars_schema(raw=self.raw)))


def decode_chunk(
    data: bytes,
    *,
    file: str | None = None,
    first_line: int = 1,
    tz: str = "UTC",
    raw: bool = False,
) -> DecodedText:
    """Decode a chunk of complete NDJSON lines into events, rejects and issues.

    The one entry point for code that reads lines itself (the follower, the history
    store): ``data`` holds whole lines (the last one may lack its newline), its first line
    is physical line ``first_line`` of ``file``. Every line ends as an event, a reject or a
    blank line; lines, rejects and issues carry absolute line numbers.

    Examples
    --------
    >>> dec = decode_chunk(b'{"type":"a","ts":5}\\n\\nnot json\\n', file="f", first_line=10)
    >>> dec.events["line"].to_list(), dec.rejects["line"].to_list(), dec.blank
    ([10], [12], 1)
    """
    return ChunkDecoder(event_time=check_tz(tz).event_time, raw=raw, file=file).decode(
        data, first_line
    )


def decode_text(
    text: str, *, exact: bool = False, tz: str = "UTC", file: str | None = None
) -> DecodedText:
    """Decode one file's text (already UTF-8 decoded) into events (with ``raw``), rejects, issues.

    ``exact=True`` sends every line through the exact standard-library path (slow; the
    test-suite checks that both paths give the same frame).
    """
    return ChunkDecoder(
        event_time=check_tz(tz).event_time, raw=True, exact=exact, file=file
    ).decode(text.encode("utf-8", "surrogatepass"))


def _out_of_range(events: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Numbers beyond what an instant or an integer can hold, as ``out_of_range`` issues.

    Times beyond JavaScript's range (±8.64e15 ms) are no instant (``event_time`` is null);
    other numbers beyond ±2^63 do not fit the integers that counts, turns and depths are
    cast to downstream. The values themselves stay as read: the reference computes with
    them (e.g. a thread key of ``ts`` 1e21), and parity keeps them.
    """
    d = pl.col("data")
    bad_cols = {
        k: ~(pl.col(FRAME_COLUMN_NAMES.get(k, k)).abs() <= MAX_TIME_MS) for k in _F.top_numbers
    }
    bad_cols.update({"data." + k: ~(d.struct.field(k).abs() < 2.0**63) for k in _F.data_numbers})
    flags = events.select(**{k: v.fill_null(False) for k, v in bad_cols.items()})
    hit = [k for k in flags.columns if flags[k].any()]
    if not hit:
        return events, issues_frame([])
    issues = pl.concat(
        [
            events.filter(flags[k]).select(
                "line", pl.lit("out_of_range").alias("kind"), pl.lit(k).alias("field")
            )
            for k in hit
        ]
    ).sort("line", maintain_order=True)
    return events, issues
