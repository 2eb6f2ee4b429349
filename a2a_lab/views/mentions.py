"""Discord user mentions (``<@id>``, ``<@!id>``) resolved to names."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

__all__ = ["mentions_expr"]


def mentions_expr(text: pl.Expr, discord_users: Mapping[str, str] | None) -> pl.Expr:
    """Replace Discord user mentions ``<@id>`` and ``<@!id>`` by ``@name``.

    Parameters
    ----------
    text
        A String expression.
    discord_users
        Discord user id → the name to show (e.g. the agent id of a bot user). Ids not in
        the mapping are left as they are.

    Returns
    -------
    pl.Expr
        The text with the known mentions replaced.

    Examples
    --------
    >>> df = pl.DataFrame({"t": ["<@130> ping <@!130>, cc <@999>"]})
    >>> df.select(mentions_expr(pl.col("t"), {"130": "ruda"})).item()
    '@ruda ping @ruda, cc <@999>'
    """
    if not discord_users:
        return text
    patterns: list[str] = []
    names: list[str] = []
    for user_id, name in discord_users.items():
        patterns += [f"<@{user_id}>", f"<@!{user_id}>"]
        names += [f"@{name}", f"@{name}"]
    return text.str.replace_many(patterns, names)
