"""The GTT family's experiment config: its universe, variants, budgets and adaptive sampling.

It lives with the game that reads it (games/gtt_kind.py); config.py puts it in the union of
experiments and re-exports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.games.gtt_prompts import DEFAULT_PROMPT_SET, PromptRole, PromptSet
from turinglab.variants import BUDGET_VARIANTS, FD_VARIANTS, GTTVariant


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PLAIN_GTT: tuple[GTTVariant, ...] = ("gtt",)


class AdaptiveSettings(_Strict):
    """Sample GTT/GTTQ cells in batches until each cell's conclusion (d ≤ ε or not) is settled
    by an anytime-valid confidence sequence, or `max_n` is reached (analysis/adaptive.py)."""

    eps: float = Field(default=0.05, ge=0, lt=0.5, description="comparator threshold ε")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="error budget over all cells")
    delta: float = Field(default=0.05, ge=0, lt=0.5, description="indifference zone around ε")
    batch: int = Field(default=4, ge=1)
    min_n: int = Field(default=4, ge=1, description="trials per cell before the first look")
    max_n: int = Field(default=40, ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> AdaptiveSettings:
        if self.max_n < self.min_n:
            raise ValueError(f"max_n ({self.max_n}) is below min_n ({self.min_n})")
        return self


class GTTExperiment(_Strict):
    """The GTT family over every ordered pair of a universe (self-pairs included) or a list.

    FD variants (fdgtt, fdgttq, gdgtt) play, for each fixed distinguisher D, every ordered
    (actor, target) pair of the universe without D. Budget variants (gtt-turns, gttq-queries)
    sweep `budgets` over `budget_pairs` (default: the same pairs as the plain game).
    """

    # Fields that only choose which trials the design has, not what one trial is: a study
    # that changes them (a model more in the universe) reuses the trials it shares with the
    # old design (runner/plan.py, TrialHasher). A field added later is part of every trial.
    DESIGN_ONLY_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"variants", "universe", "pairs", "trials_per_pair", "distinguishers", "budgets"}
        | {"budget_pairs", "adaptive"}
    )

    game: Literal["gtt"]
    variants: list[GTTVariant] = Field(default_factory=lambda: list(PLAIN_GTT), min_length=1)
    universe: list[str] = Field(min_length=1)
    pairs: list[tuple[str, str]] | None = Field(
        default=None, description="explicit [actor, distinguisher] pairs instead of all of them"
    )
    # Upper bounds far beyond any study (the papers use tens), so that a typo is refused with
    # the field's name instead of a run that never ends or a plan that fills the memory.
    trials_per_pair: int = Field(default=10, ge=1, le=100_000)
    max_distinguisher_turns: int = Field(default=40, ge=1, le=1_000)
    max_specimen_turns: int = Field(default=20, ge=1, le=1_000)
    on_turn_cap: Literal["no-answer", "ask-for-answer"] = "no-answer"
    on_ambiguous_answer: Literal["no-answer", "re-ask"] = Field(
        default="no-answer",
        description="a final message with conflicting <answer> tags, or the instruction's own "
        "example echoed: a no-answer, or asked once more for a forced choice",
    )
    distinguishers: list[str] = Field(
        default_factory=list, description="fixed distinguishers D of the FD variants"
    )
    budgets: list[int] = Field(
        default_factory=list, description="round or query budgets of the bounded variants"
    )
    budget_pairs: list[tuple[str, str]] | None = None
    adaptive: AdaptiveSettings | None = Field(
        default=None, description="sample GTT/GTTQ cells adaptively instead of a fixed n"
    )
    seed: int = 0
    prompt_set: PromptSet = Field(
        default=DEFAULT_PROMPT_SET,
        description="built-in prompts: 'paper' (what the paper's B.1 prompts tell each role, in "
        "our words) or 'v1' (the first releases' wording)",
    )
    prompts: dict[PromptRole, Path] = Field(
        default_factory=dict, description="template files that replace the built-in prompts"
    )

    @model_validator(mode="after")
    def _consistent(self) -> GTTExperiment:
        dupes = {a for a in self.universe if self.universe.count(a) > 1}
        if dupes:
            raise ValueError(f"universe lists {sorted(dupes)} more than once")
        for field_name in ("pairs", "budget_pairs"):
            for actor, distinguisher in getattr(self, field_name) or []:
                for name in (actor, distinguisher):
                    if name not in self.universe:
                        raise ValueError(
                            f"{field_name} ({actor}, {distinguisher}): {name!r} is not in universe"
                        )
        if len(set(self.variants)) != len(self.variants):
            raise ValueError("variants lists a variant more than once")
        if set(self.variants) & set(FD_VARIANTS) and not self.distinguishers:
            raise ValueError("the FD variants need `distinguishers` (the fixed judges D)")
        if set(self.variants) & set(BUDGET_VARIANTS) and (
            not self.budgets or min(self.budgets) < 1
        ):
            raise ValueError("gtt-turns and gttq-queries need `budgets` (positive integers)")
        return self

    def agent_names(self) -> list[str]:
        """Every agent the design seats: the universe and the fixed distinguishers."""
        return list(dict.fromkeys([*self.universe, *self.distinguishers]))

    def ordered_pairs(self) -> list[tuple[str, str]]:
        if self.pairs is not None:
            return [tuple(p) for p in self.pairs]  # type: ignore[misc]
        return [(a, b) for a in self.universe for b in self.universe]
