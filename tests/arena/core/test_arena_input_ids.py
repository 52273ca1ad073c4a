"""Inputs are applied once in the games whose views are whole states (STT, GTT, live ITT, ITT
chats), as in the chat games: over real websockets a person's input carries an id; re-sent
after a reconnect, when the game has moved on to a turn where it would fit again, it is
acknowledged (`ack` naming it) and not applied a second time. Without ids the re-send would be
taken as the next turn's input, which each test then checks did not happen."""

from __future__ import annotations

from typing import Any

from arena_fixtures import Person, running_arena
from test_arena_gtt import gtt_setup, lines, until_state
from test_arena_itt_chat import PEOPLE_LINES, chat_setup
from test_arena_strong import strong_setup
from test_arena_strong_itt import ANSWERS
from test_arena_strong_itt import setup as live_itt_setup
from turinglab.arena.modes.itt_chat_mode import MODE as CHAT_MODE


async def resend(person: Person, frame: dict[str, Any]) -> None:
    """What the page does after a reconnect: the same input, the same id, again."""
    await person.drop()
    await person.connect()
    await person.send(**frame)
    acked = await person.until_any(("ack", "error"))
    assert acked == {
        "type": "ack",
        "ref": frame["id"],
        "seq": acked["seq"],
        "stream": acked["stream"],
    }, acked


async def test_stt_a_resent_reply_is_applied_once() -> None:
    with running_arena(strong_setup()) as (base, _app):
        me = Person(base)
        try:
            await me.connect()
            await me.send(type="join", mode="strong-respond", consent=True)
            await me.until("strong", phase="answering")
            first = {"type": "message", "channel": "A", "text": "porridge", "id": "stt-1"}
            await me.send(**first)
            assert (await me.until("ack"))["ref"] == "stt-1"
            seen = await me.until("strong", phase="answering")  # the second turn asks
            assert seen["history"][-1]["question"] == "Describe rain."
            await resend(me, first)
            await me.send(type="message", channel="A", text="grey", id="stt-2")
            end = await me.until("strong", phase="ended")
            assert [t["your_reply"] for t in end["history"]] == ["porridge", "grey"]
        finally:
            await me.close()


async def test_gtt_a_resent_message_is_applied_once() -> None:
    with running_arena(gtt_setup()) as (base, _app):
        me = Person(base)
        try:
            await me.connect()
            await me.send(type="join", mode="gtt-distinguish", consent=True)
            await until_state(me, lambda s: s["phase"] == "writing")
            first = {"type": "message", "channel": "study", "text": "Who are you?", "id": "g-1"}
            await me.send(**first)
            assert (await me.until("ack"))["ref"] == "g-1"
            await until_state(me, lambda s: len(lines(s, "study")) == 2 and s["phase"] == "writing")
            await resend(me, first)
            await me.send(type="message", channel="study", text="And then?", id="g-2")
            state = await until_state(me, lambda s: len(lines(s, "study")) == 4)
            mine = [text for sender, text in lines(state, "study") if sender == "you"]
            assert mine == ["Who are you?", "And then?"]
        finally:
            await me.close()


async def test_live_itt_a_resent_question_and_answer_are_applied_once() -> None:
    with running_arena(live_itt_setup("deceitful-ai")) as (base, _app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
                await p.send(type="join", mode="live-itt", consent=True)
            sa = await a.until("strong")
            await b.until("strong")
            judge, agent = (a, b) if sa["role"] == "investigator" else (b, a)
            question = {"type": "message", "channel": "A", "text": "question 1?", "id": "q-1"}
            await judge.send(**question)
            await agent.until("strong", phase="answering")
            answer = {"type": "message", "channel": "A", "text": ANSWERS[0], "id": "a-1"}
            await agent.send(**answer)
            assert (await agent.until("ack"))["ref"] == "a-1"
            while True:  # the first turn is done: the judge may ask again
                got = await judge.until("strong")
                if got["phase"] == "asking" and got["history"] and got["history"][0]["replies"]:
                    break
            await resend(judge, question)
            await resend(agent, answer)
            await judge.send(type="message", channel="A", text="question 2?", id="q-2")
            seen = await agent.until("strong", phase="answering")
            assert [t["question"] for t in seen["history"]] == ["question 1?", "question 2?"]
        finally:
            await a.close()
            await b.close()


async def test_itt_chat_a_resent_message_is_applied_once() -> None:
    with running_arena(chat_setup(ai_after_s=0, seed=1)) as (base, _app):
        me = Person(base)
        try:
            await me.connect()
            await me.send(type="join", mode=CHAT_MODE, consent=True)
            state = await me.until("itt-chat")
            while state["phase"] != "writing":
                state = await me.until("itt-chat")
            first = {"type": "message", "channel": "A", "text": PEOPLE_LINES[0], "id": "c-1"}
            await me.send(**first)
            assert (await me.until("ack"))["ref"] == "c-1"
            await me.until("itt-chat", phase="writing")  # the partner has answered
            await resend(me, first)
            await me.send(type="message", channel="A", text=PEOPLE_LINES[1], id="c-2")
            mine: list[str] = []
            while len(mine) < 2:  # the second message shown (or the resend, were it applied)
                state = await me.until("itt-chat")
                mine = [m["text"] for m in state["lines"] if m["sender"] == "you"]
            assert mine == PEOPLE_LINES[:2]
        finally:
            await me.close()
