"""Slow, obvious pure-Python oracles of the reference rules, used only by the tests."""
