"""A text-only model is given an "[image]" marker per image (agents/base.py) and may echo it;
what a live game shows a person never carries the marker (issue 31: the STT's AI replies had a
literal "[image]", even in turns without one)."""

from __future__ import annotations

from games_helpers import direct_caller
from turinglab.agents.base import ChatMessage, without_image_markers
from turinglab.agents.scripted import ScriptedAgent
from turinglab.games.live import call_seat
from turinglab.games.table import Seat, Table


def test_markers_are_taken_out_and_the_text_kept() -> None:
    assert without_image_markers("[image] a cat on a mat [image]") == "a cat on a mat"
    assert without_image_markers("look:\n[image]\nnice, right?") == "look:\nnice, right?"
    assert without_image_markers("no markers here") == "no markers here"
    assert without_image_markers("[image]") == ""


async def test_a_seat_reply_reaches_the_game_without_markers() -> None:
    agent = ScriptedAgent("bot", ["[image] that's my dog, rex [image]"])
    table = Table(seats={"w": Seat("w", "bot", agent)}, caller=direct_caller, seed=1)
    history = [ChatMessage("user", "whose dog is this?\n[image]")]
    for deadline in (None, 30.0):
        reply = await call_seat(table, "w", history, deadline_s=deadline)
        assert reply.text == "that's my dog, rex"
