"""The simulator: a SimPy model of the gateway whose output is a real-schema coordination log.

Configure (:class:`SimConfig`, or a textbook queue from :mod:`~a2a_lab.sim.workload.presets`), run
(:func:`simulate`), then read the per-message frame, the session time series and the
summary, or push :attr:`SimResult.events` through the same analyses as a recorded log::

    from a2a_lab import sim

    res = sim.simulate(sim.SimConfig(), seed=1)
    res.summary()                                   # waits, latency percentiles, rates
    res.messages                                    # one row per message
    al.conversations(al.enrich(res.events))         # the log, analysed like a real one

Sub-packages, in the order data flows: :mod:`~a2a_lab.sim.config` (what a run is
configured with: :class:`SimConfig`, with :mod:`~a2a_lab.sim.distributions` and
:mod:`~a2a_lab.sim.budget`) → :mod:`~a2a_lab.sim.workload` (every random draw, per
message: arrivals, the plan, presets) → :mod:`~a2a_lab.sim.engine` (the one SimPy model,
its stations and the trace it fills, calling :mod:`~a2a_lab.sim.policies` at its hooks) →
:mod:`~a2a_lab.sim.run` (:func:`simulate` and its results) → :mod:`~a2a_lab.sim.output`
(the log: events, identifiers, a rotated directory, injected defects);
:mod:`~a2a_lab.sim.experiments` replicates runs, sweeps grids, searches capacity and holds
the queueing formulas the simulator is checked against.

The flat modules of before (``a2a_lab.sim.plan``, ``.model``, ``.sweep``, ...) moved into
these sub-packages; importing one by its old path fails with a message naming the new one
(:data:`MOVED`).
"""

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

from a2a_lab.sim import policies
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
from a2a_lab.sim.experiments import theory
from a2a_lab.sim.experiments.replicate import confidence_interval, replicate
from a2a_lab.sim.output import write_logdir
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
from a2a_lab.sim.workload import presets
from a2a_lab.sim.workload.plan import Plan, draw_plan

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
    "write_logdir",
]

#: Each module of the flat layout that moved, and where it lives now.
MOVED: dict[str, str] = {
    "a2a_lab.sim._events": "a2a_lab.sim.output.events",
    "a2a_lab.sim._ids": "a2a_lab.sim.output.ids",
    "a2a_lab.sim._texts": "a2a_lab.sim.workload.texts",
    "a2a_lab.sim.arrivals": "a2a_lab.sim.workload.arrivals",
    "a2a_lab.sim.capacity": "a2a_lab.sim.experiments.capacity",
    "a2a_lab.sim.experiment": "a2a_lab.sim.experiments.replicate",
    "a2a_lab.sim.failures": "a2a_lab.sim.policies.failures",
    "a2a_lab.sim.inject": "a2a_lab.sim.output.inject",
    "a2a_lab.sim.limits": "a2a_lab.sim.policies.limits",
    "a2a_lab.sim.model": "a2a_lab.sim.engine.model",
    "a2a_lab.sim.plan": "a2a_lab.sim.workload.plan",
    "a2a_lab.sim.policy_plan": "a2a_lab.sim.workload.plan",
    "a2a_lab.sim.presets": "a2a_lab.sim.workload.presets",
    "a2a_lab.sim.retry": "a2a_lab.sim.policies.retry",
    "a2a_lab.sim.stations": "a2a_lab.sim.engine.stations",
    "a2a_lab.sim.sweep": "a2a_lab.sim.experiments.sweep",
    "a2a_lab.sim.theory": "a2a_lab.sim.experiments.theory",
    "a2a_lab.sim.trace": "a2a_lab.sim.engine.trace",
}


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Fails the import of a moved module with one line naming its new path.

    Without it the old path fails with a bare ``No module named ...``; a re-export module per
    old path would keep the flat layout alive beside the new one.
    """

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is not None:
            raise ModuleNotFoundError(f"{fullname} moved to {new} (issue 25)", name=fullname)
        return None


if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())
