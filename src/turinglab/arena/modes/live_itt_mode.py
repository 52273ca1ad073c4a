"""The live integrative Turing test (games/live_itt.py) in the arena.

Its transport is the Strong Turing Test's (`StrongLiveGame`): the same state frame, with fixed
labels A and B, no per-turn choice and a verdict at the end. Two matched people: one judges, the
other is the human agent; the AI agent comes from the config. A practice mode, when the config
names stand-ins, seats one person as the judge and a stand-in agent as the human agent.

Finished study sessions become ITT judgements (`live_itt_judgements`, in the games layer so
that the ITT export reads them without the arena): one row per answerer, so `turinglab itt
score` reads the live test as it reads offline judging.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.base import Agent
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.human import HumanInput
from turinglab.agents.registry import build_agent, display_names
from turinglab.arena.core import frames as F
from turinglab.arena.core.chat_text import clean
from turinglab.arena.core.mode_kits import ModeKit, register
from turinglab.arena.core.modes import ArenaMode, ArenaSettings, ArenaSetup, lobby_pick
from turinglab.arena.core.person_view import InputRejected, PersonView
from turinglab.arena.modes import survey_rewording as rewording
from turinglab.arena.modes.strong_mode import PERSON, StrongArenaMode, StrongLiveGame
from turinglab.config import AgentConfig
from turinglab.games.control_log import VerdictGiven
from turinglab.games.live_itt import (
    JUDGE,
    LABELS,
    SIDES,
    LiveITTExperiment,
    LiveITTGame,
    human_brief,
    life_story,
)
from turinglab.games.live_itt_judgements import live_itt_judgements
from turinglab.games.spec import TrialSpec

__all__ = ["live_itt_judgements", "live_itt_mode", "live_itt_setup_for"]


class LiveITTLiveGame(StrongLiveGame):
    """The STT transport with fixed labels A/B, no per-turn choice and a verdict at the end."""

    mode: LiveITTArenaMode  # its kit binds this class to the live ITT modes (mode_kits.py)

    @property
    def cfg(self) -> LiveITTExperiment:
        return self.mode.cfg

    @property
    def last_turn(self) -> int:
        # The human agent answers the last exchange, then only the judge's verdict is left:
        # the agent leaving then voids nothing (StrongLiveGame.seat_matters).
        return int(self.spec.params["exchanges"])

    def departed_role(self, view: PersonView) -> str:
        return "judge" if view.seat == self.mode.judge else "human agent"

    def _phase(self, view: PersonView) -> str:
        if view.seat != self.mode.judge:
            return super()._phase(view)
        if self.result is not None:
            return "ended"
        turn = self.turns.get(self.current)
        limit = self.last_turn
        if turn is not None and turn.order and self.current >= limit:
            return "waiting" if self.chose else "verdict"
        if turn is None or turn.order:
            return "waiting" if self.sent.get(view.seat) == self.current + 1 else "asking"
        return "waiting"

    def _state(self, view: PersonView) -> F.StrongState:
        state = super()._state(view)
        brief = None
        if view.seat != self.mode.judge:
            brief = human_brief(self.spec.params["condition"], self.cfg.max_words)
        return state.model_copy(
            update={
                "brief": brief,
                "labels": list(LABELS),
                "turns": self.last_turn,
                "can_end": False,
                "scores": None,
                "outcome": self._outcome(),
            }
        )

    def _outcome(self) -> str | None:
        """The reveal, once the verdict is in: who was who, and what each side was asked to do."""
        if self.result is None or self.result.correct is None:
            return None
        p = self.spec.params
        human = LABELS[SIDES.index(p["human_seat"])]
        ai = LABELS[SIDES.index(p["ai_seat"])]
        right = "right" if self.result.correct else "wrong"
        _, name = self._side(p["ai_seat"])
        seat = self.table.seats.get(p["ai_seat"])
        if seat is not None and isinstance(seat.agent, ElizaAgent):
            # ELIZA follows its script, not a prompt: it played no person, whatever the brief.
            task = f"{name} follows a fixed script, so it answered as itself"
            task += (
                "; the person was answering honestly."
                if p["condition"] == "deceitful-ai"
                else "; the person was trying to pass as the AI."
            )
        elif p["condition"] == "deceitful-ai":
            task = (
                "The AI was playing a person from an invented life story "
                f"(“{p['life_story']}”); the person was answering honestly."
            )
        else:
            task = "The person was trying to pass as the AI; the AI was honest about being one."
        # The headline, then (after a newline) what each side was asked to do.
        return f"The judge was {right}: {human} was the person, {ai} was the AI ({name}).\n{task}"

    def _side(self, seat: str) -> tuple[Any, str]:
        agent = self.spec.seats[seat]
        name = self.display_names.get(agent, agent)
        if seat in self.views:
            return "human", "a person"
        if seat == self.spec.params["human_seat"]:  # practice: a stand-in answers as the human
            return "human", f"{name} (standing in for a person)"
        return "ai", name

    def _input(self, view: PersonView, frame: F.ClientFrame) -> None:
        if isinstance(frame, F.Verdict):
            if view.seat != self.mode.judge or self._phase(view) != "verdict":
                raise InputRejected("not-now", "The verdict comes after the last exchange.")
            if frame.choice not in LABELS:
                raise InputRejected("bad-verdict", "Choose A or B.")
            given = VerdictGiven(
                view.seat,
                SIDES[LABELS.index(frame.choice)],
                float(frame.confidence),
                clean(frame.reason),
                self.clock.now(),
            )
            # Logged before the game is given it (the store keeps them in that order): a
            # process taking the game over gives it again, whatever became of this one.
            self.controls.record(given)  # its input id follows (StateFrameGame.handle_once)
            self._give_verdict(view, given)
            return
        if isinstance(frame, F.SendMessage) and frame.image is not None:
            raise InputRejected("no-images", "This game takes text only.")
        if isinstance(frame, F.Preference | F.EndGame):
            raise InputRejected("not-now", "That is not part of this game.")
        # A human agent's answer is taken, and said only once the AI has answered too: the
        # STT's respondent's (StrongLiveGame._send logs it, strong_carry_over.py gives it back).
        super()._input(view, frame)

    def _give_verdict(self, view: PersonView, given: VerdictGiven) -> None:
        self.chose = self.current or self.last_turn
        data = {
            "human": given.choice,
            "confidence": given.confidence,
            "reason": given.reason,
            "at": given.at,
        }
        view.agent.push(HumanInput("verdict", data=data))
        self._push((view.seat,))

    def start(self) -> None:
        # Before any input is taken (a rebuilt game's people send theirs as soon as it is
        # open): what its earlier owners were told that its messages do not say.
        self._carry_over()
        super().start()

    def _carry_over(self) -> None:
        """A game taken over (takeover.restore read its control log back): the judge's
        verdict, given to the game again (it ends on it once it has caught up with the stored
        exchanges), so it is counted once. (A human agent's answer taken and not said yet is
        the STT's to give back, input ids applied before StateFrameGame's.)"""
        for event in self.controls.log.of(VerdictGiven):
            view = self.views.get(event.seat)
            if view is not None:
                self._give_verdict(view, event)

    def _time_limit(self) -> float:
        """From the session's start: one taken over from a process that died keeps its stored
        start (takeover.rebuilt) and the seconds its clock stood still, so it has the time it
        had."""
        per_turn = self.cfg.input_timeout_s * 2
        whole = per_turn * (int(self.spec.params["exchanges"]) + 1) + 60.0
        return max(0.0, whole - (self.clock.now() - self.started_at))


@dataclass(frozen=True)
class LiveITTArenaMode(StrongArenaMode):
    cfg: LiveITTExperiment = field(kw_only=True)  # what its live game reads (briefs, time)


def live_itt_mode(
    name: str, title: str, cfg: LiveITTExperiment, *, solo: bool = False
) -> LiveITTArenaMode:
    """Two matched people: one judges, the other is the human agent; an AI from `cfg`. Solo
    (practice): the person judges; a stand-in from `cfg.stand_ins` is the human agent."""
    if solo and not cfg.stand_ins:
        raise ValueError(f"{name}: a practice mode needs stand_ins (agents answering as people)")
    game = LiveITTGame(cfg)

    def spec_for(index: int, assigned: dict[str, str], seed: int) -> TrialSpec:
        rng = random.Random(seed)
        people = [a for s, a in assigned.items() if s != JUDGE and a.startswith(PERSON)]
        sides = list(SIDES)
        rng.shuffle(sides)
        human_seat, ai_seat = sides
        human = people[0] if people else rng.choice(cfg.stand_ins)
        drawn = rng.choice(cfg.ai_agents)  # drawn either way: the seed's other draws stay put
        ai = lobby_pick(assigned, JUDGE, cfg.ai_agents) or drawn
        return TrialSpec(
            index=index,
            key=f"arena:{name}#{index}",
            game=game.name,
            seed=seed,
            seats={JUDGE: assigned[JUDGE], human_seat: human, ai_seat: ai},
            params={
                "exchanges": rng.choice(cfg.exchange_limits),
                "condition": rng.choice(cfg.conditions),
                "life_story": life_story(rng),
                "human_seat": human_seat,
                "ai_seat": ai_seat,
            },
        )

    return LiveITTArenaMode(
        name=name,
        title=title,
        game=game,
        judge=JUDGE,
        channel_of={seat: "main" for seat in SIDES},
        ai_agents=tuple(cfg.ai_agents),
        verdict="which",
        duration_s=None,
        max_chars=cfg.max_chars,
        solo=solo,
        spec_for=spec_for,
        input_timeout_s=cfg.input_timeout_s,
        cfg=cfg,
    )


def live_itt_setup_for(
    experiment: LiveITTExperiment,
    agent_configs: Mapping[str, AgentConfig],
    settings: ArenaSettings | None = None,
) -> ArenaSetup:
    """What `turinglab serve` offers for a live-itt config: the study mode (two people) and,
    when the config names stand-ins, solo practice as the judge."""
    used = {n: agent_configs[n] for n in experiment.agent_names()}
    agents: dict[str, Agent] = {n: build_agent(n, c) for n, c in used.items()}
    modes: list[ArenaMode] = [live_itt_mode("live-itt", "Live integrative test", experiment)]
    if experiment.stand_ins:
        title = "Practice: you judge"
        modes.append(live_itt_mode("live-itt-practice", title, experiment, solo=True))
    settings = settings or ArenaSettings(seed=experiment.seed)
    return ArenaSetup(modes, agents, display_names(used), settings)


register(
    ModeKit[LiveITTExperiment](
        ("live-itt",),
        LiveITTExperiment,
        live_itt_setup_for,
        LiveITTLiveGame,
        state_frame="strong",  # the STT's state frame (its transport)
        survey_rewording=rewording.LIVE_ITT,
        downloads=(
            (
                "/admin/export/live-itt.csv",  # export_routes.py
                "live-test judgements for <code>turinglab itt score</code>",
            ),
        ),
    )
)
