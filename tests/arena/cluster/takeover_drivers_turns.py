"""Takeover drivers of the turn-taking modes, whose people type in turns on channels A/B: the
engine's three-party game and two-party practice (game snapshots and message frames), the
Strong Turing Test and the live integrative test (the STT transport's whole states).

Each mode has a `partway` (seat its people and play to the state the takeover must keep) and a
`finish` (play the rebuilt game to its end, checking what it shows again). takeover_drivers.py
makes them rows of MODES.
"""

from __future__ import annotations

from typing import Any

from arena_fixtures import Person
from takeover_play import WAIT_S, Play, answering, next_state, pair_across, stt_state
from test_arena_multiprocess import Processes

# ---- three-party -------------------------------------------------------------------------------


async def _ask_both(play: Play, turn: int) -> None:
    judge, witness = play.people["interrogator"], play.people["witness"]
    for ch in ("A", "B"):
        play.typed.append(f"question {turn} for {ch}")
        await judge.send(type="message", id=f"q{turn}{ch}", channel=ch, text=play.typed[-1])
        await judge.until("message", ref=f"q{turn}{ch}", timeout=WAIT_S)  # shown once stored
    heard = await witness.until("message", sender="them", timeout=WAIT_S)
    play.typed.append(f"answer {turn} to {heard['text']}")
    await witness.send(type="message", id=f"a{turn}", channel="A", text=play.typed[-1])
    await witness.until("message", ref=f"a{turn}", timeout=WAIT_S)


async def three_partway(arena: Processes) -> Play:
    play = await pair_across(arena, "three-party", "game", ("interrogator", "witness"))
    await _ask_both(play, 0)
    return play


async def three_finish(play: Play) -> None:
    await _ask_both(play, 1)
    judge = play.people["interrogator"]
    await judge.send(type="end", id="end-1")
    await judge.until("phase", phase="verdict", timeout=WAIT_S)
    await judge.send(type="verdict", id="v-1", choice="A", confidence=60, reason="typed so")
    for p in play.people.values():
        assert (await p.until("reveal", timeout=WAIT_S))["flagged"] is None


# ---- two-party (solo practice against ELIZA) ---------------------------------------------------


async def two_partway(arena: Processes) -> Play:
    judge = Person(arena.bases[0])
    assert (await judge.connect())["type"] == "status"
    await judge.send(type="join", mode="practice", consent=True)
    first = await judge.until("game", timeout=WAIT_S)
    play = Play({"interrogator": judge}, game=first["game"], deadline=first.get("deadline"))
    await _ask_alone(play, 0)
    return play


async def _ask_alone(play: Play, turn: int) -> None:
    judge = play.people["interrogator"]
    play.typed.append(f"hello {turn}, who are you?")
    await judge.send(type="message", id=f"h{turn}", channel="A", text=play.typed[-1])
    await judge.until("message", ref=f"h{turn}", timeout=WAIT_S)
    await judge.until("message", sender="them", timeout=WAIT_S)  # ELIZA answers


async def two_finish(play: Play) -> None:
    await _ask_alone(play, 1)
    judge = play.people["interrogator"]
    await judge.send(type="end", id="end-1")
    await judge.until("phase", phase="verdict", timeout=WAIT_S)
    await judge.send(type="verdict", id="v-1", choice="ai", confidence=70, reason="too quick")
    assert (await judge.until("reveal", timeout=WAIT_S))["flagged"] is None


# ---- the Strong Turing Test --------------------------------------------------------------------


async def strong_partway(arena: Processes) -> Play:
    """Turn 1 played and chosen; turn 2's question asked, its reply not yet given."""
    play = await pair_across(arena, "strong", "strong", ("investigator", "respondent"))
    inv, resp = play.people["investigator"], play.people["respondent"]
    for turn, choice in ((1, {"reply": 1}), (2, None)):
        play.typed.append(f"question {turn}: what is rain?")
        await inv.send(type="message", id=f"q{turn}", channel="A", text=play.typed[-1])
        await answering(resp, turn)
        if choice is None:
            return play
        play.typed.append(f"reply {turn}: wet")
        await resp.send(type="message", id=f"r{turn}", channel="A", text=play.typed[-1])
        await stt_state(inv, phase="choosing")
        await inv.send(type="preference", id=f"p{turn}", **choice)
        play.typed.append("1")  # the choice, as the game keeps it
        await stt_state(inv, phase="asking")
    return play


async def strong_finish(play: Play) -> None:
    inv, resp = play.people["investigator"], play.people["respondent"]

    def caught_up(s: dict[str, Any]) -> bool:
        # Turn 2 asked, turn 1 decided: a page reconnecting in the instant between the rebuilt
        # game's start and its first step gets a state with turn 1's replies not given again
        # yet (failed once in CI under load); the next state has them.
        history = s.get("history") or []
        return s.get("phase") == "answering" and len(history) == 2 and history[0]["decided"]

    shown = await next_state(resp, "strong", caught_up, latest=True)
    assert [t["question"] for t in shown["history"]] == [play.typed[0], play.typed[3]]
    assert shown["history"][0]["decided"] and shown["history"][0]["your_reply"] == play.typed[1]
    play.typed.append("reply 2: cold")
    await resp.send(type="message", id="r2", channel="A", text=play.typed[-1])
    choosing = await stt_state(inv, phase="choosing")
    assert choosing["history"][0]["chosen"] == 1 and not choosing["history"][1]["decided"]
    await inv.send(type="preference", id="p2", tie=True)
    play.typed.append("tie")
    for p in (inv, resp):
        end = await stt_state(p, phase="ended")
        assert end["flagged"] is None and [t["decided"] for t in end["history"]] == [True, True]


# ---- the live integrative test (STT transport, labels A/B, a verdict after 5 exchanges) --------


async def _itt_exchange(play: Play, n: int, *, answer_only: bool = False) -> None:
    judge, agent = play.people["investigator"], play.people["human agent"]
    if not answer_only:
        play.typed.append(f"question {n}?")
        await judge.send(type="message", id=f"q{n}", channel="A", text=play.typed[-1])
    await answering(agent, n, latest=answer_only)
    play.typed.append(f"answer {n}")
    await agent.send(type="message", id=f"a{n}", channel="A", text=play.typed[-1])
    while True:  # the judge sees both answers of exchange n
        got = await stt_state(judge)
        if got["history"] and got["history"][-1]["turn"] == n and got["history"][-1]["replies"]:
            return


async def itt_partway(arena: Processes) -> Play:
    """Exchange 1 answered; exchange 2's question asked, its answers not yet given."""
    play = await pair_across(arena, "live-itt", "strong", ("investigator", "human agent"))
    await _itt_exchange(play, 1)
    play.typed.append("question 2?")
    judge = play.people["investigator"]
    await judge.send(type="message", id="q2", channel="A", text=play.typed[-1])
    await answering(play.people["human agent"], 2)
    return play


async def itt_finish(play: Play) -> None:
    judge, agent = play.people["investigator"], play.people["human agent"]
    shown = await answering(agent, 2, latest=True)  # not asked again
    assert [t["question"] for t in shown["history"]] == ["question 1?", "question 2?"]
    await _itt_exchange(play, 2, answer_only=True)
    for n in range(3, 6):
        await _itt_exchange(play, n)
    await stt_state(judge, phase="verdict", latest=True)
    await judge.send(type="verdict", id="v-1", choice="A", confidence=70, reason="typos")
    for p in (judge, agent):
        end = await stt_state(p, phase="ended")
        assert end["flagged"] is None and end["outcome"], end
