"""The one pydantic setting every simulator configuration model shares: strict and finite.

A configuration is refused at construction, with the offending field named by its path,
rather than failing (or hanging) inside :func:`~a2a_lab.sim.simulate`:

- **strict types** (pydantic strict mode): ``"0.5"``, ``true`` or ``"10"`` are not numbers,
  ``1.0`` is not an integer; an integer is a valid float. JSON and TOML documents load as
  before, since their numbers, strings and booleans are already typed; JSON arrays fill
  tuples and ISO strings fill datetimes (pydantic's JSON mode), and so do TOML arrays and
  ISO strings in Python input (:data:`Tuple`, :func:`iso_datetime`);
- **finite floats** (``allow_inf_nan=False``): ``inf`` and ``nan`` are refused everywhere;
- frozen models, unknown keys refused.

Examples
--------
>>> from pydantic import BaseModel
>>> class Example(BaseModel):
...     model_config = STRICT
...     rate: float = 1.0
>>> Example(rate=2).rate
2.0
>>> Example.model_validate({"rate": "0.5"})
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Example
rate
  Input should be a valid number [type=float_type, input_value='0.5', input_type=str]
...
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

from pydantic import BeforeValidator, ConfigDict, Field

__all__ = [
    "STRICT",
    "STRICT_ALIASED",
    "Off",
    "Probability",
    "Tuple",
    "false_is_none",
    "iso_datetime",
]

#: The model configuration of every simulator configuration model.
STRICT: Final = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)
#: :data:`STRICT` for models with field aliases (``from`` / ``to``), which accept both names.
STRICT_ALIASED: Final = ConfigDict(
    frozen=True, extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=True
)


def false_is_none(value: Any) -> Any:
    """TOML has no null: ``false`` switches a policy off and ``true`` keeps its defaults."""
    if value is False:
        return None
    if value is True:
        return {}
    return value


def _as_tuple(value: Any) -> Any:
    """A list (TOML array, Python list) fills a tuple field; anything else is left to pydantic."""
    return tuple(value) if isinstance(value, list) else value


def iso_datetime(value: Any) -> Any:
    """An ISO 8601 string fills a datetime field (as in JSON); anything else is left to pydantic."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value  # pydantic names the field and the bad input
    return value


#: ``Annotated[..., Off]``: a policy field that ``false`` switches off.
Off: Final = BeforeValidator(false_is_none)
#: ``Annotated[tuple[...], Tuple]``: a tuple field that also takes a list.
Tuple: Final = BeforeValidator(_as_tuple)
#: A probability: a finite float in [0, 1].
Probability = Annotated[float, Field(ge=0, le=1)]
