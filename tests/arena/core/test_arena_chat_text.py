"""Chat text is stored and relayed without NUL, control or bidi-control characters, in every
mode (they all pass through LiveGame._text), and the length limit counts UTF-16 code units, as
the page's maxlength and counter do (issue 32: NUL and a right-to-left override reached the
partner and the store; 300 emoji passed a "300-character" limit the page counts as 600)."""

from __future__ import annotations

import pytest

from arena_fixtures import Person, pair, running_arena
from test_arena_itt_chat import chat_setup
from turinglab.arena.core.chat_text import clean, utf16_length
from turinglab.arena.modes.itt_chat_mode import MODE

pytestmark = pytest.mark.server

DIRTY = "pay\x00 me\u202e 0g\u202c\u2066ni\u2069ht\x07\x1b[31m\r\nok\u200f\ufeff\ud800"
CLEAN = "pay me 0gniht[31m\nok"
WIRE = DIRTY.removesuffix("\ud800")  # a lone surrogate: the frame parser's own refusal (below)
EMOJI = "\U0001f600"  # outside the BMP: two UTF-16 code units, one code point


def test_clean_drops_controls_bidi_and_lone_surrogates_but_keeps_text() -> None:
    assert clean(DIRTY) == CLEAN
    for kept in ("שלום עולם", "a\tb\nc", "👨\u200d👩\u200d👧", "x\u200cy", "naïve café"):
        assert clean(kept) == kept
    assert clean("a\u2028b\u2029c\x85d\re") == "a\nb\nc\nd\ne"
    assert utf16_length(EMOJI * 150) == 300 and utf16_length("é" * 300) == 300


async def test_people_relay_and_store_clean_text_within_the_pages_count() -> None:
    records: list[dict] = []
    with running_arena(on_finished=records.append) as (base, _app):
        judge, witness, _gj, _gw = await pair(base, "three-party")
        try:
            # 151 emoji are 302 code units: the page refuses them, and so does the server.
            await judge.send(type="message", channel="A", text=EMOJI * 151)
            assert (await judge.until("error"))["code"] == "too-long"
            await judge.send(type="message", channel="A", text="\x00\u202e\u2066 \u200f")
            assert (await judge.until("error"))["code"] == "empty"  # nothing left to say
            await judge.send(type="message", channel="A", text=WIRE)
            assert (await judge.until("message", sender="you", channel="A"))["text"] == CLEAN
            await judge.send(type="message", channel="B", text=WIRE)
            await judge.until("message", sender="you", channel="B")
            heard = await witness.until("message", sender="them")
            assert heard["text"] == CLEAN
            reply = EMOJI * 150  # 300 code units: as many as the page lets one type
            await witness.send(type="message", channel="A", text=reply)
            got = await judge.until("message", sender="them", text=reply)
            await judge.send(type="end")
            await judge.until("phase", phase="verdict")
            await judge.send(
                type="verdict", choice=got["channel"], confidence=60, reason="rtl\u202etrick\x00"
            )
            await judge.until("reveal")
        finally:
            await judge.close()
            await witness.close()
    (rec,) = records
    texts = [m["text"] for m in rec["messages"]]
    assert texts.count(CLEAN) == 2 and reply in texts
    assert not any(ch in t for t in texts for ch in "\x00\u202e\u2066\u200f\ufeff\r")
    assert rec["judgements"][0]["reason"] == "rtltrick"


async def test_an_itt_conversation_cleans_text_the_same_way() -> None:
    with running_arena(chat_setup(ai_after_s=0, seed=1)) as (base, app):
        p = Person(base)
        try:
            await p.connect()
            await p.send(type="join", mode=MODE, consent=True)
            state = await p.until("itt-chat")
            while state["phase"] != "writing":
                state = await p.until("itt-chat")
            await p.send(type="message", channel="A", text=EMOJI * 151)
            assert (await p.until("error"))["code"] == "too-long"
            await p.send(type="message", channel="A", text=WIRE)
            said = await p.until("itt-chat")
            while not any(m["sender"] == "you" for m in said["lines"]):
                said = await p.until("itt-chat")
            assert [m["text"] for m in said["lines"] if m["sender"] == "you"] == [CLEAN]
        finally:
            await p.close()
        (game,) = app.state.arena.games.values()
        assert CLEAN in [m["text"] for m in game.record()["messages"]]


async def test_a_lone_surrogate_is_never_said() -> None:
    """JSON may spell half a surrogate pair ("\\ud800"): not text, and no UTF-8 store takes it.
    The frame parser refuses it (clean() would drop it on any other path), and the connection
    serves on."""
    with running_arena() as (base, _app):
        p = Person(base)
        try:
            await p.connect()
            await p.send(type="join", mode="practice", consent=True)
            await p.until("game")
            assert p.ws is not None
            await p.ws.send_str('{"type": "message", "channel": "A", "text": "lone \\ud800 half"}')
            answer = await p.until_any(("error", "message"))
            assert answer["type"] == "error", answer
            await p.send(type="ping")  # and the connection serves on
            await p.until("pong")
        finally:
            await p.close()
