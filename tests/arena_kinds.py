"""One arena serving a solo mode of every game kind with its own live class (STT, live ITT,
GTT, ITT chat), and how each kind's page is joined and shows its end: for the tests that check
something of every kind alike (admin_end.py, stored_end.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena_fixtures import Person
from test_arena_gtt import gtt_setup
from test_arena_itt_chat import chat_setup
from test_arena_strong import strong_setup
from test_arena_strong_itt import setup as live_itt_setup
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.live_itt_mode import live_itt_mode

STAND_IN = "otto-standin-1"  # the live ITT practice's human agent


@dataclass(frozen=True)
class Kind:
    mode: str  # a solo mode: one person plays it, on the process they join
    frame: str  # the type of the one state frame its page is sent
    flagged: Callable[[dict[str, Any]], str | None]  # why its end says it will not count


KINDS = {
    "stt": Kind("strong-practice", "strong", lambda s: s["flagged"]),
    "live-itt": Kind("live-itt-practice", "strong", lambda s: s["flagged"]),
    "gtt": Kind("gtt-distinguish", "gtt", lambda s: (s["reveal"] or {}).get("flagged")),
    "itt-chat": Kind("itt-conversation", "itt-chat", lambda s: s["flagged"]),
}


def every_kind_setup() -> ArenaSetup:
    """STT, live ITT, GTT and ITT-chat modes in one arena; a lone chatter meets the AI at once."""
    parts = [strong_setup(), gtt_setup(), chat_setup(ai_after_s=0)]
    itt = live_itt_setup("deceitful-ai", limit=1, stand_ins=[STAND_IN])
    cfg = itt.modes[0].game.cfg  # type: ignore[attr-defined]
    parts.append(
        ArenaSetup(
            [live_itt_mode("live-itt-practice", "Practice: you judge", cfg, solo=True)],
            {**itt.agents, STAND_IN: ScriptedAgent(STAND_IN, ["hello there"], cycle=True)},
            itt.display_names,
        )
    )
    agents: dict[str, Any] = {}
    for part in parts:
        assert not set(part.agents) & set(agents), "two kinds name one agent"
        agents.update(part.agents)
    return ArenaSetup(
        [m for part in parts for m in part.modes],
        agents,
        {k: v for part in parts for k, v in part.display_names.items()},
        ArenaSettings(ai_after_s=0),
    )


async def joined(person: Person, kind: Kind) -> dict[str, Any]:
    """`person` (connected) joins `kind`'s mode; returns the first state of its game."""
    await person.send(type="join", mode=kind.mode, consent=True)
    return await person.until(kind.frame, timeout=15)


async def ended(person: Person, kind: Kind) -> dict[str, Any]:
    while True:
        state = await person.until(kind.frame, timeout=15)
        if state["phase"] == "ended":
            return state
