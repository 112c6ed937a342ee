"""Moved to ``sentinel_memory.core.unicode14``: this path imports it, with a ``DeprecationWarning``, until the next release (LAY-5)."""

from ._moved import moved

moved(__name__)
