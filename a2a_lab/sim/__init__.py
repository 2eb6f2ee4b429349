"""The simulator: a SimPy model of the gateway whose output is a real-schema coordination log.

Configure (:class:`SimConfig`, or a textbook queue from :mod:`~a2a_lab.sim.presets`), run
(:func:`simulate`), then read the per-message frame, the session time series and the
summary, or push :attr:`SimResult.events` through the same analyses as a recorded log::

    from a2a_lab import sim

    res = sim.simulate(sim.SimConfig(), seed=1)
    res.summary()                                   # waits, latency percentiles, rates
    res.messages                                    # one row per message
    al.conversations(al.enrich(res.events))         # the log, analysed like a real one

Modules, in the order data flows: :mod:`~a2a_lab.sim.config` (with
:mod:`~a2a_lab.sim.distributions` and the policies of :mod:`~a2a_lab.sim.policies`:
:mod:`~a2a_lab.sim.failures`, :mod:`~a2a_lab.sim.retry`, :mod:`~a2a_lab.sim.limits`) →
:mod:`~a2a_lab.sim.plan` and :mod:`~a2a_lab.sim.policy_plan` (every random draw, per
message) → :mod:`~a2a_lab.sim.model` (the one SimPy model, built of
:mod:`~a2a_lab.sim.stations`, calling the policies at its hooks) →
:mod:`~a2a_lab.sim.trace` (what a run produced) → :mod:`~a2a_lab.sim.run` (results, the
log) → :mod:`~a2a_lab.sim.output` (a rotated log directory); :mod:`~a2a_lab.sim.experiment`
and :mod:`~a2a_lab.sim.sweep` replicate runs, :mod:`~a2a_lab.sim.theory` holds the queueing
formulas they are checked against.
"""

from a2a_lab.sim import policies, presets, theory
from a2a_lab.sim.config import (
    AgentConfig,
    AgentRate,
    AnnouncePolicy,
    GatePolicy,
    LanePools,
    MessageMix,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    SimConfig,
    TaskPolicy,
    TraceArrivals,
    TraceSend,
    WaitPolicy,
)
from a2a_lab.sim.distributions import Deterministic, Empirical, Exponential, Gamma, Lognormal
from a2a_lab.sim.experiment import confidence_interval, replicate
from a2a_lab.sim.output import write_log
from a2a_lab.sim.plan import Plan, draw_plan
from a2a_lab.sim.policies import (
    CollaborateLimit,
    CollaborationRetry,
    ExponentialRetry,
    FailurePolicy,
    IdempotencyPolicy,
    LoopGuardPolicy,
    RateLimitPolicy,
    ReferenceRetry,
    RelayPolicy,
    RetryBudget,
    SyncPath,
)
from a2a_lab.sim.run import SimResult, simulate

__all__ = [
    "AgentConfig",
    "AgentRate",
    "AnnouncePolicy",
    "CollaborateLimit",
    "CollaborationRetry",
    "Deterministic",
    "Empirical",
    "Exponential",
    "ExponentialRetry",
    "FailurePolicy",
    "Gamma",
    "GatePolicy",
    "IdempotencyPolicy",
    "LanePools",
    "Lognormal",
    "LoopGuardPolicy",
    "MessageMix",
    "PairRate",
    "PingPongPolicy",
    "Plan",
    "PoissonArrivals",
    "RateLimitPolicy",
    "ReferenceRetry",
    "RelayPolicy",
    "RetryBudget",
    "SimConfig",
    "SimResult",
    "SyncPath",
    "TaskPolicy",
    "TraceArrivals",
    "TraceSend",
    "WaitPolicy",
    "confidence_interval",
    "draw_plan",
    "policies",
    "presets",
    "replicate",
    "simulate",
    "theory",
    "write_log",
]
