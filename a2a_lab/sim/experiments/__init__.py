"""Experiments: many runs of the simulator, summarised with their uncertainty.

It owns what is built on repeated :func:`~a2a_lab.sim.run.simulate` calls:
:mod:`~a2a_lab.sim.experiments.replicate` (independent replications, Student-t confidence
intervals, the executors that run them), :mod:`~a2a_lab.sim.experiments.sweep` (grids of
configuration changes under common random numbers, with a cache),
:mod:`~a2a_lab.sim.experiments.capacity` (the highest arrival rate that meets a latency
target) and :mod:`~a2a_lab.sim.experiments.theory` (the queueing formulas the simulator is
validated against).
"""

from a2a_lab.sim.experiments.capacity import SearchOptions, capacity_search, scale_arrivals
from a2a_lab.sim.experiments.replicate import RunOptions, confidence_interval, replicate
from a2a_lab.sim.experiments.sweep import sweep

__all__ = [
    "RunOptions",
    "SearchOptions",
    "capacity_search",
    "confidence_interval",
    "replicate",
    "scale_arrivals",
    "sweep",
]
