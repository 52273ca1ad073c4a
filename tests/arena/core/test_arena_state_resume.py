"""The modes whose frame is a viewer's whole state (here the Strong Turing Test) number it in
the viewer's stream, as the chat games number their frames (arena/core/resume.py): the state a
page is sent on connect is a snapshot saying its stream and seq; a page that reconnects naming
its place gets exactly the frames it missed, then `resumed`; one that missed more than the
latest state gets that state as a snapshot (it supersedes everything before it); and what it
gets, fed through the page's own rules (page_protocol.py, static/protocol.js's mirror), is
all taken, in order, with no gap asked for and nothing dropped as already seen."""

from __future__ import annotations

from typing import Any

from arena_fixtures import Person, running_arena
from test_arena_strong import strong_setup
from turinglab.arena.core import frames as F
from turinglab.arena.core.page_protocol import PageProtocol
from turinglab.arena.core.resume import Outbox, ResumePoint

Frame = dict[str, Any]


async def _reconnect(person: Person, at: Frame) -> list[Frame]:
    """A new socket naming `at` (as the page's query does); the frames up to `resumed`."""
    query = "&".join(f"{k}={v}" for k, v in at.items())
    person.ws = await person.http.ws_connect(person.base.replace("http", "ws") + "/ws?" + query)
    got = [await person.recv(15)]
    while got[-1]["type"] != "resumed":
        got.append(await person.recv(15))
    return got


def _taken(page: PageProtocol, frames: list[Frame]) -> list[bool]:
    out = []
    for f in frames:
        taken = page.frame(f, 0)
        assert not any(s["type"] == "resume" for s in taken.sends), f  # no gap, no other stream
        out.append(taken.take)
    return out


async def test_a_whole_state_page_resumes_with_exactly_what_it_missed_or_the_latest_state() -> None:
    with running_arena(strong_setup()) as (base, _app):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
            await a.send(type="join", mode="strong", consent=True)
            await b.send(type="join", mode="strong", consent=True)
            sa, sb = await a.until("strong"), await b.until("strong")
            inv, resp, first = (a, b, sb) if sa["role"] == "investigator" else (b, a, sa)
            # The game's first state is a snapshot of the respondent's stream.
            assert first["snapshot"] is True and first["stream"] and first["seq"] == 0
            page = PageProtocol()
            assert _taken(page, [first]) == [True]
            at = page.query()
            assert at == {"game": first["game"], "stream": first["stream"], "seq": 0}

            # 1. The respondent's socket goes; the question reaches their view meanwhile.
            await resp.drop()
            await inv.send(type="message", id="q1", channel="A", text="What did you eat?")
            await inv.until("ack", ref="q1")
            await inv.until("strong", phase="waiting")
            missed = await _reconnect(resp, at)
            *frames, resumed = missed
            assert [f["type"] for f in frames] == ["strong"] and "snapshot" not in frames[0]
            assert [f["seq"] for f in frames] == [1] and frames[0]["stream"] == at["stream"]
            assert frames[0]["phase"] == "answering"
            assert resumed == {"type": "resumed", **at, "seq": 1}
            assert _taken(page, missed) == [True, True]
            assert page.query() == {**at, "seq": 1}

            # 2. Answered, then gone while several states come (their own reply shown, the
            # replies given, the preference): a page that names the seq before them gets the
            # latest state as a snapshot, which stands for all of them.
            at = page.query()
            await resp.send(type="message", id="r1", channel="A", text="toast, mostly")
            own = await resp.until("strong", phase="waiting")
            ack = await resp.until("ack", ref="r1")
            assert _taken(page, [own, ack]) == [True, True]
            assert (own["seq"], ack["seq"]) == (2, 3)
            await resp.drop()
            choosing = await inv.until("strong", phase="choosing")
            await inv.send(type="preference", id="p1", tie=True)
            await inv.until("strong", phase="asking")
            missed = await _reconnect(resp, at)
            snap, resumed = missed
            assert snap["snapshot"] is True and snap["stream"] == at["stream"]
            assert snap["seq"] == resumed["seq"] >= 5  # replies given and chosen, at least
            assert snap["history"][0]["decided"] and snap["history"][0]["tie"]
            assert _taken(page, missed) == [True, True]
            # The same place again, now current: nothing missed, nothing re-sent.
            assert await _reconnect(resp, page.query() or {}) == [
                {"type": "resumed", **(page.query() or {})}
            ]

            # 3. A place in another stream (a takeover's old owner, a page of long ago): the
            # state as a snapshot of this stream, which the page takes as its game moved.
            old = {**(page.query() or {}), "stream": "0ld0ld00"}
            page.at = dict(old)
            snap, resumed = await _reconnect(resp, old)
            assert snap["snapshot"] is True and snap["stream"] == at["stream"] != old["stream"]
            assert page.frame(snap, 0).notice == "moved"
            assert len(choosing["history"]) == len(snap["history"]) == 1  # no turn twice
            # Only states sent as snapshots say so: the ones the game pushes are numbered.
            pushed = [f for f in inv.frames if f["type"] == "strong"][1:]
            assert pushed and all("snapshot" not in f and f["seq"] > 0 for f in pushed)
        finally:
            await a.close()
            await b.close()


def test_a_whole_state_supersedes_the_frames_kept_before_it() -> None:
    def state(text: str) -> F.ITTChatState:
        return F.ITTChatState(
            game="g", mode="m", title="t", practice=True, topic=text, you="A",
            exchanges=4, phase="writing", max_chars=10, lines=[],
        )  # fmt: skip

    box = Outbox()
    box.stamp(F.Ack(ref="a"))
    box.stamp(state("one"))
    box.stamp(F.TypingShown(channel="A"))
    latest = box.stamp(state("two"))
    ack = box.stamp(F.Ack(ref="b"))
    at = lambda seq: ResumePoint("g", box.stream, seq)  # noqa: E731
    assert box.after(at(5)) == [] and box.after(at(4)) == [ack]
    assert box.after(at(3)) == [latest, ack]  # exactly what was missed, from the state on
    assert box.after(at(2)) is None  # more: the state as it is now, as a snapshot
    snap = box.snapshot(state("two"))
    assert (snap.snapshot, snap.stream, snap.seq) == (True, box.stream, 5)
    assert F.is_snapshot(snap) and not F.is_snapshot(latest)
    assert F.dump(snap)["snapshot"] is True and "snapshot" not in F.dump(latest)
