"""The reference system's behaviour, pure: rule set, runtime rules, JavaScript string semantics.

Nothing here imports from the rest of a2a_lab; every other layer builds on it.
"""
