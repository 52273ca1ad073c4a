"""What the per-mode takeover drivers share (takeover_drivers.py): a game being played, people
seated across the two processes, and waiting for a person's next state.

Timeouts are generous: the suite runs these multi-process games under xdist on two busy cores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from arena_fixtures import Person
from test_arena_multiprocess import Processes
from test_arena_takeover import AUTH

WAIT_S = 60.0  # for a frame that follows a person's input or a takeover


@dataclass
class Play:
    """One game being played: its people by role, what they typed (every human message, in the
    order the store must hold it), the remaining time before the takeover (wall-clock
    deadline), if any, and the state a person was shown last before it."""

    people: dict[str, Person]
    game: str = ""
    typed: list[str] = field(default_factory=list)
    deadline: float | None = None
    seen: dict[str, Any] = field(default_factory=dict)


async def pair_across(
    arena: Processes, mode: str, frame: str, roles: tuple[str, str], key: str = "role"
) -> Play:
    """Two people, one on each process, matched into `mode`: `roles[0]` is whoever's first
    `frame` says so under `key` (which process owns the game is the store's to say)."""
    first, second = Person(arena.bases[1]), Person(arena.bases[0])
    for p in (first, second):
        assert (await p.connect())["type"] == "status"
    await first.send(type="join", mode=mode, consent=True)
    await first.until("status", state="waiting")
    await second.send(type="join", mode=mode, consent=True)
    got = {p: await p.until(frame, timeout=WAIT_S) for p in (first, second)}
    lead = first if got[first][key] == roles[0] else second
    other = second if lead is first else first
    return Play(
        {roles[0]: lead, roles[1]: other},
        game=got[first]["game"],
        deadline=got[first].get("deadline"),
    )


async def next_state(
    p: Person, frame: str, test: Callable[[dict[str, Any]], bool], latest: bool = False
) -> dict[str, Any]:
    """The person's next `frame` state that passes `test`; with `latest`, the last one they
    got, if it does (a rebuilt game's first state may be the one waited for)."""
    got = [f for f in p.frames if f["type"] == frame]
    if latest and got and test(got[-1]):
        return got[-1]
    while True:
        state = await p.until(frame, timeout=WAIT_S)
        if test(state):
            return state


async def stt_state(p: Person, latest: bool = False, **match: Any) -> dict[str, Any]:
    """The person's next STT-transport state (the STT, the live ITT) as `match` says."""
    return await next_state(
        p, "strong", lambda s: all(s.get(k) == v for k, v in match.items()), latest
    )


async def answering(p: Person, turn: int, latest: bool = False) -> dict[str, Any]:
    """The person's STT-transport state asking them to answer turn `turn` (its question shown):
    not a state of the turn before still in "answering" (pushed as their own answer was held
    or acknowledged), which a driver taking it would answer too early (failed under load)."""

    def asks(s: dict[str, Any]) -> bool:
        history = s.get("history") or []
        return s.get("phase") == "answering" and bool(history) and history[-1]["turn"] == turn

    return await next_state(p, "strong", asks, latest)


async def gave_up(base: str) -> None:
    """Until the process at `base`, woken from a SIGSTOP, plays no game: it found its game
    claimed (its heartbeat had lapsed) or was fenced writing it, and dropped it."""
    async with asyncio.timeout(WAIT_S), aiohttp.ClientSession(headers=AUTH) as http:
        while True:
            try:
                async with http.get(base + "/metrics") as r:
                    if r.status == 200 and "turinglab_arena_games_live 0\n" in await r.text():
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
