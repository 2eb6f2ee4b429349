"""Tests of a2a_lab.sim.config, distributions and presets: defaults, loading, field errors."""

from __future__ import annotations

import math

import numpy as np
import pydantic
import pytest

from a2a_lab.reference.runtime import DEFAULT_CONCURRENCY, PING_PONG_LIMITS_MAIN, REFERENCE_RETRY
from a2a_lab.sim import (
    AgentConfig,
    Deterministic,
    Empirical,
    Exponential,
    Gamma,
    Lognormal,
    PairRate,
    PoissonArrivals,
    SimConfig,
    TraceArrivals,
    presets,
)

# quasi-uniform points: the quantile function on them integrates the distribution
GRID = (np.arange(200_000) + 0.5) / 200_000


def test_defaults_are_todays_reference_values() -> None:
    cfg = SimConfig()
    assert (
        cfg.gate is not None
        and cfg.wait is not None
        and cfg.announce is not None
        and cfg.tasks is not None
    )
    assert cfg.gate.concurrency_config() == DEFAULT_CONCURRENCY
    assert cfg.gate.corrected_release is False
    assert cfg.wait.chunk_s * 1000 == REFERENCE_RETRY.chunk_ms
    assert cfg.wait.max_wait_s * 1000 == REFERENCE_RETRY.max_wait_ms
    assert cfg.ping_pong.max_turns == PING_PONG_LIMITS_MAIN.default == 5
    assert cfg.ping_pong.turn_timeout_s == 120
    assert cfg.announce.timeout_s == 30
    # the reference gateway today: conversation-scoped A2A sessions and lane pools (runtime §1)
    assert cfg.topology == "lanes" and cfg.target_session is None
    assert cfg.target_session_kind == "a2a"
    assert (cfg.lanes.nested, cfg.lanes.main, cfg.lanes.subagent, cfg.lanes.cron) == (8, 4, 8, 1)
    assert cfg.mix.payload_turns == "reference_caller"
    assert all(a.session_concurrency == 1 for a in cfg.agents)
    assert {a.kind for a in cfg.agents} == {"main", "subagent"}


def test_json_round_trip_gives_an_equal_config() -> None:
    cfg = SimConfig(gate=None, n_messages=10, duration_s=99.5)
    text = cfg.to_json()
    assert SimConfig.from_json(text) == cfg
    assert (
        '"from": "client"' in presets.mm1(1.0, 2.0, n_messages=5).to_json()
    )  # pairs use the aliases


def test_toml_false_switches_policies_off_and_true_keeps_defaults(tmp_path) -> None:
    path = tmp_path / "what-if.toml"
    path.write_text(
        """
n_messages = false
duration_s = 3600
gate = false
wait = true
announce = false
tasks = false
[[agents]]
id = "ruda"
[[agents]]
id = "eden"
session_concurrency = 2
service = {kind = "gamma", mean_s = 30, cv = 0.5}
[workload]
kind = "poisson"
pairs = [{from = "ruda", to = "eden", rate_per_s = 0.02}]
[ping_pong]
max_turns = 0
""",
        encoding="utf-8",
    )
    cfg = SimConfig.from_file(path)
    assert cfg.n_messages is None and cfg.duration_s == 3600
    assert cfg.gate is None and cfg.announce is None and cfg.tasks is None
    assert cfg.wait is not None and cfg.wait.max_wait_s == 300
    assert cfg.agents[1].service == Gamma(mean_s=30, cv=0.5)
    assert cfg.agents[1].session_concurrency == 2
    json_path = tmp_path / "what-if.json"
    json_path.write_text(cfg.to_json(), encoding="utf-8")
    assert SimConfig.from_file(json_path) == cfg


def test_a_file_of_another_kind_or_broken_toml_is_refused(tmp_path) -> None:
    yaml = tmp_path / "cfg.yaml"
    yaml.write_text("gate: false\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.json or \.toml"):
        SimConfig.from_file(yaml)
    with pytest.raises(ValueError, match="invalid TOML"):
        SimConfig.from_toml("gate = = 1")


