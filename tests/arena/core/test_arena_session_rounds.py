"""Strong Turing Test and live ITT sessions are study rounds like the chat games': every state
frame of a study session says "round k of N" (never in practice), and the AI agent is the next
group of the judge's own cycle (rounds.py), so over their rounds a judge meets every AI agent
once — not one drawn afresh per session from its seed. (The cycle itself is RoundBook's,
tested with the chat games; here: the session seats what the book drew.)"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from arena_fixtures import Person, running_arena
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.arena.modes.strong_mode import strong_mode
from turinglab.games.live_itt import JUDGE, SIDES, LiveITTExperiment
from turinglab.games.strong import INVESTIGATOR, SYSTEM, StrongExperiment

AIS = ["itt-ai-one", "itt-ai-two"]
SYSTEMS = ["stt-system-one", "stt-system-two"]
STAND_IN = "stt-stand-in"


def _live_itt_cfg() -> LiveITTExperiment:
    return LiveITTExperiment.model_validate(
        {"game": "live-itt", "ai_agents": AIS, "exchange_limits": [1], "stand_ins": [STAND_IN]}
    )


def _strong_cfg(humans: int = 1) -> StrongExperiment:
    return StrongExperiment.model_validate(
        {
            "game": "strong",
            "investigators": ["stt-investigator"],
            "systems": SYSTEMS,
            "humans": [STAND_IN] * humans,
            "turns": 1,
            "input_timeout_s": 60,
        }
    )


def test_the_session_seats_the_ai_agent_the_lobby_drew() -> None:
    """Whatever the seed, the spec seats the agent the lobby put in a seat (the judge's next
    group), as a chat game does; before, each seed drew its own."""
    itt = live_itt_mode("live-itt", "Live ITT", _live_itt_cfg()).spec_for
    stt = strong_mode("strong", "STT", _strong_cfg()).spec_for
    assert itt is not None and stt is not None
    for want in AIS:
        for seed in range(12):
            spec = itt(0, {JUDGE: "person:j", SIDES[0]: "person:h", SIDES[1]: want}, seed)
            ai_seat = spec.params["ai_seat"]
            assert spec.seats[ai_seat] == want and spec.seats[JUDGE] == "person:j"
    for want in SYSTEMS:
        for seed in range(12):
            spec = stt(0, {INVESTIGATOR: "person:i", "human_1": "person:r", SYSTEM: want}, seed)
            assert spec.seats[SYSTEM] == want
            assert "person:r" in spec.seats.values()


def _itt_setup(rounds: int) -> ArenaSetup:
    cfg = _live_itt_cfg()
    modes = [
        live_itt_mode("live-itt", "Live integrative test", cfg),
        live_itt_mode("live-itt-practice", "Practice", cfg, solo=True),
    ]
    names = [*AIS, STAND_IN]
    agents = {name: ScriptedAgent(name, ["sure, why not"], cycle=True) for name in names}
    return ArenaSetup(modes, agents, {}, ArenaSettings(rounds=rounds, ai_after_s=600))


def _cycle_moved_on(app: Any, judge: str, mode: str, met: str, groups: list[str]) -> None:
    """The judge met the group their book drew, the one given back if this is no round, and
    the rest of their cycle is left for their next sessions."""
    (game,) = app.state.arena.games.values()
    assert game.ai_groups == (met,)
    left = app.state.arena.lobby.rounds.progress(judge).groups_left[mode]
    assert sorted([met, *left]) == sorted(groups)


async def test_live_itt_rounds_are_shown_and_the_ai_follows_the_judges_cycle() -> None:
    with running_arena(_itt_setup(2)) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode="live-itt", consent=True)
            sa = await a.until("strong", timeout=15)
            judge, agent = (a, b) if sa["role"] == "investigator" else (b, a)
            await judge.send(type="message", channel="A", text="what did you have for lunch?")
            await agent.until("strong", timeout=15, phase="answering")
            await agent.send(type="message", channel="A", text="soup, mostly")
            await judge.until("strong", timeout=15, phase="verdict")
            (game,) = app.state.arena.games.values()
            ai = game.spec.seats[game.spec.params["ai_seat"]]
            judge_id = game.spec.seats[JUDGE].removeprefix("person:")
            _cycle_moved_on(app, judge_id, "live-itt", ai, AIS)
            await judge.send(type="verdict", choice="A", confidence=50, reason="a guess")
            for p in (a, b):
                await p.until("strong", timeout=15, phase="ended")
            states = [f for f in a.frames + b.frames if f["type"] == "strong"]
            assert len(states) > 4
            assert all(f["rounds"] == {"played": 1, "total": 2} for f in states)
        finally:
            await a.close()
            await b.close()


async def test_practice_sessions_show_no_round() -> None:
    with running_arena(_itt_setup(2)) as (base, _app):
        p = Person(base)
        try:
            await p.connect()
            await p.send(type="join", mode="live-itt-practice", consent=True)
            first = await p.until("strong", timeout=15)
            assert first["practice"] is True and first["rounds"] is None
        finally:
            await p.close()


async def test_stt_study_sessions_say_which_round_in_every_frame() -> None:
    cfg = _strong_cfg()
    agents = {
        **{name: ScriptedAgent(name, ["toast, mostly"]) for name in SYSTEMS},
        STAND_IN: ScriptedAgent(STAND_IN, ["cereal"]),
    }
    setup = ArenaSetup(
        [strong_mode("strong", "Strong Turing Test", cfg)],
        agents,
        {},
        ArenaSettings(rounds=2, ai_after_s=600),
    )
    with running_arena(setup) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode="strong", consent=True)
            sa = await a.until("strong", timeout=15)
            inv, resp = (a, b) if sa["role"] == "investigator" else (b, a)
            await inv.send(type="message", channel="A", text="What did you eat today?")
            seen = await resp.until("strong", timeout=15, phase="answering")
            assert seen["rounds"] == {"played": 1, "total": 2}
            (game,) = app.state.arena.games.values()
            inv_id = game.spec.seats[INVESTIGATOR].removeprefix("person:")
            _cycle_moved_on(app, inv_id, "strong", game.spec.seats[SYSTEM], SYSTEMS)
            await resp.send(type="message", channel="A", text="porridge")
            await inv.until("strong", timeout=15, phase="choosing")
            states = [f for f in inv.frames + resp.frames if f["type"] == "strong"]
            assert len(states) > 3
            assert all(f["rounds"] == {"played": 1, "total": 2} for f in states)
        finally:
            await a.close()
            await b.close()


@pytest.mark.parametrize("shared", [False, True], ids=["one-process", "redis-books"])
async def test_an_stt_session_with_two_respondent_seats_meets_one_group(shared: bool) -> None:
    """A person and a stand-in answer beside the AI system: the session meets one group of the
    investigator's cycle (ArenaMode.ai_groups_per_game), one process or several (cluster.py
    draws from the shared book; it drew one per free respondent seat before)."""
    other = "stt-stand-in-two"
    cfg = _strong_cfg().model_copy(update={"humans": [STAND_IN, other]})
    agents = {
        **{name: ScriptedAgent(name, ["toast, mostly"]) for name in SYSTEMS},
        **{name: ScriptedAgent(name, ["cereal"]) for name in (STAND_IN, other)},
    }
    setup = ArenaSetup(
        [strong_mode("strong", "Strong Turing Test", cfg)],
        agents,
        {},
        ArenaSettings(rounds=2, ai_after_s=600),
    )
    cluster = (
        {"redis_url": "redis://127.0.0.1:6379/0", "secret": "s", "namespace": uuid.uuid4().hex}
        if shared
        else {}
    )
    with running_arena(setup, **cluster) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode="strong", consent=True)
            await a.until("strong", timeout=15)
            (game,) = app.state.arena.games.values()
            assert len(game.ai_groups) == 1, game.ai_groups
            assert game.ai_groups == (game.spec.seats[SYSTEM],)
            assert game.spec.seats[SYSTEM] in SYSTEMS
            seated = list(game.spec.seats.values())
            assert sum(s.startswith("person:") for s in seated) == 2
            assert sum(s in (STAND_IN, other) for s in seated) == 1
        finally:
            await a.close()
            await b.close()
