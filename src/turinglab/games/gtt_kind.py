"""The GTT family as a registered game kind: what the generic runner needs to plan, seat and
play it, plus GTT's own extras (adaptive sampling, the outcome's summary columns)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from turinglab.agents.base import Agent
from turinglab.games.gtt import GTTRules, GTTSetup, play_gtt
from turinglab.games.gtt_config import GTTExperiment
from turinglab.games.gtt_plan import (
    GAME,
    GTTTrial,
    cell_of,
    cell_trials,
    gtt_trial,
    plan_cells,
    plan_trials,
    planned_count,
)
from turinglab.games.gtt_prompts import GTTPrompts
from turinglab.games.kinds import (
    ADAPTIVE_SAMPLING,
    OUTCOME_COLUMNS,
    PLANNED_COUNT,
    RESUMABLE,
    GameContext,
    GameKind,
    register,
)
from turinglab.games.spec import GameResult, TrialSpec
from turinglab.games.table import Diverged, Seat, Table
from turinglab.variants import MATRIX_VARIANTS

# Adaptive sampling decides the comparator A ≥ε B, which only the plain GTT cells estimate.
ADAPTIVE_VARIANTS: tuple[str, ...] = MATRIX_VARIANTS
# Outcome columns the GTT analysis reads; they leave `details` for their own columns.
GTT_OUTCOME_COLUMNS = (
    "distinguisher_turns",
    "unknown_turns",
    "first_distinguisher_message",
    "raw_final_message",
    "actor_prompt",
)


class GTTGame:
    name = GAME
    # Which config field makes a design large, for the planner's size check.
    size_field = "experiment.trials_per_pair"

    def __init__(self, experiment: Any, context: GameContext) -> None:
        self.experiment = experiment
        self.context = context
        self.prompts = GTTPrompts.load(experiment.prompts, experiment.prompt_set)
        self.rules = GTTRules(
            experiment.max_distinguisher_turns,
            experiment.on_turn_cap,
            experiment.max_specimen_turns,
            experiment.on_ambiguous_answer,
        )

    def planned_count(self) -> int:
        return planned_count(self.experiment, ADAPTIVE_VARIANTS)

    def plan(self) -> list[TrialSpec]:
        return list(plan_trials(self.experiment, ADAPTIVE_VARIANTS))

    def identity(self) -> dict[str, Any]:
        return {"prompts": self.prompts.identity()}

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        """Fresh seats: the distinguisher, X, and (querying variants) a specimen of the target."""
        return {seat: Seat(seat, name, agents[name]) for seat, name in spec.seats.items()}

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        t = gtt_trial(spec)
        setup = GTTSetup(
            x_is_target=t.x_is_target,
            variant=t.variant,
            target_name=self.context.display_names.get(t.target, t.target),
            budget=t.budget,
        )
        result = await play_gtt(table, setup, self.prompts, self.rules)
        result.details["attempt_seed"] = spec.seed
        return result

    async def resume(self, table: Table, spec: TrialSpec, *, started_at: float) -> GameResult:
        """Go on with a live game from the messages at its table (the arena's takeover of a
        game whose process died): the game is played again from its start over them (the
        table's catch-up: each is checked to be what the game says there, no agent is asked),
        then on as usual. That is the whole of its state: play_gtt draws nothing at random and
        reads no clock (its time limit is the live game's, kept from `started_at` there), and
        its turns follow from who said what."""
        table.catch_up()
        result = await self.play(table, spec)
        if table.catching_up:
            raise Diverged("the game ended before the history it was resumed from")
        return result

    def outcome_columns(self, result: GameResult) -> dict[str, Any]:
        """Move GTT's summary fields out of `details` into the outcome's own columns."""
        return {col: result.details.pop(col, None) for col in GTT_OUTCOME_COLUMNS}

    # ---- adaptive sampling ------------------------------------------------------------------

    @property
    def adaptive(self) -> bool:
        return self.experiment.adaptive is not None

    def _plan(self) -> Any:
        from turinglab.analysis.adaptive import AdaptivePlan

        s = self.experiment.adaptive
        return AdaptivePlan(
            eps=s.eps, alpha=s.alpha, delta=s.delta, batch=s.batch, min_n=s.min_n, max_n=s.max_n
        )

    def more_trials(
        self, planned: Sequence[TrialSpec], rows: Sequence[Mapping[str, Any]]
    ) -> list[TrialSpec]:
        """The next batch for cells whose conclusion (d ≤ ε or not) is unsettled; empty when
        every cell is settled or at max_n. Deterministic given the outcomes: a cell's extra
        trials continue its numbering and seeds, so a resumed run plans what it would have."""
        from turinglab.analysis.adaptive import next_batch

        plan = self._plan()
        have = Counter(cell_of(s) for s in planned)
        cells = [c for c in plan_cells(self.experiment) if c.variant in ADAPTIVE_VARIANTS]
        batch: list[GTTTrial] = []
        total = len(planned)
        for variant in sorted({c.variant for c in cells}):
            mine = [c for c in cells if c.variant == variant]
            pairs = [(c.actor, c.distinguisher) for c in mine]
            more = next_batch([r for r in rows if r["variant"] == variant], plan, pairs)
            for cell in mine:
                # Trials that failed every attempt count against max_n too, so a broken
                # endpoint cannot make a cell grow for ever.
                n = min(more.get((cell.actor, cell.distinguisher), 0), plan.max_n - have[cell])
                if n > 0:
                    batch += cell_trials(
                        cell, self.experiment.seed, have[cell], n, total + len(batch)
                    )
        return list(batch)

    def report_adaptive(
        self, rows: Sequence[Mapping[str, Any]], say: Callable[[str], None]
    ) -> None:
        from turinglab.analysis.adaptive import cell_status, savings

        plan = self._plan()
        cells = [c for c in plan_cells(self.experiment) if c.variant in ADAPTIVE_VARIANTS]
        for variant in sorted({c.variant for c in cells}):
            pairs = [(c.actor, c.distinguisher) for c in cells if c.variant == variant]
            vrows = [r for r in rows if r["variant"] == variant]
            status = cell_status(vrows, plan, pairs)
            calls = sum(r["calls"] for r in vrows) / max(len(vrows), 1)
            saved = savings(status, plan, calls)
            say(
                f"Adaptive sampling ({variant}): {saved.adaptive_trials} trials instead of "
                f"{saved.fixed_trials} for n = {plan.max_n} per cell "
                f"({saved.fraction_saved:.0%} saved, about {saved.calls_saved:.0f} API calls); "
                f"{saved.decided_cells} cells settled, {saved.undecided_cells} stopped at max_n "
                "undecided."
            )


def _gtt(experiment: Any, context: GameContext) -> GTTGame:
    return GTTGame(experiment, context)


KIND = register(
    GameKind(
        GAME,
        GTTExperiment,
        _gtt,
        arena_modes=("gtt-distinguish", "gtt-act", "gtt-watch"),
        capabilities=frozenset({PLANNED_COUNT, OUTCOME_COLUMNS, ADAPTIVE_SAMPLING, RESUMABLE}),
    )
)
