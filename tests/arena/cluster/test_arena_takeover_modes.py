"""Every resumable mode survives its owner's death: played partway on one process, finished on
the other (PostgreSQL + Redis, two real server processes, people over real websockets).

For each mode (a row of MODES: how to seat its people, play it partway and finish it), the
process that owns the game is SIGKILLed, or SIGSTOPped (slow, not dead) and continued after
the game has finished elsewhere. The other process claims the game, rebuilds it from the
store (messages and control events) and plays it on: the people finish it there with the
same transcript rules (every human message stored once, in order, seqs without a hole), the
same remaining time (where the mode has a clock) and its verdict or preferences counted
once, audited in SQL. A stopped owner that wakes up writes nothing more to the game.

A mode is added with one entry in MODES: its setup's mode, a driver that seats and plays it
partway, and one that finishes it.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import func, select

from arena_fixtures import Person, engine_setup
from test_arena_gtt import lines, until_state
from test_arena_multiprocess import Processes, arena_processes
from test_arena_strong import INVESTIGATOR_BOT, STAND_IN, SYSTEM_AGENT, strong_setup
from test_arena_takeover_gtt import gtt_takeover_setup
from test_arena_takeover_inputs_wait_for_rebuild import _claimed_by, _owner_port
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.arena.modes.strong_mode import strong_mode
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.games.strong import StrongExperiment
from turinglab.store.database import Store
from turinglab.store.schema import control_events, games, judgements, messages, seats

TAKEOVER_AFTER_S = 1.5
TIME_SLACK_S = 2.0  # the remaining time after the takeover, as before it
ITT_AI = "murrow-itt-agent-5"
ITT_AI_ANSWERS = ["just pasta", "rainy here", "a bit tired", "no pets", "the beach"]


def modes_setup() -> ArenaSetup:
    """The engine's three-party game and two-party practice, the STT with two people (an
    investigator and a human respondent beside a scripted system), two turns, and the GTT
    modes with two scripted models (test_arena_takeover_gtt.py; gtt-watch is driven there)."""
    engine, strong, gtt = engine_setup(), strong_setup(), gtt_takeover_setup()
    stt = StrongExperiment.model_validate(
        {
            "game": "strong",
            "investigators": [INVESTIGATOR_BOT],
            "systems": [SYSTEM_AGENT],
            "humans": [STAND_IN],
            "stand_ins": [STAND_IN],
            "turns": 2,
            "input_timeout_s": 60,
        }
    )
    itt = LiveITTExperiment.model_validate(
        {"game": "live-itt", "ai_agents": [ITT_AI], "exchange_limits": [5], "input_timeout_s": 60}
    )
    return ArenaSetup(
        [
            *engine.modes,
            strong_mode("strong", "Strong Turing Test", stt),
            live_itt_mode("live-itt", "Live integrative test", itt),
            *gtt.modes,
        ],
        {
            **engine.agents,
            **strong.agents,
            **gtt.agents,
            ITT_AI: ScriptedAgent(ITT_AI, ITT_AI_ANSWERS, cycle=True),
        },
        {
            **engine.display_names,
            **strong.display_names,
            **gtt.display_names,
            ITT_AI: "Murrow (scripted)",
        },
        ArenaSettings(ai_after_s=600, takeover_after_s=TAKEOVER_AFTER_S),
    )


SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd, ADMIN_PASSWORD
from test_arena_takeover_modes import modes_setup
from turinglab.arena import create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
setup = modes_setup()
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""


@dataclass
class Play:
    """One game being played: its people by role, what they typed, what the rebuilt game must
    show again, and the remaining time before the takeover (wall-clock deadline), if any."""

    people: dict[str, Person]
    game: str = ""
    typed: list[str] = field(default_factory=list)
    deadline: float | None = None
    counted: int = 1  # judgements the finished game stores


# ---- three-party -------------------------------------------------------------------------------


async def _pair(arena: Processes, mode: str, roles: tuple[str, str]) -> Play:
    """Two people, one on each process, matched into `mode`; their first frames."""
    first, second = Person(arena.bases[1]), Person(arena.bases[0])
    for p in (first, second):
        assert (await p.connect())["type"] == "status"
    await first.send(type="join", mode=mode, consent=True)
    await first.until("status", state="waiting")
    await second.send(type="join", mode=mode, consent=True)
    kind = "strong" if mode in ("strong", "live-itt") else "game"
    got = {p: await p.until(kind, timeout=30) for p in (first, second)}
    judge = first if got[first]["role"] == roles[0] else second
    other = second if judge is first else first
    return Play(
        {roles[0]: judge, roles[1]: other},
        game=got[first]["game"],
        deadline=got[first].get("deadline"),
    )


async def _ask_both(play: Play, turn: int) -> None:
    judge, witness = play.people["interrogator"], play.people["witness"]
    for ch in ("A", "B"):
        play.typed.append(f"question {turn} for {ch}")
        await judge.send(type="message", id=f"q{turn}{ch}", channel=ch, text=play.typed[-1])
        await judge.until("message", ref=f"q{turn}{ch}")  # shown once stored
    heard = await witness.until("message", sender="them")
    play.typed.append(f"answer {turn} to {heard['text']}")
    await witness.send(type="message", id=f"a{turn}", channel="A", text=play.typed[-1])
    await witness.until("message", ref=f"a{turn}")


async def three_partway(arena: Processes) -> Play:
    play = await _pair(arena, "three-party", ("interrogator", "witness"))
    await _ask_both(play, 0)
    return play


async def three_finish(play: Play) -> None:
    await _ask_both(play, 1)
    judge = play.people["interrogator"]
    await judge.send(type="end", id="end-1")
    await judge.until("phase", phase="verdict", timeout=30)
    await judge.send(type="verdict", id="v-1", choice="A", confidence=60, reason="typed so")
    for p in play.people.values():
        assert (await p.until("reveal", timeout=30))["flagged"] is None


# ---- two-party (solo practice against ELIZA) ---------------------------------------------------


async def two_partway(arena: Processes) -> Play:
    judge = Person(arena.bases[0])
    assert (await judge.connect())["type"] == "status"
    await judge.send(type="join", mode="practice", consent=True)
    first = await judge.until("game", timeout=30)
    play = Play({"interrogator": judge}, game=first["game"], deadline=first.get("deadline"))
    await _ask_alone(play, 0)
    return play


async def _ask_alone(play: Play, turn: int) -> None:
    judge = play.people["interrogator"]
    play.typed.append(f"hello {turn}, who are you?")
    await judge.send(type="message", id=f"h{turn}", channel="A", text=play.typed[-1])
    await judge.until("message", ref=f"h{turn}")
    await judge.until("message", sender="them", timeout=30)  # ELIZA answers


async def two_finish(play: Play) -> None:
    await _ask_alone(play, 1)
    judge = play.people["interrogator"]
    await judge.send(type="end", id="end-1")
    await judge.until("phase", phase="verdict", timeout=30)
    await judge.send(type="verdict", id="v-1", choice="ai", confidence=70, reason="too quick")
    assert (await judge.until("reveal", timeout=30))["flagged"] is None


# ---- the Strong Turing Test --------------------------------------------------------------------


async def _state(p: Person, latest: bool = False, **match: Any) -> dict[str, Any]:
    """The person's next state as `match` says; with `latest`, the last one they got, if it
    does (a rebuilt game's first state may be the one asked for)."""
    got = [f for f in p.frames if f["type"] == "strong"]
    if latest and got and all(got[-1].get(k) == v for k, v in match.items()):
        return got[-1]
    return await p.until("strong", timeout=30, **match)


async def strong_partway(arena: Processes) -> Play:
    """Turn 1 played and chosen; turn 2's question asked, its reply not yet given."""
    play = await _pair(arena, "strong", ("investigator", "respondent"))
    play.counted = 2  # a preference per turn
    inv, resp = play.people["investigator"], play.people["respondent"]
    for turn, choice in ((1, {"reply": 1}), (2, None)):
        play.typed.append(f"question {turn}: what is rain?")
        await inv.send(type="message", id=f"q{turn}", channel="A", text=play.typed[-1])
        await _state(resp, phase="answering")
        if choice is None:
            return play
        play.typed.append(f"reply {turn}: wet")
        await resp.send(type="message", id=f"r{turn}", channel="A", text=play.typed[-1])
        await _state(inv, phase="choosing")
        await inv.send(type="preference", id=f"p{turn}", **choice)
        play.typed.append("1")  # the choice, as the game keeps it
        await _state(inv, phase="asking")
    return play


async def strong_finish(play: Play) -> None:
    inv, resp = play.people["investigator"], play.people["respondent"]
    shown = await _state(resp, phase="answering", latest=True)
    assert [t["question"] for t in shown["history"]] == [play.typed[0], play.typed[3]]
    assert shown["history"][0]["decided"] and shown["history"][0]["your_reply"] == play.typed[1]
    play.typed.append("reply 2: cold")
    await resp.send(type="message", id="r2", channel="A", text=play.typed[-1])
    choosing = await _state(inv, phase="choosing")
    assert choosing["history"][0]["chosen"] == 1 and not choosing["history"][1]["decided"]
    await inv.send(type="preference", id="p2", tie=True)
    play.typed.append("tie")
    for p in (inv, resp):
        end = await _state(p, phase="ended")
        assert end["flagged"] is None and [t["decided"] for t in end["history"]] == [True, True]


# ---- the GTT (one person with two scripted models; test_arena_takeover_gtt.py has more) -------


async def _gtt_studied(arena: Processes, mode: str, seat: str, counted: int) -> Play:
    """Join a GTT mode, study once and end the study: the test chat is next."""
    person = Person(arena.bases[0])
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=mode, consent=True)
    state = await until_state(person, lambda s: s["phase"] == "writing" and s["chat"] == "study")
    play = Play({seat: person}, game=state["game"], counted=counted)
    play.typed.append("hi")
    await person.send(type="message", id="m1", channel="study", text="hi")
    await until_state(person, lambda s: len(lines(s, "study")) == 2)
    await person.send(type="end", id="e1")
    play.typed.append("STOP")  # the study's end, as the game keeps it
    await until_state(person, lambda s: s["chat"] == "test" and s["phase"] == "writing")
    return play


