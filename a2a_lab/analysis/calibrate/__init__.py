"""Fit the simulator to a recorded log (a digital twin), then compare the twin with the log.

:func:`fit_log` reads a coordination log and returns the twin, a
:class:`~a2a_lab.sim.SimConfig` of today's policies whose workload and agents are fitted to
it (:attr:`Calibration.config`), with every fitted table (:class:`Calibration`). :func:`compare` holds a
simulated log against the recorded one (quantiles and Kolmogorov-Smirnov statistics of the
first-reply latency per pair and of the turns), :func:`comparison_chart` draws it::

    import a2a_lab as al
    from a2a_lab.analysis.calibrate import compare, fit_log
    from a2a_lab.sim import simulate

    events = al.load(logs).events
    twin = fit_log(events).config
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
  ``tz``): exchanges per hour of the day over the time the log covered that hour,
  as multipliers of mean 1 (:attr:`Calibration.hourly`, and per pair
  :attr:`Calibration.pair_hours`).
- *Service time per target agent* (the agent's run for a received message), fitted by
  maximum likelihood on exact and right-censored times (:mod:`._fits`). **Each agent's
  family is chosen by AIC** among the simulator's (exponential, gamma, lognormal;
  ``family=`` forces one), and its mean and cv come with **95 % profile-likelihood
  intervals** (:attr:`Calibration.service`: ``mean_lo``, ``mean_hi``, ``cv_lo``,
  ``cv_hi``, ``aic_<family>``). **Queueing is taken out by measuring each run from its
  start, where the log tells it** (:mod:`~a2a_lab.analysis.calibrate._occupancy`), on the
  reference's two-level queue (runtime §1): a run queues on its session lane (the
  send's ``targetSessionKey``, ``agent:<target>:a2a:<conversationId>`` on today's gateway,
  the target's main session on older ones; a requester's turns on the session it sent
  from), one run at a time, first come first served, then for a slot of the gateway-wide
  ``nested`` lane (``nested_limit``, 8). A run starts at ``max(request, lane free, pool
  slot free)``; the fit uses it where the log shows the slot free (fewer than
  ``nested_limit`` runs requested and not yet over). Every run the log shows (first
  replies, ping-pong turns on either side, announce steps) is a job with a request time
  and mostly an end. Runs that end unseen (a
  flow that got no reply or was refused does not cancel its run; a timed-out turn and the
  announce step go on) hold the session until a later run there has ended. A run queued
  just behind a turn that timed out or an announce step that outlived its timeout (whose
  own start is known) counts with its start in distribution: the hidden run's end drawn
  from the agent's fitted turn time past what the log says
  (:mod:`~a2a_lab.analysis.calibrate._hidden`); any other run whose start depends on a
  hidden run is not used. A run that timed out (``no_reply``, reason
  ``timeout``) is right-censored at the rest of the wait limit; one still unanswered in the
  last wait limit of the log is censored at the log's end. Errors and gate refusals say
  nothing about the run time and are left out. A target with fewer than ``min_samples``
  usable replies gets the fit pooled over all targets.
- *Ping-pong turns*: the time of each turn per speaking agent (the same way: from its start
  where the log tells it, censored at the turn timeout for turns that timed out), pooled
  where sparse (:attr:`Calibration.turn_times`); the maximum turns (the logged
  ``configuredMaxTurns``); per turn, the chance of each early ending of
  :data:`~a2a_lab.sim.config.ENDINGS` — its count over the turns that could have ended that
  way (a repetition needs a previous ping-pong reply, so only turns from the second on
  count for it). The intents and payload types of the messages, which decide each
  exchange's turn budget by the reference rules, are their shares in the log.
- *Sessions*: the share of main-agent sends from a channel session (``fromSessionType``
  neither ``main`` nor ``subagent``), and the target session (``main``, unless most sends
  target ``agent:<id>:a2a:<conversation>`` sessions). Agents that the log only spawns
  (never a ``sessions_send`` target), or whose every logged session is a sub-agent's, run
  as sub-agents.
- *Failures, retries, tasks* (:mod:`~a2a_lab.analysis.calibrate._settings`): run-level
  error chances from the ``no_reply`` reasons, call-level ones from ``a2a.retry`` events,
  the reference retry loop with the logged ``maxAttempts``; task durations and gaps from
  ``task.*`` events (:attr:`Calibration.failures`, :attr:`Calibration.tasks`).
- *Policies* (gate, wait limit, turn timeout, announce step) stay at today's reference
  values; outcome shares (:attr:`Calibration.outcomes`) are reported, and the twin's
  timeouts and refusals come from its fitted times and its gate.

**Saturation.** A lane that is never idle leaves only the few runs that found it idle to
fit, so each agent's most loaded lane is reported with its busy share and offered load
(:mod:`._saturation`); at or above 0.95 the agent is flagged ``saturated`` and named in a
:class:`FitWarning` (also in :attr:`Calibration.warnings`). Events more than a year from
the rest of the log are left out of every span and fit, with a warning
(:mod:`._window`).

The session bookkeeping takes a requester's channel sessions as one (which can only make
a run look busy), and assumes a send without ``targetSessionKey`` goes to the target's
main session.
"""

from a2a_lab.analysis.calibrate._compare import Comparison, compare, comparison_chart
from a2a_lab.analysis.calibrate._exchanges import SPAWN_WINDOW_MS, exchanges
from a2a_lab.analysis.calibrate._fits import fit_service_time
from a2a_lab.analysis.calibrate._log import Calibration, GatewayLimits, fit_log
from a2a_lab.analysis.calibrate._window import FitWarning

__all__ = [
    "SPAWN_WINDOW_MS",
    "Calibration",
    "Comparison",
    "FitWarning",
    "GatewayLimits",
    "compare",
    "comparison_chart",
    "exchanges",
    "fit_log",
    "fit_service_time",
]
