"""The one error that means "these data cannot support this analysis" — and nothing else.

A report may turn `NotEnoughData` into a "not enough data" note; every other exception (a
KeyError, a ValueError from a wrong argument) is a bug and must fail loudly, in tests above all.
"""

from __future__ import annotations


class NotEnoughData(Exception):
    """Too few rows, no variation, a column without values, a singular design: the message
    says which, in words for the reader of a report."""