async def gtt_judge_partway(arena: Processes) -> Play:
    """GDGTT: studied, and one message to X answered: the person may decide now."""
    play = await _gtt_studied(arena, "gtt-distinguish", "distinguisher", counted=1)
    person = play.people["distinguisher"]
    play.typed.append("What is 6 times 7?")
    await person.send(type="message", id="m2", channel="test", text=play.typed[-1])
    await until_state(person, lambda s: s["can_decide"] and s["turns_left"] == 3)
    return play


async def gtt_judge_finish(play: Play) -> None:
    person = play.people["distinguisher"]
    await person.send(type="verdict", id="v1", choice="imitator", confidence=70)
    play.typed.append("<answer>0</answer>")  # the verdict, as the game keeps it
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=30)
    assert end["reveal"]["flagged"] is None and end["reveal"]["verdict"] == 0


async def gtt_actor_partway(arena: Processes) -> Play:
    """GTTQ: studied, and the judge's first question answered; its second asked."""
    play = await _gtt_studied(arena, "gtt-act", "unknown", counted=0)  # the model judges
    person = play.people["unknown"]
    play.typed.append("Forty-two, obviously.")
    await person.send(type="message", id="m2", channel="test", text=play.typed[-1])
    await until_state(person, lambda s: s["phase"] == "writing" and len(lines(s, "test")) == 3)
    return play


