"""OTLP/JSON text of span rows, written by Polars string expressions (no per-span Python).

The encoding follows the OTLP/JSON rules (opentelemetry-proto's JSON mapping): ids as
lower-case hex, 64-bit integers (times, ``intValue``) as decimal strings, enums as numbers,
absent values left out (never ``null``). tests/otel/test_otlp.py parses every line with
``google.protobuf.json_format.Parse`` into ``ExportTraceServiceRequest`` and compares it with
what the OpenTelemetry SDK's own encoder makes of the same spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import polars as pl
from polars.datatypes import DataTypeClass

__all__ = ["attr", "attributes", "jstr"]

_INT_TYPES: Final = (
    pl.Int8,
    pl.Int16,
    pl.Int32,
    pl.Int64,
    pl.UInt8,
    pl.UInt16,
    pl.UInt32,
    pl.UInt64,
)


def jstr(expr: pl.Expr) -> pl.Expr:
    """``expr`` (a string) as a JSON string literal, escaped by Polars' JSON encoder."""
    return (
        pl.struct(expr.cast(pl.String).alias("s"))
        .struct.json_encode()
        .str.strip_prefix('{"s":')
        .str.strip_suffix("}")
    )


def attr(key: str, expr: pl.Expr, dtype: pl.DataType | DataTypeClass) -> pl.Expr:
    """One OTLP ``KeyValue`` as JSON, null when the value is null (or not a finite float)."""
    head = '{"key":' + _literal(key) + ',"value":{'
    if dtype == pl.Boolean:
        value = pl.concat_str([pl.lit('"boolValue":'), expr.cast(pl.String)])
        ok = expr.is_not_null()
    elif dtype in _INT_TYPES:
        value = pl.concat_str([pl.lit('"intValue":"'), expr.cast(pl.String), pl.lit('"')])
        ok = expr.is_not_null()
    elif dtype.is_float():
        value = pl.concat_str([pl.lit('"doubleValue":'), expr.cast(pl.String)])
        ok = expr.is_finite().fill_null(False)
    else:
        value = pl.concat_str([pl.lit('"stringValue":'), jstr(expr)])
        ok = expr.is_not_null()
    return pl.when(ok).then(pl.concat_str([pl.lit(head), value, pl.lit("}}")]))


def _literal(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def attributes(pairs: Sequence[pl.Expr]) -> pl.Expr:
    """A JSON array of the non-null :func:`attr` values."""
    return pl.concat_str(
        [pl.lit("["), pl.concat_str(list(pairs), separator=",", ignore_nulls=True), pl.lit("]")]
    )
