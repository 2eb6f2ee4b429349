"""The names of a store's derived tables (no dependencies: queries import only these)."""

from __future__ import annotations

#: One row per matched exchange (:func:`a2a_lab.analysis.conversations.conversations`).
CONVERSATIONS_TABLE = "conversations"
#: Its columns that only order it (the exact times), left out when read.
MS_COLUMNS = ("_start_ms", "_end_ms", "_first_reply_ms")
#: Per event: the columns and ``data`` fields the rules but the A2A sequence read.
CHECK_LEAN = "check_lean"
#: The findings of those rules (but ``clock.future_ts``) over every stored event.
CHECK_EVENTS = "check_events"
#: The A2A sequence findings, by conversation id.
CHECK_EXCHANGES = "check_exchanges"
#: Per conversation id: its first ambiguous exchanges (with their first event's place in
#: the load's order), and its counts of ambiguous and all exchanges.
CHECK_AMBIGUOUS = "check_ambiguous"
CHECK_COUNTS = "check_counts"
#: The row order of the conversations table (start, then the exchange's identity).
CONV_ORDER = ("_start_ms", "conversation_id", "from_agent", "to_agent", "exchange")
