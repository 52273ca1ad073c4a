"""A witness's failure costs that game only (issue 31: after a flagged game the AI group was not
retried, so a person met ELIZA twice and SmolLM2 never). One arena process over real
websockets, the engine's two-party game, two AI witness groups: ELIZA and a model behind a real
chat-completions server whose first answer is an error, which flags that game. The flagged
game is no round, and its group is the interrogator's next: in the rounds that count they meet
both groups."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from arena_fixtures import Person, running_arena
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.arena.core.modes import ArenaSettings, ArenaSetup
from turinglab.arena.modes.engine_modes import interrogation_mode
from turinglab.games.two_party import TwoPartyExperiment
from turinglab.testing.fake_openai import FakeOpenAIServer

GROUPS = {"ELIZA": "eliza", "FLAKY": "flaky"}


def setup(base_url: str) -> tuple[ArenaSetup, OpenAIChatAgent]:
    cfg = TwoPartyExperiment.model_validate(
        {
            "game": "two-party",
            "interrogators": ["x"],
            "ai_witnesses": [
                {"agent": "eliza", "persona": "none"},
                {"agent": "flaky", "persona": "none", "label": "FLAKY"},
            ],
            "typing_delay": False,
            "time_limit_s": 120,
        }
    )
    flaky = OpenAIChatAgent(name="flaky", base_url=base_url, model="fake-model")
    agents = {"eliza": ElizaAgent("eliza"), "flaky": flaky}
    mode = interrogation_mode("two-party", "Two-party", cfg)
    # Open matching, rounds: 4 → two interrogations; a lone person meets an AI at once.
    settings = ArenaSettings(rounds=4, ai_after_s=0.1, seed=3)
    return ArenaSetup([mode], agents, {"eliza": "ELIZA", "flaky": "Flaky"}, settings), flaky


async def play(person: Person) -> dict[str, Any]:
    """One game alone against an AI witness: its reveal."""
    await person.send(type="join", mode="two-party", consent=True)
    await person.until("game")
    await person.send(type="message", channel="A", text="hello, where are you from?")
    got = await person.until_any(("reveal", "message"))
    while got["type"] == "message" and got.get("sender") != "them":
        got = await person.until_any(("reveal", "message"))
    if got["type"] != "reveal":  # it answered: end and judge
        await person.send(type="end")
        await person.send(type="verdict", choice="ai", confidence=60, reason="a hunch")
        got = await person.until("reveal")
    await person.send(type="leave")
    await person.until("status")
    return got


@pytest.mark.parametrize("shared", [False, True], ids=["one-process", "redis-books"])
async def test_a_flagged_game_s_group_is_met_next_and_every_group_in_counted_rounds(
    fake_server: FakeOpenAIServer, shared: bool
) -> None:
    assert fake_server.base_url is not None
    # The model's first answer is an HTTP 400: a fault no retry mends, so that game is flagged.
    fake_server.configure(faults=[{"kind": "bad_request", "first": 1}])
    arena, flaky = setup(fake_server.base_url)
    reveals = []
    try:
        # With Redis the rounds and groups books are shared (cluster.py mirrors them): the
        # flagged game's groups must go back there too, or another process would skip them.
        cluster = (
            {"redis_url": "redis://127.0.0.1:6379/0", "secret": "s", "namespace": uuid.uuid4().hex}
            if shared
            else {}
        )
        with running_arena(arena, **cluster) as (base, _app):
            person = Person(base)
            await person.connect()
            for _ in range(3):  # two that count and the flagged one
                reveals.append(await play(person))
            await person.send(type="join", mode="two-party", consent=True)
            done = await person.until("status")
            await person.close()
    finally:
        await flaky.aclose()
    met = [(r["sides"][0]["name"], bool(r.get("flagged"))) for r in reveals]
    flagged = [i for i, (_name, bad) in enumerate(met) if bad]
    assert len(flagged) == 1, met
    i = flagged[0]
    assert met[i][0] == "Flaky" and i < 2, met  # the first game of the flaky group, in order
    assert met[i + 1] == ("Flaky", False), met  # met again next, and it counted
    counted = sorted(name for name, bad in met if not bad)
    assert counted == ["ELIZA", "Flaky"], met  # every configured group, once each
    assert done["state"] == "waiting", done  # their two witness rounds are still owed
    # One process or several, the waiting frame is the same one (Arena.waiting_frame).
    assert done["rounds"] == {"played": 2, "total": 4}, done
    assert [m["name"] for m in done["modes"]] == ["two-party"], done
