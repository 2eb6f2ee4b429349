"""Deep JSON: reading lines nested at any depth, and values as deep as the reference writes.

``JSON.parse`` in the reference reads nesting of any depth; Python's ``json`` recurses and
stops at the interpreter's recursion limit. The loader's validating parse (:func:`deep_call`)
re-runs such a call once in a thread with a large stack and a recursion limit that fits the
data, so deep input is an ordinary value and never a reject or a crash of a2a_lab's own.

``JSON.stringify`` in the reference recurses too: V8 (Node 20, default stack) writes an
object nested about 4,165 levels deep and throws ``RangeError`` deeper. The values a2a_lab
hands out (the event objects of ``to_api``) are therefore bounded where they are made from a
line (:func:`nested_json`): up to :data:`NESTING_LIMIT` levels they are the line's values
as they are, and the interpreter's recursion limit is raised (never lowered) so that plain
``json.dumps`` writes them; a value deeper than that, which the reference cannot write, is
kept whole as its JSON text (a string) instead.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# The retry thread's stack: about 2 KiB per level of the bound, between 64 MiB and 2 GiB of
# address space (pages are committed only as the recursion touches them). The recursion
# limit is kept within that stack, so data deeper still raises RecursionError, never a crash.
_MIN_STACK = 64 * 1024 * 1024
_MAX_STACK = 2 * 1024 * 1024 * 1024
_BYTES_PER_LEVEL = 2048
_LOCK = threading.Lock()

#: Levels of nesting a value made from a line keeps as it is (the reference's
#: ``JSON.stringify`` writes about 4,165, page and event wrappers included).
NESTING_LIMIT = 4000
#: Below this depth a line never touches the recursion limit (Python's default is 1,000).
_SHALLOW = 100
#: Python frames a walk of the value may take per level (a recursive function and its
#: comprehension), and the room kept for the caller's own stack.
_FRAMES_PER_LEVEL = 2
_HEADROOM = 1000
#: The recursion limit the values made so far need (raised by allow_nesting only).
_FLOOR = [0]

# a JSON string (skipped: brackets inside it are text) or one bracket
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` with each container nested deeper than ``limit`` replaced by its JSON text
    as a string, and the nesting depth of the result."""
    out: list[str] = []
    depth = deepest = 0
    pos = 0
    start = -1
    for m in _SCAN.finditer(text):
        token = m.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth == limit + 1 and start < 0:
                start = m.start()
            deepest = max(deepest, min(depth, limit + 1))
        else:
            if depth == limit + 1 and start >= 0:
                # (a string of the container's text: ``json.dumps`` escapes its quotes)
                out.extend((text[pos:start], json.dumps(text[start : m.end()])))
                pos, start = m.end(), -1
            depth -= 1
    if not out:
        return text, deepest
    out.append(text[pos:])
    return "".join(out), deepest


def allow_nesting(depth: int) -> None:
    """Let the recursive ``json`` calls and walks handle values ``depth`` levels deep.

    Raises the interpreter's recursion limit to fit (never lowers it). The data is bounded
    by :data:`NESTING_LIMIT`, so the C stack the recursion takes stays small (about 130
    bytes a level for ``json``, 250 for ``repr``: 1 MiB at the bound, of the main
    thread's 8 MiB).
    """
    need = _FRAMES_PER_LEVEL * depth + _HEADROOM
    if need <= _FLOOR[0]:
        return
    with _LOCK:
        # the floor survives a deep_call running meanwhile (it restores at least the floor)
        _FLOOR[0] = max(_FLOOR[0], need)
        if sys.getrecursionlimit() < need:
            sys.setrecursionlimit(need)


def nested_json(text: str, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)`` with values nested at most :data:`NESTING_LIMIT` deep.

    A container nested deeper is kept as its JSON text (a string: nothing is lost, and the
    reference's ``JSON.stringify`` throws on such a value); the recursion limit is raised
    to fit the depth (:func:`allow_nesting`), so the value dumps with plain ``json.dumps``.

    Examples
    --------
    >>> value = nested_json('{"a": ' + "[" * 5000 + "]" * 5000 + "}")
    >>> levels, inner = 1, value["a"]
    >>> while isinstance(inner, list):
    ...     levels, inner = levels + 1, inner[0]
    >>> levels, inner == "[" * 1001 + "]" * 1001, len(json.dumps(value))
    (4000, True, 10009)
    >>> nested_json('{"a": [1, {"b": "[[["}]}')
    {'a': [1, {'b': '[[['}]}
    """
    if text.count("[") + text.count("{") > _SHALLOW:
        text, depth = _cut(text, NESTING_LIMIT)
        if depth > _SHALLOW:
            allow_nesting(depth)
    return json.loads(text, **kwargs)


def deep_call(fn: Callable[..., T], *args: object, depth: int | None = None, **kwargs: object) -> T:
    """``fn(*args, **kwargs)``; on ``RecursionError`` again with room for ``depth`` levels.

    Parameters
    ----------
    fn
        The recursive call (e.g. ``json.loads``).
    depth
        An upper bound of the nesting depth (a JSON text's length serves); None: as deep
        as the largest retry stack allows.

    Examples
    --------
    >>> import json
    >>> text = "[" * 5000 + "]" * 5000
    >>> len(deep_call(json.dumps, deep_call(json.loads, text, depth=len(text)), separators=(",", ":")))
    10000
    """
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        pass
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(fn(*args, **kwargs))
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    # The recursion limit is process-wide: one retry at a time, restored afterwards.
    with _LOCK:
        old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
        stack = (
            _MAX_STACK
            if depth is None
            else min(_MAX_STACK, max(_MIN_STACK, depth * _BYTES_PER_LEVEL))
        )
        sys.setrecursionlimit(max(old_limit, stack // _BYTES_PER_LEVEL))
        threading.stack_size(stack)
        try:
            worker = threading.Thread(target=run, name="a2a_lab-deep-json")
            worker.start()
            worker.join()
        finally:
            threading.stack_size(old_stack)
            sys.setrecursionlimit(max(old_limit, _FLOOR[0]))
    if error:
        raise error[0]
    return result[0]
