"""Analyses of enriched events: conversations, the interaction graph, log health, process
mining and calibration of the simulator (the digital twin)."""
