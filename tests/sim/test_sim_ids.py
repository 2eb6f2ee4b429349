"""The simulator's identifiers (issue 12: made with numpy, a chunk of events at a time).

The vectorised uuid writer is checked against the standard library's ``uuid.UUID``; the
ids asked for a subset of messages (as the renderer does per chunk) against those of the
whole run; conversation ids against runtime §6 (every message of a conversation carries the
id of its first message).
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.sim import SimConfig, simulate
from a2a_lab.sim.output.ids import uuid_series


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(min_size=16, max_size=16), max_size=40))
def test_uuid_series_is_uuid4_of_the_bytes(blocks: list[bytes]) -> None:
    raw = np.frombuffer(b"".join(blocks), dtype=np.uint8).reshape(len(blocks), 16)
    expected = [str(uuid.UUID(bytes=b, version=4)) for b in blocks]
    assert uuid_series(raw).to_list() == expected


def test_uuid_series_extremes() -> None:
    raw = np.array([[0] * 16, [255] * 16], dtype=np.uint8)
    assert uuid_series(raw).to_list() == [
        "00000000-0000-4000-8000-000000000000",
        "ffffffff-ffff-4fff-bfff-ffffffffffff",
    ]


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    return simulate(SimConfig(n_messages=300), seed=4)


def test_ids_of_a_subset_are_those_of_the_run(run) -> None:  # type: ignore[no-untyped-def]
    ids = run.ids
    rows = np.array([299, 0, 17, 17, 150])
    assert ids.run_ids(rows).to_list() == [ids.run_id[int(r)] for r in rows]
    assert ids.conversation_ids(rows).to_list() == [ids.conversation_id[int(r)] for r in rows]
    assert ids.run_id.n_unique() == run.plan.n


def test_conversation_id_is_its_first_message_s(run) -> None:  # type: ignore[no-untyped-def]
    conversation = run.plan.conversation
    assert (conversation != np.arange(run.plan.n)).any()  # some conversations have several
    ids = run.ids.conversation_id.to_list()
    for i, head in enumerate(conversation.tolist()):
        assert ids[i] == ids[head]
    # a conversation's id is not its first message's run id (two draws per message)
    assert set(ids).isdisjoint(run.ids.run_id.to_list())
