"""The live integrative test in the arena (over real websockets): a judge and a human agent, both
people, and a scripted AI agent; answers shown under fixed names A and B; the verdict after the
drawn number of exchanges; the human agent never sees the AI's answers; no identities early."""

from __future__ import annotations

import json
import random

from arena_fixtures import Person, running_arena
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.games.live_itt import LiveITTExperiment, life_story

AI = "murrow-itt-agent-5"
AI_ANSWERS = ["oh just pasta, nothing fancy", "rainy and grey here", "a bit tired", "no pets",
              "probably the beach"]  # fmt: skip
ANSWERS = ["cheese on toast", "sunny, for once", "fine thanks", "a cat named Otto", "hills"]


def setup(condition: str, limit: int = 5, **options: object) -> ArenaSetup:
    cfg = LiveITTExperiment.model_validate(
        {
            "game": "live-itt",
            "ai_agents": [AI],
            "conditions": [condition],
            "exchange_limits": [limit],
            **options,
        }
    )
    agents = {AI: ScriptedAgent(AI, AI_ANSWERS, cycle=True)}
    return ArenaSetup(
        [live_itt_mode("live-itt", "Live integrative test", cfg)],
        agents,
        {AI: "Murrow (scripted)"},
        ArenaSettings(),
    )


async def _state(p: Person, **match: object) -> dict:
    return await p.until("strong", timeout=15, **match)


async def test_live_itt_session_verdict_and_no_leaks() -> None:
    with running_arena(setup("deceitful-ai")) as (base, app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode="live-itt", consent=True)
            sa, sb = await _state(a), await _state(b)
            judge, agent = (a, b) if sa["role"] == "investigator" else (b, a)
            assert (sa if judge is a else sb)["phase"] == "asking"
            for n, answer in enumerate(ANSWERS, start=1):
                await judge.send(type="message", channel="A", text=f"question {n}?")
                seen = await _state(agent, phase="answering")
                assert "convince the judge that you are the human" in seen["brief"]
                assert seen["history"][-1]["question"] == f"question {n}?"
                await agent.send(type="message", channel="A", text=answer)
                while True:
                    got = await _state(judge)
                    turn = got["history"][-1] if got["history"] else {"turn": 0}
                    if turn["turn"] == n and turn["replies"]:
                        break
                texts = [r["text"] for r in turn["replies"]]
                assert sorted(texts) == sorted([answer, AI_ANSWERS[n - 1]])
                assert got["phase"] == ("asking" if n < len(ANSWERS) else "verdict")
            assert got["labels"] == ["A", "B"] and got["phase"] == "verdict"
            human_label = "AB"[texts.index(ANSWERS[-1])]
            await judge.send(type="verdict", choice=human_label, confidence=80, reason="typos")
            end = await _state(judge, phase="ended")
            agent_end = await _state(agent, phase="ended")
            assert agent_end["outcome"] == end["outcome"]
            assert end["outcome"].startswith(f"The judge was right: {human_label} was the person")
            assert "the AI (Murrow (scripted))" in end["outcome"]
            (record,) = app.state.arena.finished
            (verdict,) = record["judgements"]
            assert verdict["confidence"] == 80 and record["correct"] is True
            assert record["trial"]["params"]["condition"] == "deceitful-ai"
            # The human agent never saw the AI's answers; nobody saw a name or the story early.
            story = record["trial"]["params"]["life_story"]
            for person in (judge, agent):
                cut = next(i for i, f in enumerate(person.frames) if f.get("phase") == "ended")
                early = json.dumps(person.frames[:cut])
                for secret in (AI, "Murrow", "agent_a", "agent_b", story[:30]):
                    assert secret not in early, secret
            assert not any(t in json.dumps(agent.frames) for t in AI_ANSWERS)
        finally:
            await a.close()
            await b.close()


def test_life_stories_are_seeded() -> None:
    assert life_story(random.Random(4)) == life_story(random.Random(4))
    assert len({life_story(random.Random(s)) for s in range(20)}) > 10


async def test_the_reveal_does_not_credit_eliza_with_a_persona() -> None:
    """ELIZA seated as the AI of a deceitful-AI session: the outcome says it answered as
    itself, not that it played a person from a life story (it follows no prompt)."""
    eliza = setup("deceitful-ai", limit=1)
    eliza.agents = {AI: ElizaAgent(AI)}
    with running_arena(eliza) as (base, _app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode="live-itt", consent=True)
            sa, _sb = await _state(a), await _state(b)
            judge, agent = (a, b) if sa["role"] == "investigator" else (b, a)
            await judge.send(type="message", channel="A", text="what is your job?")
            await _state(agent, phase="answering")
            await agent.send(type="message", channel="A", text="I teach maths")
            got = await _state(judge, phase="verdict")
            human = "AB"[[r["text"] for r in got["history"][-1]["replies"]].index("I teach maths")]
            await judge.send(type="verdict", choice=human, confidence=60, reason="")
            end = await _state(judge, phase="ended")
            assert "follows a fixed script, so it answered as itself" in end["outcome"]
            assert "life story" not in end["outcome"]
        finally:
            await a.close()
            await b.close()
