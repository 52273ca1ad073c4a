"""Number formatting shared by the HTML reports: plain numbers, percentages, p-values."""

from __future__ import annotations

import math
from typing import Any

from turinglab.report.html import Cell

Interval = tuple[float, float]


def fmt(x: float | None, digits: int = 2, signed: bool = False, undefined: str = "–") -> str:
    if x is None or math.isnan(x):
        return undefined
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def num(
    x: float | None,
    ci: Interval | None = None,
    level: float = 0.95,
    *,
    why: str | None = None,
    **kw: Any,
) -> Cell:
    """A numeric cell; its hover shows the CI when there is one, or `why` an undefined value
    is undefined."""
    hover = None
    if ci is not None and not math.isnan(ci[0]):
        hover = f"{level:.0%} CI [{ci[0]:.3f}, {ci[1]:.3f}]"
    elif why is not None and (x is None or math.isnan(x)):
        hover = why
    return Cell(fmt(x, **kw), hover=hover, numeric=True)


def pct(x: float | None, digits: int = 1) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x:.{digits}%}"


def interval(low: float, high: float, digits: int = 1) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "–"
    return f"[{pct(low, digits)}, {pct(high, digits)}]"


def pval(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "–"
    return f"{p:.1e}" if p < 1e-4 else f"{p:.4f}"


def rate_cell(rate: float, low: float, high: float, what: str = "95% exact CI") -> Cell:
    return Cell(pct(rate), hover=f"{what}: {interval(low, high)}", numeric=True)


def numeric(text: str) -> Cell:
    """A right-aligned cell for an already formatted number."""
    return Cell(text, numeric=True)


def p_cell(p: float, alpha: float) -> Cell:
    mark = " *" if math.isfinite(p) and p <= alpha else ""
    return Cell(pval(p) + mark, hover=f"p = {p!r}" if math.isfinite(p) else None, numeric=True)


UNDEFINED = "undefined"


def undefined_num(
    x: float | None, ci: Interval | None = None, level: float = 0.95, **kw: Any
) -> Cell:
    """`num` for estimates that can be undefined (no trials, or all left out by the policy):
    such a cell reads "undefined" — never a number such as p̂ 0.00 or SE 0.00."""
    kw.setdefault("why", "undefined: no trials counted for it under the policy")
    return num(x, ci, level, undefined=UNDEFINED, **kw)