def _error_locations(data: dict) -> list[str]:
    with pytest.raises(pydantic.ValidationError) as info:
        SimConfig.model_validate(data)
    return [".".join(str(p) for p in e["loc"]) + " " + e["msg"] for e in info.value.errors()]


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (
            {"agents": [{"id": "a", "service": {"kind": "lognormal", "mean_s": 1, "cv": -2}}]},
            "agents.0.service.lognormal.cv",
        ),
        (
            {"agents": [{"id": "a", "servce": {"kind": "exponential", "mean_s": 1}}]},
            "agents.0.servce",
        ),
        ({"agents": [{"id": "a:b"}]}, "agents.0.id"),
        ({"gate": {"max_concurrent_flows": 0}}, "gate.max_concurrent_flows"),
        ({"wait": {"chunk_s": "soon"}}, "wait.chunk_s"),
        ({"ping_pong": {"max_turns": 31}}, "ping_pong.max_turns"),
        ({"ping_pong": {"endings": {"conclusion": 0.7, "minimal": 0.6}}}, "ping_pong.endings"),
        ({"ping_pong": {"endings": {"typo": 0.1}}}, "ping_pong.endings.typo"),
        ({"mix": {"payload_share": 1.5}}, "mix.payload_share"),
        ({"mix": {"intents": {"gossip": 1.0}}}, "mix.intents.gossip"),
        (
            {
                "workload": {
                    "kind": "poisson",
                    "pairs": [{"from": "main", "to": "nobody", "rate_per_s": 1}],
                }
            },
            "workload.pairs.0.to",
        ),
        (
            {
                "workload": {
                    "kind": "poisson",
                    "agents": [{"agent": "main", "rate_per_s": 1, "targets": {"ghost": 1}}],
                }
            },
            "workload.agents.0.targets.ghost",
        ),
        ({"workload": {"kind": "poisson", "pairs": [], "agents": []}}, "workload.poisson"),
        ({"workload": {"kind": "trace"}}, "workload.trace"),
        (
            {
                "workload": {
                    "kind": "poisson",
                    "hourly_profile": [1.0] * 23,
                    "agents": [{"agent": "main", "rate_per_s": 1}],
                }
            },
            "workload.poisson.hourly_profile",
        ),
        ({"agents": [{"id": "a"}, {"id": "a"}]}, "duplicate id(s) a"),
        ({"n_messages": None, "duration_s": None}, "need `n_messages` or `duration_s`"),
    ],
)
def test_validation_errors_name_the_field(data: dict, where: str) -> None:
    errors = _error_locations(data)
    assert any(where in e for e in errors), errors


def test_an_unlisted_agent_gets_the_agent_defaults() -> None:
    cfg = SimConfig()
    assert cfg.agent("ruda").id == "ruda"
    assert cfg.agent("stranger") == AgentConfig(id="stranger")
    assert cfg.agent("jiwoo").kind == "subagent"


def test_total_rate_adds_pairs_and_agents() -> None:
    cfg = SimConfig(
        agents=[AgentConfig(id="a"), AgentConfig(id="b")],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent="a", to_agent="b", rate_per_s=0.25)],
            agents=[{"agent": "b", "rate_per_s": 0.5}],
        ),
    )
    assert cfg.total_rate_per_s == 0.75
    trace = SimConfig(workload=TraceArrivals(sends=[{"at_s": 0, "from": "main", "to": "ruda"}]))
    assert math.isnan(trace.total_rate_per_s)


