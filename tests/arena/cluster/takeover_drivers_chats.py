"""Takeover drivers of the modes whose people get one whole state frame: the GTT (one person
beside two scripted models, as the judge, the actor, or watching the models alone) and the ITT
chat (two people in a topic conversation).

Each mode has a `partway` (seat its people and play to the state the takeover must keep) and a
`finish` (play the rebuilt game to its end, checking what it shows again). takeover_drivers.py
makes them rows of MODES.
"""

from __future__ import annotations

from typing import Any

from arena_fixtures import Person
from takeover_play import WAIT_S, Play, next_state, pair_across
from test_arena_gtt import lines, until_state
from test_arena_multiprocess import Processes

CHAT = "itt-conversation"  # the ITT chat's mode (arena/modes/itt_chat_mode.py)
CHAT_LINES = ["hey, what are you reading?", "a grim crime novel", "I like grim ones too", "yes!"]


# ---- the GTT -----------------------------------------------------------------------------------


async def _gtt_joined(arena: Processes, mode: str, seat: str) -> Play:
    person = Person(arena.bases[0])
    assert (await person.connect())["type"] == "status"
    await person.send(type="join", mode=mode, consent=True)
    first = await person.until("gtt", timeout=WAIT_S)
    return Play({seat: person}, game=first["game"])


async def _gtt_studied(arena: Processes, mode: str, seat: str) -> Play:
    """Join a GTT mode, study once and end the study: the test chat is next."""
    play = await _gtt_joined(arena, mode, seat)
    person = play.people[seat]
    await _gtt(person, lambda s: s["phase"] == "writing" and s["chat"] == "study", latest=True)
    play.typed.append("hi")
    await person.send(type="message", id="m1", channel="study", text="hi")
    await _gtt(person, lambda s: len(lines(s, "study")) == 2)
    await person.send(type="end", id="e1")
    play.typed.append("STOP")  # the study's end, as the game keeps it
    await _gtt(person, lambda s: s["chat"] == "test" and s["phase"] == "writing")
    return play


async def _gtt(person: Person, test: Any, latest: bool = False) -> dict[str, Any]:
    if latest:
        return await next_state(person, "gtt", test, latest=True)
    return await until_state(person, test, timeout=WAIT_S)


async def gtt_judge_partway(arena: Processes) -> Play:
    """GDGTT: studied, and one message to X answered: the person may decide now."""
    play = await _gtt_studied(arena, "gtt-distinguish", "distinguisher")
    person = play.people["distinguisher"]
    play.typed.append("What is 6 times 7?")
    await person.send(type="message", id="m2", channel="test", text=play.typed[-1])
    await _gtt(person, lambda s: s["can_decide"] and s["turns_left"] == 3)
    return play


async def gtt_judge_finish(play: Play) -> None:
    person = play.people["distinguisher"]
    await person.send(type="verdict", id="v1", choice="imitator", confidence=70)
    play.typed.append("<answer>0</answer>")  # the verdict, as the game keeps it
    end = await _gtt(person, lambda s: s["reveal"] is not None)
    assert end["reveal"]["flagged"] is None and end["reveal"]["verdict"] == 0


async def gtt_actor_partway(arena: Processes) -> Play:
    """GTTQ: studied, and the judge's first question answered; its second asked."""
    play = await _gtt_studied(arena, "gtt-act", "unknown")
    person = play.people["unknown"]
    play.typed.append("Forty-two, obviously.")
    await person.send(type="message", id="m2", channel="test", text=play.typed[-1])
    await _gtt(person, lambda s: s["phase"] == "writing" and len(lines(s, "test")) == 3)
    return play


async def gtt_actor_finish(play: Play) -> None:
    person = play.people["unknown"]
    play.typed.append("Teal, like always.")
    await person.send(type="message", id="m3", channel="test", text=play.typed[-1])
    end = await _gtt(person, lambda s: s["reveal"] is not None)
    assert end["reveal"]["flagged"] is None and end["reveal"]["imitator"] is True


async def gtt_watch_partway(arena: Processes) -> Play:
    """gtt-watch: the judge model's first message and X's answer; the models' next replies
    wait for the gate (Mode.held), which the test opens once the game is taken over."""
    play = await _gtt_joined(arena, "gtt-watch", "spectator")
    person = play.people["spectator"]
    play.seen = await _gtt(person, lambda s: len(lines(s, "test")) == 2, latest=True)
    return play


async def gtt_watch_finish(play: Play) -> None:
    person = play.people["spectator"]
    end = await _gtt(person, lambda s: s["reveal"] is not None, latest=True)
    assert end["reveal"]["flagged"] is None and end["reveal"]["verdict"] in (0, 1)
    for chat in play.seen["chats"]:  # every line watched before the takeover, once, in place
        was = lines(play.seen, chat["name"])
        assert lines(end, chat["name"])[: len(was)] == was
    assert len(lines(end, "test")) > 2  # the models went on at the new owner


# ---- the ITT chat (two people, A writes first, four messages) ----------------------------------


def _spoken(state: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["sender"], m["text"]) for m in state["lines"] if m["sender"] != "game"]


async def _write(play: Play, seat: str, n: int) -> None:
    """`seat` writes the chat's message `n` on their turn, and sees it said."""
    person = play.people[seat]
    await next_state(
        person,
        "itt-chat",
        lambda s: s["phase"] == "writing" and len(_spoken(s)) == n,
        latest=True,
    )
    play.typed.append(CHAT_LINES[n])
    await person.send(type="message", id=f"c{n}", channel="A", text=CHAT_LINES[n])
    await next_state(person, "itt-chat", lambda s: len(_spoken(s)) == n + 1, latest=True)


async def chat_partway(arena: Processes) -> Play:
    """Two of the four messages said; A's turn to write the third."""
    play = await pair_across(arena, CHAT, "itt-chat", ("A", "B"), key="you")
    await _write(play, "A", 0)
    await _write(play, "B", 1)
    play.seen = await next_state(
        play.people["A"], "itt-chat", lambda s: len(_spoken(s)) == 2, latest=True
    )
    return play


async def chat_finish(play: Play) -> None:
    shown = await next_state(
        play.people["A"],
        "itt-chat",
        lambda s: s["phase"] == "writing" and len(_spoken(s)) == 2,
        latest=True,
    )
    assert _spoken(shown) == _spoken(play.seen)  # everything said so far, once, A's turn still
    await _write(play, "A", 2)
    await _write(play, "B", 3)
    for p in play.people.values():
        end = await next_state(p, "itt-chat", lambda s: s["phase"] == "ended", latest=True)
        assert end["partner"] == "a person" and end["flagged"] is None, end
        assert [t for _, t in _spoken(end)] == CHAT_LINES
