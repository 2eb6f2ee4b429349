"""a2a_lab: analyse, check and simulate multi-agent (A2A) coordination event logs."""

__version__ = "0.1.0"
