"""Strong Turing Test sessions: fan-out, independent replies, hidden identities, ties."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from games_helpers import CONTEXT, Failing, Recording, play_with_people, table_for
from turinglab.agents.errors import FatalError
from turinglab.agents.human import HumanAgent, HumanInput, say
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.clock import SimulatedClock
from turinglab.games.events import EventLog, GameFlagged, InputRefused
from turinglab.games.kinds import game_for
from turinglab.games.spec import FINISHED, FLAGGED
from turinglab.games.strong import StrongExperiment, StrongGame
from turinglab.human.strong import load_stt, stt_scores


def make_game(**overrides: object) -> StrongGame:
    cfg = {
        "game": "strong",
        "investigators": ["inv"],
        "systems": ["sys"],
        "humans": ["h1", "h2"],
        "stand_ins": ["h1", "h2"],
        "turns": 3,
        **overrides,
    }
    game = game_for(StrongExperiment.model_validate(cfg), CONTEXT)
    assert isinstance(game, StrongGame)
    return game


def batch_agents() -> dict[str, Recording]:
    return {
        "inv": Recording(
            ScriptedAgent("inv", ["What is 2+2?", "2", "Name a color", "tie", "Bye", "1"])
        ),
        "sys": Recording(ScriptedAgent("sys", ["SYS-4", "SYS-red", "SYS-bye"])),
        "h1": Recording(ScriptedAgent("h1", ["H1-four", "H1-blue", "H1-cya"])),
        "h2": Recording(ScriptedAgent("h2", ["H2-4?", "H2-green", "H2-later"])),
    }


async def test_fan_out_hidden_identities_and_ties(tmp_path: Path) -> None:
    game = make_game()
    spec = game.plan()[0]
    assert spec.seats == {"investigator": "inv", "system": "sys", "human_1": "h1", "human_2": "h2"}
    agents = batch_agents()
    table = table_for(game, spec, agents, SimulatedClock())
    assert table.seats["human_1"].kind == "stand-in" and table.seats["system"].kind == "agent"
    result = await game.play(table, spec)
    assert result.status == FINISHED and len(result.judgements) == 3
    first, second, third = result.judgements
    order = first.details["order"]
    assert first.kind == "preference" and first.turn == 1 and first.choice == order[1]
    assert second.tie and second.choice is None and third.choice == third.details["order"][0]
    # Every respondent got the question, and answered without seeing the others' replies.
    for name in ("sys", "h1", "h2"):
        answer_history = " ".join(m.content for m in agents[name].histories[0])
        assert "What is 2+2?" in answer_history
        others = {"SYS-4", "H1-four", "H2-4?"} - {agents[name].inner.replies[0]}  # type: ignore[attr-defined]
        assert not any(o in answer_history for o in others)
        # ... and saw all replies and the choice afterwards
        later = " ".join(m.content for m in agents[name].histories[1])
        assert all(r in later for r in ("SYS-4", "H1-four", "H2-4?")) and "chose Reply 2" in later
    # The investigator never sees who wrote what: no agent or seat names in its view.
    inv_view = " ".join(m.content for h in agents["inv"].histories for m in h)
    for hidden in ("human_1", "human_2", "system:", "h1", "h2", "sys:"):
        assert hidden not in inv_view
    listing = next(m.text for m in table.messages if m.phase == "choose-1" and m.sender == "game")
    positions = [listing.index(t) for t in ("SYS-4", "H1-four", "H2-4?")]
    shown = [s for _, s in sorted(zip(positions, ["system", "human_1", "human_2"], strict=True))]
    assert shown == order  # the listing follows the recorded, seeded order
    orders = [j.details["order"] for j in result.judgements]
    assert len({tuple(o) for o in orders}) > 1 or orders[0] != ["system", "human_1", "human_2"]
    # Export round trip into the existing STT analysis.
    rows = game.stt_rows(spec, result)
    path = tmp_path / "stt.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    loaded = load_stt(path)
    assert list(loaded["choice"])[1] == "tie" and set(loaded["sides"]) == {"sys;h1;h2"}
    assert stt_scores(loaded)  # the analysis accepts it


async def test_same_seed_same_order_and_unparseable_preference() -> None:
    game = make_game(turns=1)
    spec = game.plan()[0]
    runs = []
    for _ in range(2):
        table = table_for(game, spec, batch_agents(), SimulatedClock())
        runs.append(await game.play(table, spec))
    assert runs[0].judgements[0].details == runs[1].judgements[0].details
    agents = batch_agents()
    agents["inv"] = Recording(ScriptedAgent("inv", ["Q?", "I like the second best"]))
    table = table_for(game, spec, agents, SimulatedClock())
    result = await game.play(table, spec)
    assert result.status == "unparseable-preference" and result.judgements == []


async def test_people_play_and_a_failing_system_flags_a_live_session() -> None:
    game = make_game(humans=["person"], stand_ins=[], turns=2)
    spec = game.plan()[0]
    inv, person = HumanAgent("inv", "p1"), HumanAgent("person", "p2")
    log = EventLog()
    agents = {"inv": inv, "person": person, "sys": ScriptedAgent("sys", ["a fine answer"])}
    scripts = {
        "inv": [
            (1, say("hello both")),
            (9, HumanInput("preference", data={"reply": 7})),
            (10, HumanInput("preference", data={"tie": True})),
            (20, HumanInput("end")),
        ],
        "person": [(5, say("hi from a person"))],
    }
    result, table = await play_with_people(game, spec, agents, scripts, observer=log)
    assert result.status == FINISHED and result.details["end_reason"] == "investigator-ended"
    assert [j.tie for j in result.judgements] == [True]
    assert "choose a reply 1–2" in log.seen_by("investigator", InputRefused)[0].reason
    seen = [m.text for m in log.messages_to("human_1")]
    assert "hello both" in seen and any("a fine answer" in t for t in seen)
    assert table.seats["human_1"].kind == "human"

    agents["sys"] = Failing("sys")
    inv, person = HumanAgent("inv", "p1"), HumanAgent("person", "p2")
    agents.update(inv=inv, person=person)
    log = EventLog()
    result, _ = await play_with_people(
        game, spec, agents, {"inv": [(1, say("q"))], "person": [(2, say("a"))]}, observer=log
    )
    assert result.status == FLAGGED and "system" in result.flags[0]
    assert log.seen_by("human_1", GameFlagged)


async def test_batch_errors_propagate() -> None:
    game = make_game(turns=1)
    spec = game.plan()[0]
    agents = dict(batch_agents())
    agents["sys"] = Failing("sys")  # type: ignore[assignment]
    with pytest.raises(FatalError):
        await game.play(table_for(game, spec, agents, SimulatedClock()), spec)


def test_config_errors() -> None:
    with pytest.raises(ValueError, match="both system and human"):
        StrongExperiment.model_validate(
            {"game": "strong", "investigators": ["i"], "systems": ["x"], "humans": ["x"]}
        )
