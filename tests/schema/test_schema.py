"""The pydantic models are the source of truth; the Polars schema is derived from them."""

from __future__ import annotations

import json

import polars as pl
import pytest
from pydantic import ValidationError

from a2a_lab.schema import CoordinationEvent, EventData, data_dtype, polars_schema, raw_event_dtype


def test_polars_schema_is_derived_from_every_model_field() -> None:
    data_fields = {f.name: f.dtype for f in data_dtype().fields}
    assert list(data_fields) == list(EventData.model_fields)
    top = [f.name for f in raw_event_dtype().fields]
    assert top == list(CoordinationEvent.model_fields)
    schema = polars_schema()
    assert list(schema)[:2] == ["file", "line"]
    assert schema["data"] == data_dtype()
    assert schema["event_time"] == pl.Datetime("ms", "UTC")


@pytest.mark.parametrize(
    ("field", "dtype"),
    [
        ("workSessionId", pl.String()),
        ("depth", pl.Float64()),
        ("announced", pl.Boolean()),
        ("collabSubTags", pl.List(pl.String())),
    ],
)
def test_field_dtypes_follow_annotations(field: str, dtype: pl.DataType) -> None:
    assert dict((f.name, f.dtype) for f in data_dtype().fields)[field] == dtype


def test_round_trip_keeps_unknown_fields() -> None:
    line = (
        '{"type":"a2a.send","agentId":"ruda","ts":1771500000000,"data":{"fromAgent":"ruda",'
        '"toAgent":"eden","message":"배포 확인","extra":{"k":[1,2]},"depth":0}}'
    )
    ev = CoordinationEvent.model_validate_json(line)
    assert ev.data.depth == 0
    assert json.loads(ev.model_dump_json(exclude_unset=True)) == json.loads(line)


@pytest.mark.parametrize(
    "bad",
    [
        '{"type":"x","ts":"5"}',
        '{"type":"x","data":{"depth":"2"}}',
        '{"type":"x","data":{"announced":1}}',
        '{"type":"x","data":{"workSessionId":55}}',
        '{"type":"x","ts":true}',
        '{"type":5}',
    ],
)
def test_models_are_strict(bad: str) -> None:
    with pytest.raises(ValidationError):
        CoordinationEvent.model_validate_json(bad)


def test_no_nan_or_infinity() -> None:
    with pytest.raises(ValidationError):
        CoordinationEvent.model_validate({"type": "x", "ts": float("nan")})
    with pytest.raises(ValidationError):
        EventData.model_validate({"depth": float("inf")})
