"""Run a recursive standard-library call (``json`` parse or dump) on arbitrarily deep data.

``JSON.parse`` and ``JSON.stringify`` in the reference accept nesting thousands deep; Python's
``json`` recurses and stops at the interpreter's recursion limit. A call that hits it is
re-run once in a thread with a large stack and a recursion limit that fits the data, so deep
input is an ordinary value and never a reject or a crash of a2a_lab's own.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# The retry thread's stack: about 2 KiB per level of the bound, between 64 MiB and 2 GiB of
# address space (pages are committed only as the recursion touches them). The recursion
# limit is kept within that stack, so data deeper still raises RecursionError, never a crash.
_MIN_STACK = 64 * 1024 * 1024
_MAX_STACK = 2 * 1024 * 1024 * 1024
_BYTES_PER_LEVEL = 2048
_LOCK = threading.Lock()


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
            sys.setrecursionlimit(old_limit)
    if error:
        raise error[0]
    return result[0]
