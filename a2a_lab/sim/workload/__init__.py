"""The workload: who sends what to whom and when, drawn up front, message by message.

It owns every random draw of a simulation: :mod:`~a2a_lab.sim.workload.arrivals` (Poisson,
profiled and trace-driven send times and routes), :mod:`~a2a_lab.sim.workload.plan` (the
:class:`~a2a_lab.sim.workload.plan.Plan` of the messages and the
:class:`~a2a_lab.sim.workload.plan.PolicyPlan` of the policies' inputs, one stream per
purpose so runs share common random numbers), :mod:`~a2a_lab.sim.workload.texts` (the
reply texts a plan picks from) and :mod:`~a2a_lab.sim.workload.presets` (ready-made
configurations: textbook queues and the deployment the committed sample comes from).
"""

from a2a_lab.sim.workload.plan import Plan, PolicyPlan, draw_plan, draw_policy_plan

__all__ = ["Plan", "PolicyPlan", "draw_plan", "draw_policy_plan"]
