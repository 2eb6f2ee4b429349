"""``REPLY_SKIP`` / ``ANNOUNCE_SKIP`` tokens (reference ``isReplySkip`` / ``isAnnounceSkip``).

An agent ends the ping-pong by replying ``REPLY_SKIP`` and stays silent in the announce step
with ``ANNOUNCE_SKIP``. What counts as the token depends on the reference version:

* ``0b3325a28`` (the version the reference's tests were written for, the default here):
  trim, upper-case, then the token itself or the token followed by ``.`` or a space, so
  ``reply_skip``, ``REPLY_SKIP.`` and ``REPLY_SKIP thanks`` are skips, ``REPLY_SKIPPED`` and
  ``NOT REPLY_SKIP`` are not;
* ``main``: the trimmed text must equal the token exactly (case-sensitive).
"""

from __future__ import annotations

from typing import Final, Literal

from a2a_lab.reference.jsstr import js_trim

REPLY_SKIP_TOKEN: Final = "REPLY_SKIP"
ANNOUNCE_SKIP_TOKEN: Final = "ANNOUNCE_SKIP"

SkipTokenMode = Literal["0b3325a28", "main"]

#: The default matching rule: the one the reference's tests pin.
DEFAULT_SKIP_TOKEN_MODE: Final[SkipTokenMode] = "0b3325a28"


def is_skip_token(
    text: str | None, token: str, mode: SkipTokenMode = DEFAULT_SKIP_TOKEN_MODE
) -> bool:
    """Whether ``text`` is the skip ``token`` under the given version's rule.

    Parameters
    ----------
    text
        The agent's reply (None = no reply, never a skip).
    token
        :data:`REPLY_SKIP_TOKEN` or :data:`ANNOUNCE_SKIP_TOKEN`.
    mode
        ``"0b3325a28"`` (default) or ``"main"``, see the module docstring.

    Examples
    --------
    >>> is_skip_token(" reply_skip. ", REPLY_SKIP_TOKEN)
    True
    >>> is_skip_token(" reply_skip. ", REPLY_SKIP_TOKEN, mode="main")
    False
    """
    trimmed = js_trim(text or "")
    if mode == "main":
        return trimmed == token
    # str.upper and JavaScript's toUpperCase agree on every character that can map into
    # the ASCII token (their tables differ only for recently added scripts)
    normalized = trimmed.upper()
    return normalized == token or normalized.startswith((token + ".", token + " "))


def is_reply_skip(text: str | None, mode: SkipTokenMode = DEFAULT_SKIP_TOKEN_MODE) -> bool:
    """Whether a ping-pong reply is ``REPLY_SKIP`` (reference ``isReplySkip``).

    Examples
    --------
    >>> is_reply_skip("REPLY_SKIP thanks"), is_reply_skip("REPLY_SKIPPED"), is_reply_skip(None)
    (True, False, False)
    """
    return is_skip_token(text, REPLY_SKIP_TOKEN, mode)


def is_announce_skip(text: str | None, mode: SkipTokenMode = DEFAULT_SKIP_TOKEN_MODE) -> bool:
    """Whether an announce reply is ``ANNOUNCE_SKIP`` (reference ``isAnnounceSkip``).

    Examples
    --------
    >>> is_announce_skip("announce_skip"), is_announce_skip("announce_skip", mode="main")
    (True, False)
    """
    return is_skip_token(text, ANNOUNCE_SKIP_TOKEN, mode)
