"""A live ITT practice session whose server process dies (SIGKILL) or hangs (SIGSTOP) finishes
on the other one.

test_arena_takeover_modes.py plays every mode across its owner's death, the live ITT with two
people and the ITT chat among them. This is the practice session of the live ITT: one person
judges, a scripted stand-in answers as the human beside a scripted AI, so the verdict is the
only person's input that is no message. Process 1 is killed, or paused past the takeover
delay; process 2 claims the game and rebuilds it from its committed messages and control log.
The person, back at process 2, sees every exchange so far with their turn where it was; the
game keeps its stored start; it ends, not flagged, the verdict counted once. A paused owner,
woken afterwards, writes nothing more: the message sent to it while it hung is not stored.
The store, read in plain SQL: one game row, claimed once by process 2, its messages numbered
without a hole, the questions each once, the verdict and its control event once; and the
engine, played again over the stored transcript with the verdict given again, says exactly it.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from typing import Any

import pytest

from arena_fixtures import Person
from takeover_play import WAIT_S, gave_up
from takeover_replay import replayed
from test_arena_multiprocess import arena_processes
from test_arena_takeover import SERVER as TAKEOVER_SERVER
from test_arena_takeover import TAKEOVER_AFTER_S
from test_arena_takeover_gtt import _stored, _until_live
from turinglab.agents.human import HumanInput
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.core.modes import ArenaMode
from turinglab.arena.modes.itt_chat_mode import MODE as CHAT
from turinglab.arena.modes.itt_chat_mode import itt_chat_mode
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.games.conversation import ConversationExperiment
from turinglab.games.live_itt import LiveITTExperiment

pytestmark = [pytest.mark.database, pytest.mark.slow]

SERVER = TAKEOVER_SERVER.replace(
    "from test_arena_takeover import takeover_setup",
    "from test_arena_takeover_itt import itt_takeover_setup as takeover_setup",
)
TO_THE_PAUSED = "sent to a process that hangs"
PRACTICE = "live-itt-practice"
STUDY = "live-itt"  # two people (test_itt_live_resume.py)
AI, STAND_IN, PARTNER = "murrow", "stand-in", "pat"
QUESTIONS = ["Where did you grow up?", "What did you eat?", "Cats or dogs?", "Sea or hills?",
             "Last film you saw?"]  # fmt: skip


def itt_takeover_setup() -> ArenaSetup:
    """Live ITT practice (the person judges; a stand-in answers as the human), the study (two
    people) and topic conversations with an AI partner at once (ai_after_s 0), taken over
    quickly; test_itt_live_resume.py plays the study and the conversations."""
    itt = LiveITTExperiment(
        game="live-itt",
        ai_agents=[AI],
        stand_ins=[STAND_IN],
        conditions=["deceitful-ai"],
        exchange_limits=[5],
    )
    chat = ConversationExperiment(
        game="conversation", pairs=[(PARTNER, PARTNER)], exchanges=4, topics=["books"]
    )
    modes: list[ArenaMode] = [
        live_itt_mode(PRACTICE, "Practice: you judge", itt, solo=True),
        live_itt_mode(STUDY, "Live integrative test", itt),
        itt_chat_mode(CHAT, "Chat about a topic", chat),
    ]
    agents = {
        AI: ScriptedAgent(AI, ["pasta", "rainy here", "tired", "no pets", "the beach"]),
        STAND_IN: ScriptedAgent(STAND_IN, ["toast", "sunny", "fine", "a cat", "hills"]),
        PARTNER: ScriptedAgent(PARTNER, ["oh, which one?", "me too, the grimmer the better"]),
    }
    names = {AI: "Murrow (scripted)", STAND_IN: "Stan (scripted)", PARTNER: "Pat (scripted)"}
    settings = ArenaSettings(seed=4, ai_after_s=0, takeover_after_s=TAKEOVER_AFTER_S)
    return ArenaSetup(modes, agents, names, settings)


async def _frame(person: Person, type_: str, test: Callable[[dict[str, Any]], bool]) -> Any:
    while True:
        frame = await person.until(type_, timeout=WAIT_S)
        if test(frame):
            return frame


def _answered(n: int) -> Callable[[dict[str, Any]], bool]:
    def test(s: dict[str, Any]) -> bool:
        return len(s["history"]) == n and bool(s["history"][-1]["replies"])

    return test


async def _ask(person: Person, n: int) -> dict[str, Any]:
    await person.send(type="message", id=f"q{n}", channel="A", text=QUESTIONS[n - 1])
    state: dict[str, Any] = await _frame(person, "strong", _answered(n))
    return state


async def _judge_partway(person: Person) -> dict[str, Any]:
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=PRACTICE, consent=True)
    await _frame(person, "strong", lambda s: s["phase"] == "asking")
    await _ask(person, 1)
    state = await _ask(person, 2)
    assert state["phase"] == "asking"
    return state


async def _judge_end(person: Person, state: dict[str, Any]) -> dict[str, Any]:
    for n in (3, 4, 5):
        state = await _ask(person, n)
    assert state["phase"] == "verdict"
    await person.send(type="verdict", id="v1", choice="A", confidence=70, reason="typos")
    end: dict[str, Any] = await _frame(person, "strong", lambda s: s["phase"] == "ended")
    assert end["outcome"].startswith("The judge was") and end["flagged"] is None
    return end


def _judge_same(before: dict[str, Any], back: dict[str, Any]) -> bool:
    keys = ("game", "phase", "history", "turns", "labels", "role")
    return {k: back[k] for k in keys} == {k: before[k] for k in keys}


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
async def test_a_live_itt_practice_session_finishes_on_the_other_process(
    postgres_url: str, how: str
) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        owner = arena.procs[0]
        mine = f"{arena.ports[1]}/"
        person = Person(one)
        try:
            before = await _judge_partway(person)
            game = before["game"]
            was = await _until_live(one, lambda g: g["game"] == game)
            assert was["owner"].startswith(f"{arena.ports[0]}/")

            if how == "SIGKILL":
                owner.send_signal(signal.SIGKILL)
                owner.wait(10)
                await person.drop()
            else:
                owner.send_signal(signal.SIGSTOP)
                # Queued in the hung process's socket: it must never reach the game or the store.
                await person.send(type="message", id="late", channel="A", text=TO_THE_PAUSED)
                await _until_live(two, lambda g: g["owner"].startswith(mine))  # claimed
                person.ws = None  # the hung socket is given up, as the page gives it up
            person.base = two
            first = await person.connect()
            back = first if first["type"] == "strong" else await person.until("strong", WAIT_S)
            # The same game, everything the person saw, and their turn where it was: at once,
            # or once the game has caught up with its stored lines (a state frame follows).
            while not _judge_same(before, back):
                back = await person.until("strong", timeout=WAIT_S)
            assert back["game"] == game
            now = await _until_live(two, lambda g: g["owner"].startswith(mine))
            # The stored start is kept: the time limit counts from it (same time left).
            assert now["game"] == game and now["started_at"] == was["started_at"]

            await _judge_end(person, back)
            if how == "SIGSTOP":
                owner.send_signal(signal.SIGCONT)  # it wakes up, with the input queued for it
                await gave_up(one)  # and drops the game it had: claimed by process 2
        finally:
            if how == "SIGSTOP" and owner.poll() is None:
                owner.send_signal(signal.SIGCONT)
            await person.close()

    kept = _stored(postgres_url)
    assert kept["game"] == game and kept["status"] == "finished"
    assert kept["worker"].startswith(mine) and kept["epoch"] == 1  # claimed once
    said = kept["said"]
    assert [m.seq for m in said] == list(range(len(said)))
    person_seats = [s for s, a in kept["spec"].seats.items() if a.startswith("person:")]
    mine_said = [m.text for m in said if m.sender in person_seats]
    assert mine_said == QUESTIONS and TO_THE_PAUSED not in mine_said  # each once, in order
    verdicts = [("verdict", "agent_a", 70.0)]
    assert [(v.kind, v.verdict, v.confidence) for v in kept["verdicts"]] == verdicts
    controls = kept["controls"]
    assert [c.idx for c in controls] == list(range(len(controls)))
    assert [c.kind for c in controls if c.kind != "input"] == ["verdict"]
    # Every input id the person's page sent and the game applied, logged once (the one sent
    # to the paused owner never was).
    ids = [_data(c)["input_id"] for c in controls if c.kind == "input"]
    assert len(ids) == len(set(ids)) and "late" not in ids and ids
    # The stored transcript is a game by the engine's rules: played again over all of it, the
    # game says exactly it and ends (no line twice, none missing); the verdict is no message,
    # so the judge gives it again.
    result = await replayed(
        itt_takeover_setup(), PRACTICE, kept["spec"], said, {"judge": [_verdict()]}
    )
    assert result.status == "finished"
    assert [j.verdict for j in result.judgements] == ["agent_a"]


def _data(row: Any) -> dict[str, Any]:
    data = row.data if isinstance(row.data, dict) else json.loads(row.data)
    assert isinstance(data, dict)
    return data


def _verdict() -> HumanInput:
    return HumanInput("verdict", data={"human": "agent_a", "confidence": 70.0})
