"""The clear error of a call in a removed keyword form (issue 25: options objects).

A public function whose signature had more than 8 parameters takes an options object now
(``work_sessions(enriched, SessionQuery(roles=...), now=...)``). The old keywords are not
kept as aliases (one name per job): a call that still passes one fails with a
``TypeError`` naming the options object and the field, instead of Python's bare
"unexpected keyword argument". No a2a_lab import: every layer may use it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["reject_removed_keywords"]


def reject_removed_keywords(
    function: str,
    given: Mapping[str, Any],
    options: type,
    *,
    parameter: str,
    renamed: Mapping[str, str] | None = None,
) -> None:
    """Raise the ``TypeError`` of keywords that moved into ``options`` (nothing if none given).

    Parameters
    ----------
    function
        The public function's name, for the message.
    given
        The keywords the call passed beyond the signature (its ``**removed``).
    options
        The options dataclass that holds the moved keywords now.
    parameter
        The name of the function's parameter that takes ``options``.
    renamed
        Removed keywords that have a new name (``{"timezone": "tz"}``).

    Raises
    ------
    TypeError
        If ``given`` is not empty: the first keyword, and where it belongs now.

    Examples
    --------
    >>> @dataclasses.dataclass(frozen=True)
    ... class Opts:
    ...     limit: int = 1
    >>> reject_removed_keywords("f", {"limit": 3}, Opts, parameter="options")
    Traceback (most recent call last):
    ...
    TypeError: f() takes limit= in its options object now: f(..., options=Opts(limit=...))
    """
    if not given:
        return
    name = next(iter(given))
    fields = {f.name for f in dataclasses.fields(options)}
    if name in fields:
        raise TypeError(
            f"{function}() takes {name}= in its options object now: "
            f"{function}(..., {parameter}={options.__name__}({name}=...))"
        )
    if renamed and name in renamed:
        raise TypeError(f"{function}() has no {name}= any more: use {renamed[name]}=")
    raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