async def gtt_actor_finish(play: Play) -> None:
    person = play.people["unknown"]
    play.typed.append("Teal, like always.")
    await person.send(type="message", id="m3", channel="test", text=play.typed[-1])
    end = await until_state(person, lambda s: s["reveal"] is not None, timeout=30)
    assert end["reveal"]["flagged"] is None and end["reveal"]["imitator"] is True


# ---- the live integrative test (STT transport, labels A/B, a verdict after 5 exchanges) --------


async def _itt_exchange(play: Play, n: int, *, answer_only: bool = False) -> None:
    judge, agent = play.people["investigator"], play.people["human agent"]
    if not answer_only:
        play.typed.append(f"question {n}?")
        await judge.send(type="message", id=f"q{n}", channel="A", text=play.typed[-1])
    await _state(agent, phase="answering", latest=answer_only)
    play.typed.append(f"answer {n}")
    await agent.send(type="message", id=f"a{n}", channel="A", text=play.typed[-1])
    while True:  # the judge sees both answers of exchange n
        got = await _state(judge)
        if got["history"] and got["history"][-1]["turn"] == n and got["history"][-1]["replies"]:
            return


async def itt_partway(arena: Processes) -> Play:
    """Exchange 1 answered; exchange 2's question asked, its answers not yet given."""
    play = await _pair(arena, "live-itt", ("investigator", "human agent"))
    await _itt_exchange(play, 1)
    play.typed.append("question 2?")
    judge = play.people["investigator"]
    await judge.send(type="message", id="q2", channel="A", text=play.typed[-1])
    await _state(play.people["human agent"], phase="answering")
    return play


