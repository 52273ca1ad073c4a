"""Every GTT variant against an endpoint that, like vLLM with Gemma's or Mistral's template,
refuses (HTTP 400) a conversation whose roles do not alternate user/assistant.

The game's notes (the verdict request at the turn cap or after the last controlled round) and
the instruction that follows a querying phase ended by its cap or budget come right after a
reply the seat received; merged into it, every history alternates. Without the merge the
controlled-turn and querying trials below would fail every attempt."""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.runner.plan import plan_trials
from turinglab.store.database import Store
from turinglab.testing.fake_openai import FakeBehaviour, FakeOpenAIServer, roles_problem

VARIANTS = ["gtt", "gttq", "gtt-turns", "gttq-queries", "fdgtt", "fdgttq", "gdgtt"]


def test_strict_roles_rule() -> None:
    ok = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert roles_problem(ok) is None
    assert roles_problem([*ok, {"role": "assistant", "content": "a"}]) is None
    assert "must alternate" in str(roles_problem([*ok, {"role": "user", "content": "u2"}]))
    assert roles_problem([{"role": "assistant", "content": "a"}]) is not None


def _post(base_url: str, messages: list[dict[str, str]]) -> int:
    req = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps({"model": "m", "messages": messages}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


async def test_strict_server_refuses_two_user_turns() -> None:
    import asyncio

    server = FakeOpenAIServer(FakeBehaviour(strict_roles=True))
    base_url = await server.start()
    try:
        two_users = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        assert await asyncio.to_thread(_post, base_url, two_users) == 400
        assert await asyncio.to_thread(_post, base_url, two_users[:1]) == 200
    finally:
        await server.stop()


@pytest.mark.parametrize("prompt_set", ["paper", "v1"])
async def test_every_variant_alternates_roles(tmp_path: Path, prompt_set: str) -> None:
    server = FakeOpenAIServer(FakeBehaviour(strict_roles=True, answer_after=2))
    base_url = await server.start()
    try:
        agent = {"kind": "openai", "base_url": base_url, "api_key_env": None}
        cfg = parse_config(
            {
                "name": f"strict-{prompt_set}",
                "agents": {n: {**agent, "model": f"m-{n}"} for n in ("a", "b", "d")},
                "experiment": {
                    "game": "gtt",
                    "variants": VARIANTS,
                    "universe": ["a", "b"],
                    "distinguishers": ["d"],
                    "budgets": [1, 2],
                    "budget_pairs": [["a", "b"]],
                    "trials_per_pair": 2,
                    # The fake never says STOP: querying phases end at the cap, the main game
                    # at its cap with a verdict request (both merged into the reply before).
                    "max_specimen_turns": 2,
                    "max_distinguisher_turns": 1,
                    "on_turn_cap": "ask-for-answer",
                    "prompt_set": prompt_set,
                },
                "runner": {"max_attempts": 1},
            }
        )
        store = Store(str(tmp_path / "s.db"))
        summary = await run_experiment(cfg, store, say=lambda m: None)
        assert summary.status == "finished", store.failed_attempts(summary.run_id)
        stats = server.stats()
    finally:
        await server.stop()
    assert "400" not in stats["by_status"], stats
    rows = store.results(summary.run_id)
    assert len(rows) == len(plan_trials(cfg))
    assert {r.params["variant"] for r in rows} == set(VARIANTS)
    # The merges really happened: capped querying phases and verdict requests.
    queried = [r for r in rows if "query" in r.details["phases"]]
    ended = {r.details["phases"]["query"]["ended_by"] for r in queried}
    assert queried and ended <= {"cap", "budget"}
    assert any(r.details.get("asked_for_answer") for r in rows)
    # The store keeps the transcript itself, note and reply apart: there, runs of one role
    # show where the game merged turns before calling the model.
    runs = [
        seat
        for r in rows
        for seat, history in r.histories.items()
        if any(x["role"] == y["role"] for x, y in itertools.pairwise(history))
    ]
    assert {"distinguisher", "unknown"} <= set(runs)
    assert stats["completions"] == sum(r.calls for r in rows)


# ---- answers a real model may give: conflicting tags, the instruction echoed ----------------


def _table(judge: list[str], unknown: list[str]):
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.games.gtt import DISTINGUISHER, UNKNOWN
    from turinglab.games.table import Seat, Table

    async def direct(agent, history, ctx):
        return await agent.reply(history, ctx)

    seats = {
        DISTINGUISHER: Seat(DISTINGUISHER, "B", ScriptedAgent("B", judge)),
        UNKNOWN: Seat(UNKNOWN, "A", ScriptedAgent("A", unknown)),
    }
    return Table(seats=seats, caller=direct, seed=5)


@pytest.mark.parametrize(
    ("prompt_set", "final", "reason"),
    [
        ("paper", "Hmm. <answer>1</answer> or rather <answer>0</answer>", "conflicting-answers"),
        ("paper", "I will reply within <answer></answer> brackets.", "echoed-example"),
        # v1's instruction shows both tags; a model quoting it has not answered.
        ("v1", "<answer>1</answer> if the same, or <answer>0</answer> if not", "echoed-example"),
        ("v1", "<answer>0</answer> ... no, <answer>1</answer>", "conflicting-answers"),
    ],
)
async def test_ambiguous_final_message_is_a_visible_no_answer(
    prompt_set: str, final: str, reason: str
) -> None:
    from turinglab.games.gtt import GTTRules, GTTSetup, play_gtt
    from turinglab.games.gtt_prompts import GTTPrompts

    table = _table(["Hi", final], ["Hello"])
    prompts = GTTPrompts.load(prompt_set=prompt_set)
    result = await play_gtt(table, GTTSetup(True), prompts, GTTRules())
    assert (result.status, result.verdict, result.correct) == ("no-answer", None, None)
    assert result.details["no_answer_reason"] == reason
    assert result.details["raw_final_message"] == final


async def test_ambiguous_answer_can_be_asked_again() -> None:
    from turinglab.games.gtt import DISTINGUISHER, GTTRules, GTTSetup, play_gtt
    from turinglab.games.gtt_prompts import GTTPrompts

    table = _table(["Hi", "<answer>1</answer> <answer>0</answer>", "<answer>0</answer>"], ["Yo"])
    rules = GTTRules(on_ambiguous_answer="re-ask")
    result = await play_gtt(table, GTTSetup(False), GTTPrompts.load(), rules)
    assert (result.status, result.verdict, result.correct) == ("answered", 0, True)
    assert result.details["re_asked"] == "conflicting-answers"
    ask = table.messages[-2]
    assert ask.visible_to == (DISTINGUISHER,) and "<answer></answer>" in ask.text
    # The request follows the judge's own message, so its history still alternates.
    roles = [m.role for m in table.view(DISTINGUISHER)]
    assert roles[-2:] == ["user", "assistant"]


async def test_quoted_format_in_the_opening_is_not_an_opening_answer() -> None:
    from turinglab.games.gtt import GTTRules, GTTSetup, play_gtt
    from turinglab.games.gtt_prompts import GTTPrompts

    table = _table(["Hi! I'll answer in <answer></answer> later.", "<answer>1</answer>"], ["Hey"])
    result = await play_gtt(table, GTTSetup(True), GTTPrompts.load(), GTTRules())
    assert (result.status, result.verdict) == ("answered", 1)
    assert result.details["opening_tags"] == "echoed-example"


async def test_verdict_request_joins_the_last_reply() -> None:
    from turinglab.games.gtt import DISTINGUISHER, GTTRules, GTTSetup, play_gtt
    from turinglab.games.gtt_prompts import GTTPrompts

    table = _table(["q1", "<answer>1</answer>"], ["r1"])
    prompts = GTTPrompts.load()
    result = await play_gtt(table, GTTSetup(True, "gtt-turns", budget=1), prompts, GTTRules())
    assert result.verdict == 1
    view = table.view(DISTINGUISHER)
    assert [m.role for m in view] == ["user", "assistant", "user", "assistant"]
    assert view[2].content == "r1\n\n" + prompts.last_round.strip()