# -- distributions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dist",
    [
        Exponential(mean_s=2.5),
        Deterministic(value_s=60),
        Lognormal(mean_s=1.0, cv=0.5),
        Gamma(mean_s=30.0, cv=0.4),
        Gamma(mean_s=1.0, cv=2.0),
    ],
)
def test_quantile_functions_have_the_stated_mean_and_cv(dist) -> None:
    x = dist.ppf(GRID)
    assert x.mean() == pytest.approx(dist.mean, rel=2e-3)
    cv = getattr(dist, "cv", 0.0) if not isinstance(dist, Exponential) else 1.0
    assert x.std() / x.mean() == pytest.approx(cv, rel=2e-2, abs=1e-12)


def test_lognormal_parameters_match_scipy_moments() -> None:
    d = Lognormal(mean_s=1.0, cv=2.0)
    assert d.sigma == pytest.approx(math.sqrt(math.log(5.0)))
    assert d.mu == pytest.approx(-math.log(5.0) / 2)
    # the quantile function at the median is exp(mu)
    assert d.ppf(np.array([0.5]))[0] == pytest.approx(math.exp(d.mu))


def test_empirical_draws_only_observed_values_with_their_frequencies() -> None:
    d = Empirical(samples_s=[1.0, 1.0, 1.0, 7.0])
    x = d.ppf(GRID)
    assert set(np.unique(x)) == {1.0, 7.0}
    assert (x == 7.0).mean() == pytest.approx(0.25)
    assert d.mean == 2.5
    with pytest.raises(pydantic.ValidationError, match="samples_s"):
        Empirical(samples_s=[1.0, -1.0])


# -- presets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cfg", "service", "servers"),
    [
        (presets.mm1(0.8, 1.0, n_messages=10), Exponential(mean_s=1.0), 1),
        (presets.mmc(2.4, 1.0, 3, n_messages=10), Exponential(mean_s=1.0), 3),
        (presets.md1(0.8, 1.0, n_messages=10), Deterministic(value_s=1.0), 1),
        (presets.mg1_lognormal(0.5, 1.0, 2.0, n_messages=10), Lognormal(mean_s=1.0, cv=2.0), 1),
    ],
)
def test_presets_are_the_full_model_with_every_other_policy_off(
    cfg: SimConfig, service, servers: int
) -> None:
    assert (cfg.gate, cfg.wait, cfg.announce, cfg.tasks) == (None, None, None, None)
    assert (
        cfg.ping_pong.max_turns == 0
        and cfg.channel_share == 0.0
        and cfg.topology == "agent_main"
        and cfg.target_session_kind == "main"
    )
    server = cfg.agent("server")
    assert server.service == service and server.session_concurrency == servers
    assert isinstance(cfg.workload, PoissonArrivals)
    assert [(p.from_agent, p.to_agent) for p in cfg.workload.pairs] == [("client", "server")]
    assert cfg.n_messages == 10


# -- topology ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "topology", "kind"),
    [
        ({}, "lanes", "a2a"),
        ({"topology": "agent_main"}, "agent_main", "main"),
        # the deprecated knob alone keeps a configuration written before `topology` as it ran
        ({"target_session": "main"}, "agent_main", "main"),
        ({"target_session": "a2a"}, "agent_main", "a2a"),
        # both given: the topology's pools with the sessions asked for
        ({"topology": "lanes", "target_session": "main"}, "lanes", "main"),
    ],
)
def test_topology_and_the_deprecated_target_session(
    given: dict[str, str], topology: str, kind: str
) -> None:
    cfg = SimConfig.model_validate(given)
    assert (cfg.topology, cfg.target_session_kind) == (topology, kind)
    assert SimConfig.from_json(cfg.to_json()) == cfg


def test_lane_limits_are_validated() -> None:
    assert SimConfig.model_validate({"lanes": {"nested": 2}}).lanes.nested == 2
    with pytest.raises(ValueError, match="lanes.nested"):
        SimConfig.model_validate({"lanes": {"nested": 0}})
    with pytest.raises(ValueError, match="lanes.lane"):
        SimConfig.model_validate({"lanes": {"lane": 3}})
    with pytest.raises(ValueError, match="topology"):
        SimConfig.model_validate({"topology": "main"})
