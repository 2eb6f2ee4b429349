"""Output: a run written as a real-schema coordination log.

It owns everything between the engine's facts and bytes on disk:
:mod:`~a2a_lab.sim.output.events` (the event frame the reference would have emitted for a
run, rendered with Polars over whole columns), :mod:`~a2a_lab.sim.output.ids` (its
seeded identifiers and session keys), :mod:`~a2a_lab.sim.output.logdir` (a rotated log
directory, as the gateway writes one) and :mod:`~a2a_lab.sim.output.inject` (what a
recorded log holds beyond the simulator's clean lines: older wording, odd timestamps,
malformed lines).
"""

from a2a_lab.sim.output.logdir import write_logdir

__all__ = ["write_logdir"]
