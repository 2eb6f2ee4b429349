"""Derive the Polars dtypes of the event frame from the pydantic models."""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import TYPE_CHECKING

import polars as pl
from polars.datatypes import DataTypeClass

from a2a_lab.schema._names import FRAME_COLUMN_NAMES

if TYPE_CHECKING:
    from pydantic import BaseModel

# the models (pydantic) load when a dtype is first derived: importing this module is cheap


def _leaf_dtype(annotation: object) -> pl.DataType:
    """Map one (optional) pydantic annotation to a Polars dtype."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _leaf_dtype(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        kinds = {_leaf_dtype(m) for m in members}
        if kinds == {pl.Int64(), pl.Float64()} or kinds == {pl.Float64()}:
            return pl.Float64()
        if len(kinds) == 1:
            return kinds.pop()
        raise TypeError(f"no Polars dtype for {annotation!r}")
    if origin is list:
        (item,) = typing.get_args(annotation)
        return pl.List(_leaf_dtype(item))
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return struct_dtype(annotation)
    # Strict* aliases are Annotated[...] at runtime; plain types end here
    base = {str: pl.String(), bool: pl.Boolean(), int: pl.Int64(), float: pl.Float64()}
    if annotation in base:
        return base[annotation]
    raise TypeError(f"no Polars dtype for {annotation!r}")


def struct_dtype(model: type[BaseModel]) -> pl.Struct:
    """The Polars struct dtype of a model's declared fields, in declaration order."""
    return pl.Struct({name: _leaf_dtype(f.annotation) for name, f in model.model_fields.items()})


@cache
def data_dtype() -> pl.Struct:
    """Dtype of the ``data`` column: every declared :class:`EventData` field."""
    from a2a_lab.schema.event import EventData

    return struct_dtype(EventData)


@cache
def raw_event_dtype() -> pl.Struct:
    """Dtype of one decoded event line (top-level fields and ``data``)."""
    from a2a_lab.schema.event import CoordinationEvent

    return struct_dtype(CoordinationEvent)


def polars_schema(*, raw: bool = True) -> pl.Schema:
    """The schema of the event frame returned by :func:`a2a_lab.load`.

    Top-level log fields become snake_case columns (``agentId`` → ``agent_id``,
    :data:`a2a_lab.schema.event.FRAME_COLUMN_NAMES`); ``data`` keeps the log's field names.

    ``raw`` (the original line) is part of it when the load was asked for it
    (``load(..., raw=True)``) and in frames made in memory (where it is null).

    Examples
    --------
    >>> schema = polars_schema()
    >>> list(schema)[:4]
    ['file', 'line', 'type', 'agent_id']
    """
    top = raw_event_dtype()
    cols: dict[str, pl.DataType | DataTypeClass] = {"file": pl.String(), "line": pl.Int64()}
    for field in top.fields:
        cols[FRAME_COLUMN_NAMES.get(field.name, field.name)] = field.dtype
    cols["event_ms"] = pl.Float64()
    cols["event_time"] = pl.Datetime("ms", "UTC")
    if raw:
        cols["raw"] = pl.String()
    return pl.Schema(cols)
