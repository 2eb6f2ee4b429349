"""The engine: the one SimPy model of the gateway and what a run of it records.

It owns the discrete-event run itself: :mod:`~a2a_lab.sim.engine.model` (the model, which
takes a drawn :class:`~a2a_lab.sim.workload.plan.Plan` and walks every message through the
gate, the session lanes and the reply turns, calling the policies at their hooks),
:mod:`~a2a_lab.sim.engine.stations` (the resources: the gate, sessions, the concurrency
lanes and the wait race) and :mod:`~a2a_lab.sim.engine.trace` (the arrays a run fills and
their codes). It draws nothing: every random input comes from the workload's plan, so a
seed gives one run.
"""

from a2a_lab.sim.engine.model import Model, build_model
from a2a_lab.sim.engine.trace import Trace

__all__ = ["Model", "Trace", "build_model"]
