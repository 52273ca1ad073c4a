"""The GTT family's variant names: the one list every layer imports (analysis included, so it
sits below the games)."""

from __future__ import annotations

from typing import Literal

GTTVariant = Literal["gtt", "gttq", "gtt-turns", "gttq-queries", "fdgtt", "fdgttq", "gdgtt"]

VARIANTS: tuple[GTTVariant, ...] = (
    "gtt",
    "gttq",
    "gtt-turns",
    "gttq-queries",
    "fdgtt",
    "fdgttq",
    "gdgtt",
)
# The distinguisher is the target's own type: a d̂ matrix, relations, Turing scores.
MATRIX_VARIANTS: tuple[GTTVariant, ...] = ("gtt", "gttq")
# Bounded interaction: controlled-turn and controlled-query budgets.
BUDGET_VARIANTS: tuple[GTTVariant, ...] = ("gtt-turns", "gttq-queries")
# Self-distinguisher variants (everything but the fixed-distinguisher ones).
GTT_VARIANTS: tuple[GTTVariant, ...] = (*MATRIX_VARIANTS, *BUDGET_VARIANTS)
# A fixed third agent D judges.
FD_VARIANTS: tuple[GTTVariant, ...] = ("fdgtt", "fdgttq", "gdgtt")
# The actor queries a specimen of the target before the main game.
ACTOR_QUERIES: tuple[GTTVariant, ...] = ("gttq", "gttq-queries", "fdgttq")
# A fresh specimen of the target is seated.
SPECIMEN_VARIANTS: tuple[GTTVariant, ...] = (*ACTOR_QUERIES, "gdgtt")
