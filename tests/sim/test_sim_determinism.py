"""Same seed → the same simulated log, byte for byte, across refactors of the simulator.

The one-model refactor (issue 16 item 3) was checked against hashes taken before it (commit
8c787c5): identical. The hashes below were then re-taken after the common-random-numbers change
of issue 11 (draws keyed by message index, see CHANGELOG), and equal those of the OLD model
with that change (branch ``twin``), byte for byte: a change of the model's internals must not
change a single byte of the log a seed gives. A deliberate change of the simulated behaviour updates them AND says why in
CHANGELOG.md.

Issue 22 made the reference gateway's lanes the default topology (conversation-scoped A2A
sessions, the gateway-wide ``nested`` lane pool, one conversation id per work session and
unordered pair): the hashes of the cases that run the default topology changed once. The
previous model is kept as ``topology="agent_main"`` and still writes the previous hashes,
byte for byte (:data:`AGENT_MAIN`); ``mm1`` and ``sync_fixed_a2a`` pin their topology
(the textbook preset, the deprecated ``target_session``) and did not change.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from a2a_lab.io import write_events
from a2a_lab.sim import SimConfig, presets, simulate
from a2a_lab.sim.experiments.sweep import scale_arrivals
from tests.support.sim_cases import every_policy, reference_retry

# name → (configuration, seed, sha256 of the written log, its lines)
CASES = {
    "default": (
        lambda: SimConfig(n_messages=400),
        777,
        "bc0b7c26902ca9b9b453e17d8c586174ee5654b67a4b203db984b0f6fa855cb6",
        1845,
    ),
    "default_x3": (
        lambda: scale_arrivals(SimConfig(n_messages=400), 3.0),
        5,
        "cf068944527120ed5ea93583ec76c5b772ed7956e400fb6ba0e33c53587965bb",
        1685,
    ),
    "mm1": (
        lambda: presets.mm1(0.8, 1.0, n_messages=1000),
        1,
        "18d25bc2c00d3b78ec8a48e73d6c253bb050c1a70f4282938d97f60d7a7d2e4b",
        3000,
    ),
    "policies": (
        lambda: every_policy(600),
        11,
        "5f065ff2f6f8f376374cba239e1306db07a3a7256bce88dcea7272726a873677",
        2340,
    ),
    "reference_retry": (
        lambda: reference_retry(400),
        3,
        "471b1323f92ebd2de4c8ab61f681a3ea3e98d2e7cc0c24aba103c1a0d9d1e849",
        2057,
    ),
    "sync": (
        lambda: SimConfig.model_validate({"n_messages": 300, "sync": {"timeout_s": 20}}),
        4,
        "7f07ecd48e20ae9ba6ae5eaa71574d6540456c6c34bcfaa319aa0e7cd1180f74",
        462,
    ),
    "sync_fixed_a2a": (
        lambda: SimConfig.model_validate(
            {
                "n_messages": 300,
                "sync": {"timeout_s": 20, "emit_on_timeout": True},
                "target_session": "a2a",
            }
        ),
        4,
        "9bb959a6b5b833c6cc40b23cb0ed4985aa497f29136404aac713fd9d796d4a95",
        1443,
    ),
    "collab_retry": (
        lambda: SimConfig.model_validate(
            {
                "n_messages": 300,
                "failures": {"rates": {"rate_limit": 0.1, "server_overload": 0.05}},
                "retry": {"kind": "collaboration", "attempt_timeout_s": 90},
                "idempotency": False,
            }
        ),
        8,
        "24a34e548c4084e14f24c67d836dda378f13d4b9c17f624832d7116193dcc4b4",
        1592,
    ),
}

#: name → (sha256, lines) of the case under ``topology="agent_main"``: the hashes pinned
#: before issue 22, when that was the only model
AGENT_MAIN = {
    "collab_retry": (
        "75fcd39495a143a2a7ad3e632f65deaedd5c3ef1ba821d8bb131ce4476c66a4a",
        1608,
    ),
    "default": (
        "12558d82effb97c392faf613c7ed179f121d9e63a7681df72e8276af247f0eb8",
        1833,
    ),
    "default_x3": (
        "2e243b06ae347402b976f6913eea4d46f9fd6ffa878c86c69824840859bce62e",
        1612,
    ),
    "policies": (
        "5bbc9d394a1e1bd8977dcf6044d9a2834fd6821d9adf35800cebba2e7c7d8595",
        2331,
    ),
    "reference_retry": (
        "51b91db5a63347bd224bdb21500c64a46ad1de2899013d0ab7a2ddb9dcbd98fe",
        2052,
    ),
    "sync": (
        "e80b8997ddf9485a047afaeef7338b8acb11135cdf86be8992bff61d67c2ff69",
        435,
    ),
}


@pytest.mark.parametrize("name", sorted(AGENT_MAIN))
def test_the_agent_main_topology_still_writes_the_logs_it_wrote_before_the_lanes(name: str) -> None:
    make, seed, _, _ = CASES[name]
    digest, lines = AGENT_MAIN[name]
    text = write_events(
        simulate(make().model_copy(update={"topology": "agent_main"}), seed=seed).events
    )
    assert text is not None
    assert text.count("\n") == lines
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == digest


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_seed_gives_the_same_log_as_before_the_refactor(name: str) -> None:
    make, seed, digest, lines = CASES[name]
    text = write_events(simulate(make(), seed=seed).events)
    assert text is not None
    assert text.count("\n") == lines
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == digest


@pytest.mark.parametrize("name", ["default", "policies", "sync"])
def test_the_full_flow_gives_the_same_log_as_the_shortcut(name: str) -> None:
    make, seed, _, _ = CASES[name]
    cfg = make()
    assert write_events(simulate(cfg, seed=seed).events) == write_events(
        simulate(cfg, seed=seed, full_flow=True).events
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_log_rendered_and_written_chunk_by_chunk_is_the_same(name: str, tmp_path: Path) -> None:
    # issue 12: event_chunks renders 97 events at a time, write_events writes them as they
    # come; the bytes are those pinned above, and the chunks' lines continue each other
    make, seed, digest, lines = CASES[name]
    res = simulate(make(), seed=seed)
    out = tmp_path / "log.ndjson"
    report = write_events(res.event_chunks(97), out)
    assert hashlib.sha256(out.read_bytes()).hexdigest() == digest
    assert (report.lines, report.canonical) == (lines, lines)
    numbers = [n for chunk in res.event_chunks(97) for n in chunk["line"].to_list()]
    assert numbers == list(range(1, lines + 1))
