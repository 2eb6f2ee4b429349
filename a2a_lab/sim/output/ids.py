"""The identifiers of a simulated run: uuid4 strings drawn from the plan's ``ids`` stream.

Per message its ``runId`` and the id its conversation gets if it starts one (32 random
bytes a message, drawn in one go), per task its work session and task id, per agent its
sub-agent session: a seed gives the same ids every time. The message ids are kept as their
random bytes (32 bytes a message) and written as strings only where asked for
(:meth:`Identifiers.run_ids`, :meth:`Identifiers.conversation_ids`): the renderer makes those
of one chunk of events at a time, with numpy, never a Python string per id.
"""

from __future__ import annotations

from functools import cached_property
from typing import Final

import numpy as np
import polars as pl

from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.workload.plan import SESSION_KINDS, Plan, child_seed

__all__ = ["Identifiers", "identifiers", "session_keys", "uuid_series"]

_HEX_DIGITS: Final = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
#: Where the 32 hex digits of a uuid go among its 36 characters (the rest are dashes).
_UUID_DIGITS: Final = np.array([k for k in range(36) if k not in (8, 13, 18, 23)])


def uuid_series(raw: np.ndarray) -> pl.Series:
    """uuid4 strings of the rows of ``raw`` (16 bytes each; version and variant bits set),
    built as whole arrays: the ASCII of every id at once.

    Examples
    --------
    >>> uuid_series(np.zeros((1, 16), dtype=np.uint8)).to_list()
    ['00000000-0000-4000-8000-000000000000']
    """
    b = raw.reshape(-1, 16).copy()
    b[:, 6] = (b[:, 6] & 0x0F) | 0x40
    b[:, 8] = (b[:, 8] & 0x3F) | 0x80
    chars = np.full((b.shape[0], 36), ord("-"), dtype=np.uint8)
    digits = np.empty((b.shape[0], 32), dtype=np.uint8)
    digits[:, 0::2] = _HEX_DIGITS[b >> 4]
    digits[:, 1::2] = _HEX_DIGITS[b & 0x0F]
    chars[:, _UUID_DIGITS] = digits
    return pl.Series(chars.view("S36").ravel(), dtype=pl.Binary).cast(pl.String)


def _uuids(raw: bytes) -> list[str]:
    """uuid4 strings of consecutive 16-byte blocks."""
    return uuid_series(np.frombuffer(raw, dtype=np.uint8)).to_list()


class Identifiers:
    """The run's ids, drawn once per run from the ``ids`` stream.

    Attributes
    ----------
    run_id
        Per message, its ``runId`` (a String series, made on first use).
    conversation_id
        Per message, its conversation's id (runtime §6: the id drawn for the first message
        of its conversation; a String series, made on first use).
    work_session_id, task_id
        Per task.
    subagent_session
        Per agent, the uuid of its sub-agent session (used by sub-agents only).
    """

    def __init__(self, plan: Plan) -> None:
        messages = np.random.default_rng(child_seed(plan.ids_seed, 0))
        tasks = np.random.default_rng(child_seed(plan.ids_seed, 1))
        agents = np.random.default_rng(child_seed(plan.ids_seed, 2))
        n = plan.n
        #: per message: the bytes of its runId, and of its conversation id if it starts one
        self._raw = (
            np.frombuffer(messages.bytes(32 * n), dtype=np.uint8).reshape(n, 2, 16)
            if n
            else np.empty((0, 2, 16), np.uint8)
        )
        self._conversation = plan.conversation
        n_tasks = plan.task_agent.shape[0]
        task_raw = np.frombuffer(tasks.bytes(24 * n_tasks), dtype=np.uint8).reshape(n_tasks, 24)
        self.work_session_id = ["ws_" + u for u in _uuids(task_raw[:, :16].tobytes())]
        task_hex = task_raw[:, 16:22].tobytes().hex()
        self.task_id = ["task_" + task_hex[i : i + 12] for i in range(0, len(task_hex), 12)]
        self.subagent_session = _uuids(agents.bytes(16 * len(plan.agents)))

    def run_ids(self, messages: np.ndarray) -> pl.Series:
        """The ``runId`` of each of these messages."""
        return uuid_series(self._raw[messages, 0])

    def conversation_ids(self, messages: np.ndarray) -> pl.Series:
        """The conversation id of each of these messages."""
        return uuid_series(self._raw[self._conversation[messages], 1])

    @cached_property
    def run_id(self) -> pl.Series:
        """Per message, its ``runId``."""
        return self.run_ids(np.arange(self._raw.shape[0]))

    @cached_property
    def conversation_id(self) -> pl.Series:
        """Per message, its conversation's id."""
        return self.conversation_ids(np.arange(self._raw.shape[0]))


def identifiers(plan: Plan) -> Identifiers:
    """The ids of a run (see :class:`Identifiers`)."""
    return Identifiers(plan)


def session_keys(plan: Plan, ids: Identifiers, config: SimConfig) -> list[str]:
    """The session key of every session (runtime §1)."""
    a2a = plan.session_kind == SESSION_KINDS.index("a2a")
    conversation = iter(ids.conversation_ids(plan.session_ref[a2a]).to_list())
    keys = []
    for agent, kind, ref in zip(
        plan.session_agent.tolist(),
        plan.session_kind.tolist(),
        plan.session_ref.tolist(),
        strict=True,
    ):
        name = plan.agents[agent]
        kind_name = SESSION_KINDS[kind]
        if kind_name == "main":
            keys.append(f"agent:{name}:main")
        elif kind_name == "subagent":
            keys.append(f"agent:{name}:subagent:{ids.subagent_session[agent]}")
        elif kind_name == "channel":
            keys.append(f"agent:{name}:discord:group:{config.channels[ref]}")
        else:
            keys.append(f"agent:{name}:a2a:{next(conversation)}")
    return keys
