"""Number formatting shared by the HTML reports."""

from __future__ import annotations

import math
from typing import Any

from turinglab.report.html import Cell

Interval = tuple[float, float]


def fmt(x: float | None, digits: int = 2, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def num(x: float | None, ci: Interval | None = None, level: float = 0.95, **kw: Any) -> Cell:
    """A numeric cell; its hover shows the CI when there is one."""
    hover = None
    if ci is not None and not math.isnan(ci[0]):
        hover = f"{level:.0%} CI [{ci[0]:.3f}, {ci[1]:.3f}]"
    return Cell(fmt(x, **kw), hover=hover, numeric=True)
