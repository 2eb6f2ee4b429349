"""The reference's wait-and-retry policy (runtime §2 step 2; reference ``calculateBackoffMs``).

The requester waits for the target's run in chunks of 30 s up to 300 s in total. A chunk
that ends with status ``timeout`` is not an error and not a retry. A retriable error
(:func:`a2a_lab.reference.runtime.errors.classify_error`) is retried at most 3 times, each after a
jittered exponential backoff; a non-retriable one stops the wait.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Timing of the reference wait loop (every value in milliseconds except the counts).

    Attributes
    ----------
    chunk_ms
        Length of one ``agent.wait`` chunk.
    max_wait_ms
        Total wait before the requester gives up (``waitStatus`` becomes ``timeout``).
    max_retries
        Retries of retriable errors (the ``maxAttempts`` of ``a2a.retry`` events).
    base_ms, max_ms
        Backoff parameters of :func:`backoff_ms`.
    """

    chunk_ms: int
    max_wait_ms: int
    max_retries: int
    base_ms: int
    max_ms: int


#: Today's reference values (identical at ``main`` and ``0b3325a28``).
REFERENCE_RETRY: Final = RetryPolicy(
    chunk_ms=30_000, max_wait_ms=300_000, max_retries=3, base_ms=2_000, max_ms=60_000
)


def backoff_ms(
    attempt: int,
    rand: float,
    base_ms: float = REFERENCE_RETRY.base_ms,
    max_ms: float = REFERENCE_RETRY.max_ms,
) -> int:
    """Backoff before retry ``attempt`` (reference ``calculateBackoffMs``).

    ``floor(min(max_ms, base_ms · 2^attempt) · (0.5 + 0.5 · rand))``: exponential, capped
    BEFORE the jitter, then jittered to 50-100 % of the capped value.

    Parameters
    ----------
    attempt
        0 for the first retry (the reference passes ``retryCount - 1``).
    rand
        A uniform draw in ``[0, 1)`` (the reference's ``Math.random()``); pass it from a
        seeded generator so runs are reproducible.
    base_ms, max_ms
        Base delay and cap.

    Returns
    -------
    int
        Milliseconds, in ``[floor(cap / 2), cap]`` for ``rand`` in ``[0, 1)`` where
        ``cap = min(max_ms, base_ms · 2^attempt)`` (``cap`` itself only for a draw within
        ``2**-53`` of 1, where ``0.5 + 0.5 · rand`` rounds to 1).

    Examples
    --------
    >>> backoff_ms(0, 0.0), backoff_ms(0, 0.5), backoff_ms(0, 0.9999999)
    (1000, 1500, 1999)
    >>> backoff_ms(20, 0.5)  # capped at 60 s before the jitter
    45000
    >>> backoff_ms(0, 0.5, base_ms=100, max_ms=500)
    75
    """
    # 2.0 ** attempt overflows only far beyond any cap; min() then picks the cap
    try:
        exponential = min(max_ms, base_ms * 2.0**attempt)
    except OverflowError:
        exponential = max_ms
    return math.floor(exponential * (0.5 + rand * 0.5))
