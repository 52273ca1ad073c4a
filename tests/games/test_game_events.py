"""What games emit: typed events through the table's observer, the person port, and the one
plain form of a judgement. The engine knows no transport: no HumanAgent, no wire frames."""

from __future__ import annotations

import ast
from pathlib import Path

from turinglab.agents.base import AgentReply, CallContext, ChatMessage
from turinglab.agents.human import HumanAgent
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.events import EventLog, InputRefused, MessageSaid, TalkEnded
from turinglab.games.people import is_person, person_at
from turinglab.games.spec import Judgement
from turinglab.games.table import GAME, Seat, Table

GAMES = Path(__file__).parents[2] / "src" / "turinglab" / "games"


async def _no_call(_agent: object, _history: list[ChatMessage], _ctx: CallContext) -> AgentReply:
    raise AssertionError("no agent call expected")


def _table(observer: EventLog | None) -> Table:
    seats = {
        "judge": Seat("judge", "person:p1", HumanAgent("person:p1", "p1"), "human"),
        "bot": Seat("bot", "bot", ScriptedAgent("bot", ["hi"])),
    }
    return Table(seats=seats, caller=_no_call, seed=1, observer=observer)


def test_the_table_reports_each_message_to_the_seats_that_may_see_it() -> None:
    log = EventLog()
    table = _table(log)
    said = table.post("judge", "hello", visible_to=("judge", "bot"))
    table.tell("judge", "an instruction")
    table.show(InputRefused("wait", "ch"), "judge")
    table.announce(TalkEnded("time"))
    assert log.entries[0] == (MessageSaid(said), ("judge", "bot"))
    assert [m.sender for m in log.messages_to("judge")] == ["judge", GAME]
    assert [m.text for m in log.messages_to("bot")] == ["hello"]
    assert log.seen_by("judge", InputRefused) == [InputRefused("wait", "ch")]
    assert log.seen_by("bot", InputRefused) == []
    assert log.seen_by("bot", TalkEnded) == [TalkEnded("time")]  # to every seat


def test_a_table_nobody_watches_reports_nothing_and_still_plays() -> None:
    table = _table(None)
    table.post("judge", "hello", visible_to=("judge",))
    table.announce(TalkEnded("time"))
    assert [m.text for m in table.messages] == ["hello"]


def test_the_person_port_is_the_inbox_not_the_class() -> None:
    table = _table(None)
    assert is_person(table.seats["judge"].agent) and not is_person(table.seats["bot"].agent)
    assert person_at(table.seats, "judge") is table.seats["judge"].agent
    assert person_at(table.seats, "bot") is None


def test_a_judgement_has_one_plain_form_both_ways() -> None:
    j = Judgement(
        "interrogator", "verdict", "witness_a", 80.0, "typos", created_at=3.5, details={"x": 1}
    )
    plain = j.to_json()
    assert Judgement.from_json(plain) == j
    row = {"id": 7, "game_id": 2, "trial_id": None, **plain, "tie": 0, "details": None}
    stored = Judgement.from_json(row)  # a stored row: other columns ignored, NULLs read back
    assert stored.tie is False and stored.details == {} and stored.verdict == "witness_a"


def test_the_engine_imports_no_transport_and_builds_no_wire_frames() -> None:
    for path in GAMES.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = {a.name for a in node.names}
                assert "HumanAgent" not in names, f"{path.name} imports HumanAgent"
                assert not (node.module or "").startswith("turinglab.arena"), path.name
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                assert "type" not in keys, f"{path.name}:{node.lineno} builds a wire frame"
