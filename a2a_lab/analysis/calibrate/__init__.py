"""Fit the simulator to a recorded log (a digital twin), then compare the twin with the log.

:func:`calibrate` reads a coordination log and returns a :class:`~a2a_lab.sim.SimConfig` of
today's policies whose workload and agents are fitted to it; :func:`fit_log` returns the
same configuration with every fitted table (:class:`Calibration`). :func:`compare` holds a
simulated log against the recorded one (quantiles and Kolmogorov-Smirnov statistics of the
first-reply latency per pair and of the turns), :func:`comparison_chart` draws it::

    import a2a_lab as al
    from a2a_lab.analysis.calibrate import calibrate, compare
    from a2a_lab.sim import simulate

    events = al.load(logs).events
    twin = calibrate(events)
    cmp = compare([simulate(twin, seed=k) for k in range(5)], events)
    cmp.overall, cmp.latency, cmp.turns

**What is fitted, and how.** The unit is the ``sessions_send`` exchange of
:func:`a2a_lab.analysis.conversations.conversations`: a send, the target's first reply, ping-pong
turns, the complete. Exchanges that start a sub-agent (``sessions_spawn``: an ``a2a.spawn``
event of the same conversation and direction at most :data:`SPAWN_WINDOW_MS` before the
send) are left out: their result comes back when the sub-agent's whole run ends, with no
wait limit, a path the simulator does not model (:attr:`Calibration.spawned` counts them).

- *Arrivals*: Poisson rates per directed pair, the pair's exchanges over the log's span
  (first to last event); with a day or more of log, an hourly profile (local hour in
  ``timezone``): exchanges per hour of the day over the time the log covered that hour,
  as multipliers of mean 1 (:attr:`Calibration.hourly`, and per pair
  :attr:`Calibration.pair_hours`).
- *Service time per target agent* (the agent's run for a received message): the send →
  first reply time (``firstReplyMs``), fitted by maximum likelihood with
  :class:`scipy.stats.CensoredData`. An exchange that timed out (``no_reply``, reason
  ``timeout``) is right-censored at the wait limit: the run took longer than the requester
  waited. One still unanswered when the log ends is censored at the end of the log. Other
  failures (errors, gate refusals) say nothing about the run time and are left out.
  **Queueing is taken out by fitting only exchanges that found the target idle**: no other
  exchange of the target (as target or requester) had started and not yet completed when
  the send arrived, so the measured time is the run itself (plus the gateway's overhead of
  well under a second). A target with fewer than ``min_samples`` such replies gets the fit
  pooled over all targets.
- *Ping-pong turns*: the time of a turn (from the previous reply to the turn's reply),
  pooled over agents, right-censored at the turn timeout for turns that timed out; the
  maximum turns (the logged ``configuredMaxTurns``); per turn, the chance of each early
  ending of :data:`~a2a_lab.sim.config.ENDINGS` — its count over the turns that could have
  ended that way (a repetition needs a previous ping-pong reply, so only turns from the
  second on count for it). The intents and payload types of the messages, which decide
  each exchange's turn budget by the reference rules, are their shares in the log.
- *Sessions*: the share of main-agent sends from a channel session (``fromSessionType``
  neither ``main`` nor ``subagent``), and the target session (``main``, unless most sends
  target ``agent:<id>:a2a:<conversation>`` sessions). Agents that the log only spawns
  (never a ``sessions_send`` target) run as sub-agents.
- *Policies* (gate, wait limit, turn timeout, announce step, tasks) stay at today's
  reference values; outcome shares (:attr:`Calibration.outcomes`) are reported, and the
  twin's timeouts and refusals come from its fitted times and its gate.
"""

from a2a_lab.analysis.calibrate._compare import Comparison, compare, comparison_chart
from a2a_lab.analysis.calibrate._exchanges import SPAWN_WINDOW_MS, exchanges
from a2a_lab.analysis.calibrate._fits import fit_service_time
from a2a_lab.analysis.calibrate._log import Calibration, calibrate, fit_log

__all__ = [
    "SPAWN_WINDOW_MS",
    "Calibration",
    "Comparison",
    "calibrate",
    "compare",
    "comparison_chart",
    "exchanges",
    "fit_log",
    "fit_service_time",
]
