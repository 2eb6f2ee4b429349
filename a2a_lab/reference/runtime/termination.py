"""Early termination of the ping-pong loop (runtime §3; reference ``shouldTerminatePingPong``).

After each ping-pong reply the reference checks, in this order:

1. ``repetition_detected``: the word-level Jaccard similarity of the trimmed reply with the
   LAST previous reply is above 0.85;
2. ``minimal_content``: the trimmed reply is shorter than 20 (UTF-16 units) and has no ``?``;
3. ``conclusion_detected``: the trimmed reply starts with a conclusion phrase.

The loop also ends on ``REPLY_SKIP`` or an empty reply (``explicit_skip``, see
:mod:`a2a_lab.reference.runtime.skip_tokens`); the other reasons a log may carry are listed in
:data:`TERMINATION_REASONS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from a2a_lab.reference.jsstr import js_lower, js_trim, utf16_len
from a2a_lab.reference.runtime.js import JS_FLAGS_I, JS_SPACE

#: Every ``terminationReason`` of runtime §3: the three checks here, the explicit skip, and
#: the ends of a turn that did not produce a usable reply.
TERMINATION_REASONS: Final[tuple[str, ...]] = (
    "repetition_detected",
    "minimal_content",
    "conclusion_detected",
    "explicit_skip",
    "aborted",
    "empty_reply",
    "turn_timeout",
    "agent_error",
)


@dataclass(frozen=True, slots=True)
class TerminationRules:
    """Thresholds and phrases of the early-termination checks.

    Attributes
    ----------
    similarity_threshold
        Repetition when the similarity is strictly above this.
    min_content_length
        Minimal content when the trimmed reply is strictly shorter (UTF-16 units) and has
        no ``?``.
    conclusion
        Conclusion when this matches at the start of the trimmed reply.
    """

    similarity_threshold: float
    min_content_length: int
    conclusion: re.Pattern[str]


#: The reference's checks (identical at ``main`` and ``0b3325a28``).
TERMINATION_RULES_V1: Final = TerminationRules(
    similarity_threshold=0.85,
    min_content_length=20,
    conclusion=re.compile(
        f"(알겠습니다|확인했습니다|감사합니다|네,?{JS_SPACE}*이해했습니다|완료|understood|got it|thanks|noted)",
        JS_FLAGS_I,
    ),
)

_WORD_SEPARATOR: Final = re.compile(JS_SPACE + "+")


@dataclass(frozen=True, slots=True)
class TerminationResult:
    """Whether to stop the ping-pong, and why (``reason`` is ``""`` when not stopping)."""

    terminate: bool
    reason: str


def calculate_similarity(a: str, b: str) -> float:
    """Word-level Jaccard similarity (reference ``calculateSimilarity``).

    Words are the non-empty pieces of the JavaScript-lower-cased text split on white space.

    Returns
    -------
    float
        ``|A ∩ B| / |A ∪ B|``; 1 when both texts have no words, 0 when only one has none.

    Examples
    --------
    >>> calculate_similarity("Hello World", "hello world")
    1.0
    >>> round(calculate_similarity("the server is running on port 8080",
    ...                            "the server is running on port 8080 with defaults"), 4)
    0.7778
    """
    words_a = {w for w in _WORD_SEPARATOR.split(js_lower(a)) if w}
    words_b = {w for w in _WORD_SEPARATOR.split(js_lower(b)) if w}
    if not words_a and not words_b:
        return 1.0
    if not words_a or not words_b:
        return 0.0
    shared = len(words_a & words_b)
    return shared / (len(words_a) + len(words_b) - shared)


def should_terminate_ping_pong(
    reply_text: str,
    previous_replies: Sequence[str] = (),
    rules: TerminationRules = TERMINATION_RULES_V1,
) -> TerminationResult:
    """Decide whether a ping-pong reply ends the loop (reference ``shouldTerminatePingPong``).

    Parameters
    ----------
    reply_text
        The reply just produced.
    previous_replies
        The earlier replies of this loop, oldest first (only the last one is compared).
    rules
        Thresholds and phrases; :data:`TERMINATION_RULES_V1` is the reference's.

    Returns
    -------
    TerminationResult
        The first check that fires, in the order repetition, minimal content, conclusion.

    Examples
    --------
    >>> should_terminate_ping_pong("OK")
    TerminationResult(terminate=True, reason='minimal_content')
    >>> should_terminate_ping_pong("Got it, I'll proceed with the implementation")
    TerminationResult(terminate=True, reason='conclusion_detected')
    >>> should_terminate_ping_pong("Why?").terminate
    False
    """
    trimmed = js_trim(reply_text)
    if previous_replies:
        last = previous_replies[-1]
        if last and calculate_similarity(trimmed, last) > rules.similarity_threshold:
            return TerminationResult(True, "repetition_detected")
    if utf16_len(trimmed) < rules.min_content_length and "?" not in trimmed:
        return TerminationResult(True, "minimal_content")
    if rules.conclusion.match(trimmed):
        return TerminationResult(True, "conclusion_detected")
    return TerminationResult(False, "")
