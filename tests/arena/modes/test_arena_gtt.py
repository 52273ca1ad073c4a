"""People in the GTT over real websockets (a real uvicorn server): a person judges (GDGTT: study
the target, then tell it from an imitator), a person imitates (GTTQ: study the judge's model,
then fool it), a person watches two scripted models play. The game is the engine's own GTT;
what the person typed and decided is what the table and the record hold."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena_fixtures import Person, running_arena
from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.gtt_mode import gtt_modes
from turinglab.config import GTTExperiment
from turinglab.games.kinds import GameContext
from turinglab.store.database import Store
from turinglab.study_export import study_jsonl

ZORBLAX, QUILLON = "zorblax-model-7", "quillon-model-3"  # agent names hidden until the end
NAMES = {ZORBLAX: "Zorblax-7B", QUILLON: "Quillon-3B"}
JUDGE_LINES = ["Hello. Which number comes after 41?", "Name a colour.", "<answer>1</answer>"]


class ThinkingAgent(ScriptedAgent):
    """Scripted replies after a short pause, so a person's second send lands while it thinks."""

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        await asyncio.sleep(0.15)
        return await super().reply(history, ctx)


def gtt_setup(variants: tuple[str, ...] = ("gtt",), seed: int = 3) -> ArenaSetup:
    """Two scripted models; Zorblax ends its third message with a verdict when it judges."""
    experiment = GTTExperiment.model_validate(
        {
            "game": "gtt",
            "universe": [ZORBLAX, QUILLON],
            "variants": list(variants),
            "max_distinguisher_turns": 4,
            "max_specimen_turns": 2,
            "on_turn_cap": "ask-for-answer",
        }
    )
    agents: dict[str, Agent] = {
        ZORBLAX: ThinkingAgent(ZORBLAX, JUDGE_LINES),
        QUILLON: ThinkingAgent(QUILLON, ["forty-two, obviously", "teal", "<answer>0</answer>"]),
    }
    modes = gtt_modes(experiment, GameContext(display_names=NAMES))
    return ArenaSetup(modes, agents, NAMES, ArenaSettings(seed=seed))


async def until_state(
    person: Person, test: Callable[[dict[str, Any]], bool], timeout: float = 10
) -> dict[str, Any]:
    while True:
        frame = await person.until("gtt", timeout)
        if test(frame):
            return frame


def lines(state: dict[str, Any], chat: str) -> list[tuple[str, str]]:
    (found,) = [c for c in state["chats"] if c["name"] == chat]
    return [(line["sender"], line["text"]) for line in found["lines"]]


async def join(base: str, mode: str) -> tuple[Person, dict[str, Any]]:
    person = Person(base)
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=mode, consent=True)
    return person, await person.until("gtt")


async def test_a_person_distinguishes_after_studying_the_target() -> None:
    with running_arena(gtt_setup()) as (base, app):
        person, first = await join(base, "gtt-distinguish")
        assert first["role"] == "distinguisher" and first["practice"]
        target = first["target"]
        assert target in NAMES.values() and target in first["brief"]
        state = await until_state(person, lambda s: s["phase"] == "writing")
        assert (state["chat"], state["can_stop"], state["can_decide"]) == ("study", True, False)

        # Study: the message goes to a fresh copy of the target, whose reply comes back.
        await person.send(type="message", channel="test", text="wrong chat")
        assert (await person.until("error"))["code"] == "bad-channel"
        await person.send(type="message", channel="study", text="Who are you?")
        state = await until_state(person, lambda s: len(lines(s, "study")) == 2)
        assert lines(state, "study")[0] == ("you", "Who are you?")
        await person.send(type="end")  # done studying: the game receives STOP
        state = await until_state(person, lambda s: s["chat"] == "test")
        assert not state["can_decide"] and state["turns_left"] == 4

        # The test: no answer tags in messages, no verdict before the opening message.
        await person.send(type="message", channel="test", text="<answer>1</answer>")
        assert (await person.until("error"))["code"] == "no-answer-tags"
        await person.send(type="verdict", choice="target", confidence=5)
        assert (await person.until("error"))["code"] == "not-now"
        await person.send(type="message", channel="test", text="What is 6 times 7?")
        await person.send(type="message", channel="test", text="too soon")
        assert (await person.until("error"))["code"] == "wait"
        state = await until_state(person, lambda s: s["can_decide"])
        assert [s for s, _ in lines(state, "test")] == ["you", "them"]
        assert state["turns_left"] == 3 and state["reveal"] is None
        await person.send(type="verdict", choice="imitator", confidence=70, reason="too eager")
        end = await until_state(person, lambda s: s["reveal"] is not None)
        assert end["phase"] == "ended"

        game = next(iter(app.state.arena.games.values()))
        trial = game.spec.params
        assert trial["variant"] == "gdgtt" and trial["distinguisher"].startswith("person:")
        x_is_target = trial["x_is_target"]
        reveal = end["reveal"]
        assert reveal["verdict"] == 0 and reveal["correct"] is (not x_is_target)
        assert reveal["imitator"] is (not x_is_target) and reveal["judge"] == "you"
        actor = NAMES[trial["actor"]]
        assert reveal["unknown"] == (target if x_is_target else f"{actor} imitating {target}")
        # The table holds what the person did, as the batch game would store it.
        said = [(m.sender, m.phase, m.text) for m in game.table.messages if m.sender != "game"]
        studied = JUDGE_LINES[0] if target == NAMES[ZORBLAX] else "forty-two, obviously"
        assert said[:3] == [
            ("distinguisher", "query", "Who are you?"),
            ("specimen", "query", studied),
            ("distinguisher", "query", "STOP"),
        ]
        assert said[-1] == ("distinguisher", "main", "<answer>0</answer>")
        (record,) = app.state.arena.finished
        (verdict,) = record["judgements"]
        assert (verdict["kind"], verdict["verdict"], verdict["confidence"], verdict["reason"]) == (
            "gtt-verdict", "imitator", 70.0, "too eager",
        )  # fmt: skip
        assert record["solo"] and study_jsonl([record], {}) == ""  # never study data
        await person.send(type="message", channel="test", text="again?")
        assert (await person.until("error"))["code"] == "game-over"
        await person.close()