async def itt_finish(play: Play) -> None:
    judge, agent = play.people["investigator"], play.people["human agent"]
    shown = await _state(agent, phase="answering", latest=True)  # not asked again
    assert [t["question"] for t in shown["history"]] == ["question 1?", "question 2?"]
    await _itt_exchange(play, 2, answer_only=True)
    for n in range(3, 6):
        await _itt_exchange(play, n)
    await _state(judge, phase="verdict", latest=True)
    await judge.send(type="verdict", id="v-1", choice="A", confidence=70, reason="typos")
    for p in (judge, agent):
        end = await _state(p, phase="ended")
        assert end["flagged"] is None and end["outcome"], end


@dataclass(frozen=True)
class Mode:
    partway: Callable[[Processes], Awaitable[Play]]
    finish: Callable[[Play], Awaitable[None]]
    first_frame: str  # what a rebuilt game first sends a person: a snapshot or a whole state


MODES = {
    "three-party": Mode(three_partway, three_finish, "game"),
    "two-party": Mode(two_partway, two_finish, "game"),
    "strong": Mode(strong_partway, strong_finish, "strong"),
    "gtt-distinguish": Mode(gtt_judge_partway, gtt_judge_finish, "gtt"),
    "gtt-act": Mode(gtt_actor_partway, gtt_actor_finish, "gtt"),
    "live-itt": Mode(itt_partway, itt_finish, "strong"),
}


def _audit(store: Store, game: str) -> dict[str, Any]:
    with store.engine.connect() as conn:
        (row,) = conn.execute(
            select(games.c.id, games.c.status, games.c.flags).where(
                games.c.setup["arena_game"].as_string() == game
            )
        ).all()
        humans = set(
            conn.execute(
                select(seats.c.seat).where(seats.c.game_id == row.id, seats.c.kind == "human")
            ).scalars()
        )
        said = conn.execute(
            select(messages.c.seq, messages.c.sender, messages.c.text)
            .where(messages.c.game_id == row.id)
            .order_by(messages.c.seq)
        ).all()
        idx = list(
            conn.execute(
                select(control_events.c.idx)
                .where(control_events.c.game_id == row.id)
                .order_by(control_events.c.idx)
            ).scalars()
        )
        judged = conn.execute(
            select(func.count()).where(judgements.c.game_id == row.id)
        ).scalar_one()
    return {
        "status": row.status,
        "flags": row.flags,
        "seqs": [m.seq for m in said],
        "typed": [m.text for m in said if m.sender in humans],
        "controls": idx,
        "judgements": judged,
        "rows": (len(said), len(idx), judged),
    }


@pytest.mark.database
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "stopped"])
@pytest.mark.parametrize("name", list(MODES))
async def test_a_game_goes_on_at_the_other_process_when_its_owner_dies(
    name: str, stop: signal.Signals, postgres_url: str
) -> None:
    mode = MODES[name]
    async with arena_processes(SERVER, postgres_url) as arena:
        store = Store(postgres_url)
        play: Play | None = None
        stopped = None
        try:
            play = await mode.partway(arena)
            dead = arena.ports.index(await _owner_port(store))
            owner = arena.procs[dead]
            owner.send_signal(stop)
            stopped = owner if stop == signal.SIGSTOP else None
            if stopped is None:
                owner.wait(10)
            await _claimed_by(store, arena.ports[1 - dead])
            rebuilt: dict[Person, dict[str, Any]] = {}
            for p in play.people.values():
                if p.base == arena.bases[dead]:  # their socket went with the owner
                    await p.drop()
                    p.base = arena.bases[1 - dead]
                    first = await p.connect()
                    if first["type"] != mode.first_frame:
                        first = await p.until(mode.first_frame, timeout=30)
                else:  # sent the rebuilt game as it is taken over
                    first = await p.until(mode.first_frame, timeout=30)
                assert first["game"] == play.game
                rebuilt[p] = first
            if play.deadline is not None:
                for first in rebuilt.values():
                    assert abs(first["deadline"] - play.deadline) <= TIME_SLACK_S
            await mode.finish(play)
            done = _audit(store, play.game)
            if stopped is not None:  # the stale owner wakes: it writes nothing more
                stopped.send_signal(signal.SIGCONT)
                stopped = None
                await asyncio.sleep(3.0)
                assert _audit(store, play.game)["rows"] == done["rows"]
        finally:
            if stopped is not None:
                stopped.send_signal(signal.SIGCONT)
            for p in play.people.values() if play is not None else ():
                await p.close()
            store.close()
    assert done["status"] == "finished" and done["flags"] == [], done
    assert done["typed"] == play.typed  # every human message stored once, in order
    assert done["seqs"] == list(range(len(done["seqs"])))
    assert done["controls"] == list(range(len(done["controls"])))
    assert done["judgements"] == play.counted  # counted once