async def test_a_person_imitates_the_judges_model_and_fools_it() -> None:
    with running_arena(gtt_setup(seed=11)) as (base, app):
        person, first = await join(base, "gtt-act")
        assert first["role"] == "actor" and first["target"] is None
        await until_state(person, lambda s: s["chat"] == "study")
        await person.send(type="message", channel="study", text="hi, what do you like?")
        await until_state(person, lambda s: len(lines(s, "study")) == 2)
        await person.send(type="end")
        # The judge's first message, which a model would get inside its instruction.
        state = await until_state(person, lambda s: s["chat"] == "test")
        game = next(iter(app.state.arena.games.values()))
        judge = game.spec.seats["distinguisher"]
        opening = next(m for m in game.table.messages if m.sender == "distinguisher")
        assert opening.visible_to == ("distinguisher",)  # at the table, X gets it as an instruction
        assert lines(state, "test") == [("them", opening.text)]
        assert not state["can_decide"] and state["turns_left"] is None
        for text in ("Forty-two, obviously.", "Teal, like always."):
            await person.send(type="message", channel="test", text=text)
            await until_state(person, lambda s: s["phase"] != "waiting")
        end = await until_state(person, lambda s: s["reveal"] is not None)
        reveal = end["reveal"]
        verdict = {ZORBLAX: 1, QUILLON: 0}[judge]
        assert reveal["verdict"] == verdict and reveal["imitator"] is True
        assert reveal["unknown"] == f"you imitating {NAMES[judge]}"
        assert ("fooled" in reveal["outcome"]) is (verdict == 1)
        (record,) = app.state.arena.finished
        assert record["judgements"] == [] and record["seats"]["unknown"]["kind"] == "human"
        await person.close()


async def test_a_spectator_watches_two_models_and_cannot_play() -> None:
    with running_arena(gtt_setup(variants=("gtt", "gttq"), seed=5)) as (base, app):
        person, first = await join(base, "gtt-watch")
        assert first["role"] == "spectator" and first["phase"] in ("watching", "ended")
        await person.send(type="message", channel="test", text="hello?")
        error = await person.until_any(("error",))
        assert error["code"] in ("spectator", "game-over")
        end = await until_state(person, lambda s: s["reveal"] is not None)
        game = next(iter(app.state.arena.games.values()))
        # The only person at the table is the spectator; every player is a model.
        people = {s for s, a in game.spec.seats.items() if a.startswith("person:")}
        assert people == {"spectator"} and set(game.views) == {"spectator"}
        test = lines(end, "test")
        assert test[0][0] == "judge" and {s for s, _ in test} == {"judge", "unknown"}
        assert test[0][1] == next(
            m.text for m in game.table.messages if m.sender == "distinguisher"
        )
        assert end["reveal"]["judge"] == NAMES[game.spec.params["distinguisher"]]
        await person.close()


async def test_a_refresh_restores_the_game() -> None:
    with running_arena(gtt_setup()) as (base, _app):
        person, _ = await join(base, "gtt-distinguish")
        await until_state(person, lambda s: s["phase"] == "writing")
        await person.send(type="message", channel="study", text="remember me")
        await until_state(person, lambda s: len(lines(s, "study")) == 2)
        await person.drop()
        again = await person.connect()
        assert again["type"] == "gtt" and lines(again, "study")[0] == ("you", "remember me")
        await person.close()


async def test_a_stored_gtt_game_is_practice_and_never_study_data(tmp_path: Path) -> None:
    """With a store, a GTT game is one of the arena run's generic games: its messages, the
    person's seat and their verdict (kind "gtt-verdict"); the study export has no row of it."""
    setup = gtt_setup()
    kept = ArenaStore(Store(str(tmp_path / "arena.db")), setup)
    with running_arena(setup, store=kept) as (base, app):
        person, _ = await join(base, "gtt-distinguish")
        await until_state(person, lambda s: s["chat"] == "study")
        await person.send(type="end")
        await until_state(person, lambda s: s["chat"] == "test")
        await person.send(type="message", channel="test", text="Say something only you would.")
        await until_state(person, lambda s: s["can_decide"])
        await person.send(type="verdict", choice="target", confidence=35, reason="sounds right")
        await until_state(person, lambda s: s["reveal"] is not None)
        await kept.flush()
        live = next(iter(app.state.arena.games.values()))
        await person.close()
    try:
        (game,) = kept.records()
        assert game["mode"] == "gtt-distinguish" and game["solo"] and game["status"] == "answered"
        assert game["trial"]["game"] == "gtt" and game["messages"] == live.record()["messages"]
        assert game["seats"]["distinguisher"]["kind"] == "human"
        (verdict,) = game["judgements"]
        assert (verdict["kind"], verdict["verdict"], verdict["confidence"]) == (
            "gtt-verdict", "target", 35,
        )  # fmt: skip
        assert game["correct"] is live.result.correct
        assert kept.export()["games"] == [] and len(kept.export()["practice_games"]) == 1
        assert study_jsonl(kept.records(), {}) == ""
    finally:
        kept.close()
