"""Pages of the modes sent whole keep their place in their game stream, in Chromium against a
real server: the Strong Turing Test (practice: the person investigates, scripted sides reply),
the GTT (the person judges) and the ITT chat (a person with a scripted AI). Playwright sits on
the page's websocket and forwards every frame both ways; the test cuts the socket right after
the person's message went out, so what the game sent meanwhile is lost with it. The page (its
own protocol.js and mode script) reconnects naming its place (`?game=…&stream=…&seq=…`), is
answered with what it missed (not the lobby) and shows its game with every turn once. A state
frame of another stream, put on the socket by the test, is not shown and makes the page ask
where it stands, as the chat page does with a message of another stream
(tests/fixtures/page_protocol/whole_views.json).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from arena_fixtures import running_arena
from test_arena_browser import ARGS, CHROMIUM, PHONE
from test_arena_gtt import gtt_setup
from test_arena_itt_chat import chat_setup
from test_arena_strong import strong_setup
from turinglab.arena.modes.itt_chat_mode import TITLE as ITT_TITLE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]

Frame = dict[str, Any]


class Tap:
    """The page's websocket, relayed by the test: frames both ways kept, a cut on demand, and
    frames put on it as if the server had sent them."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.up: list[Frame] = []  # what the page sent
        self.down: list[list[Frame]] = []  # what the server sent, per socket
        self.cut_after: Callable[[Frame], bool] | None = None  # close after forwarding it
        # The socket that was cut: the page may have opened more than one before it (a slow
        # handshake given up on a busy machine), so the one after the cut is not always [1].
        self.cut: int | None = None
        self.page_side: Any = None

    def route(self, ws: Any) -> None:
        index = len(self.urls)
        self.urls.append(ws.url)
        self.page_side = ws
        got: list[Frame] = []
        self.down.append(got)
        server = ws.connect_to_server()

        def up(message: str | bytes) -> None:
            frame = json.loads(message)
            self.up.append(frame)
            server.send(message)
            if self.cut_after is not None and self.cut_after(frame):
                self.cut_after = None
                self.cut = index
                server.close()
                ws.close()

        def down(message: str | bytes) -> None:
            got.append(json.loads(message))
            ws.send(message)

        ws.on_message(up)
        server.on_message(down)

    def place(self, n: int) -> dict[str, str]:
        """The place socket `n` named on connecting (its query)."""
        return {k: v[0] for k, v in parse_qs(urlparse(self.urls[n]).query).items()}

    def last_state(self, kind: str) -> Frame:
        """The latest state frame of `kind` on any socket: the newest may carry none yet (a
        handshake given up after OPEN_MS on a loaded machine opens another; CI stop 40)."""
        return next(f for got in reversed(self.down) for f in reversed(got) if f["type"] == kind)


def _wait(page: Any, test: Callable[[], bool], what: str) -> None:
    for _ in range(300):  # polled: Playwright runs the route's callbacks while it waits
        if test():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.contextmanager
def _tapped(setup: Any, mode: str, view: str) -> Iterator[tuple[Any, Tap, Any]]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with running_arena(setup) as (base, app), sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        errors: list[str] = []
        page = browser.new_context(viewport=PHONE).new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        tap = Tap()
        page.route_web_socket(re.compile(r"/ws(\?.*)?$"), tap.route)
        page.goto(base + "/")
        page.locator("#consent").check()
        page.get_by_role("button", name=mode).click()
        page.locator(view).wait_for(state="visible")
        yield page, tap, app
        assert errors == []
        browser.close()


def _reconnected(page: Any, tap: Tap) -> None:
    """The page has opened its second socket and been answered `resumed` on it. Waited for, not
    assumed: the partner's reply can reach the page on the first socket before the cut closes it
    (a fast AI on a loaded machine), so a shown reply does not mean the page has reconnected yet,
    nor that the answer to its reconnection has come."""
    for _ in range(300):
        after = -1 if tap.cut is None else tap.cut + 1
        if 0 < after < len(tap.urls) and any(f["type"] == "resumed" for f in tap.down[after]):
            break
        page.wait_for_timeout(100)
    assert tap.cut is not None and len(tap.urls) == tap.cut + 2, (tap.cut, tap.urls)


def _resumed_in_place(tap: Tap, app: Any, kind: str) -> None:
    """The socket after the cut named the cut one's game and stream, and was answered as a
    resume: the frames it missed (or the state as a snapshot), then `resumed`; never the lobby."""
    assert tap.cut is not None
    # The last state frame the page had before the cut: a pong or an ack may have come after
    # it, and it may have come on an earlier socket (one reopened after a slow handshake).
    place = tap.place(tap.cut + 1)
    before = [f for got in tap.down[: tap.cut + 1] for f in got]
    first = next(f for f in reversed(before) if "stream" in f and "game" in f)
    assert place["game"] == first["game"] and place["stream"] == first["stream"]
    assert int(place["seq"]) >= 0
    got = tap.down[tap.cut + 1]
    end = next(i for i, f in enumerate(got) if f["type"] == "resumed")
    assert got[end]["stream"] == place["stream"]
    assert all(f["type"] in (kind, "ack", "typing") for f in got[:end]), got[:end]
    assert "status" not in [f["type"] for f in got[: end + 1]]
    assert app.state.arena.metrics.resumes >= 1


def _other_stream(page: Any, tap: Tap, kind: str, change: Callable[[Frame], None]) -> None:
    """A state of another stream, one past the page's seq: not shown; the page asks to resume
    from where it is, naming its own stream, and the server answers `resumed`."""
    real = tap.last_state(kind)
    fake = json.loads(json.dumps(real))
    fake.update(stream="feedf00d", seq=real["seq"] + 1)
    fake.pop("snapshot", None)
    change(fake)
    asked = len(tap.up)
    tap.page_side.send(json.dumps(fake))
    _wait(page, lambda: any(f["type"] == "resume" for f in tap.up[asked:]), "a resume")
    resume = next(f for f in tap.up[asked:] if f["type"] == "resume")
    assert resume["stream"] == real["stream"] and resume["game"] == real["game"]
    _wait(page, lambda: tap.down[-1][-1]["type"] == "resumed", "the answer to it")
    assert "INJECTED" not in page.content()


def test_an_stt_page_resumes_its_place_after_a_cut() -> None:
    with _tapped(strong_setup(), "STT practice: you investigate", "#v-strong") as (page, tap, app):
        tap.cut_after = lambda f: f.get("type") == "message"
        page.locator("#s-text").fill("What did you eat today?")
        page.locator("#s-text").press("Enter")
        page.locator(".s-pick").first.wait_for(timeout=30_000)  # the replies, on socket 2
        _reconnected(page, tap)
        _resumed_in_place(tap, app, "strong")
        assert page.locator("#v-lobby").is_hidden() and page.locator("#v-strong").is_visible()
        turns = page.locator(".s-turn")
        assert turns.count() == 1 and page.locator(".s-reply").count() == 2
        assert turns.first.locator(".s-question .s-text").inner_text() == "What did you eat today?"
        sent = [f for f in tap.up if f.get("type") == "message"]
        assert len({f["id"] for f in sent}) == 1  # one input, however often it went

        def changed(f: Frame) -> None:
            f["history"][0]["question"] = "INJECTED"

        _other_stream(page, tap, "strong", changed)
        assert turns.first.locator(".s-question .s-text").inner_text() == "What did you eat today?"

        # The game goes on in the same stream: a preference, the next turn, each once.
        page.locator(".s-pick").first.click()
        page.locator("#s-compose").wait_for(state="visible")
        page.locator("#s-text").fill("Describe rain.")
        page.locator("#s-text").press("Enter")
        page.locator(".s-turn").nth(1).locator(".s-pick").first.wait_for()
        assert [t.get_attribute("data-turn") for t in page.locator(".s-turn").all()] == ["1", "2"]
        assert page.locator(".s-turn").first.locator(".s-outcome").count() == 1
        (record,) = app.state.arena.games.values()
        assert [n for n in sorted(record.turns)] == [1, 2]  # the server's turns, once each


def test_a_gtt_page_resumes_its_place_after_a_cut() -> None:
    with _tapped(gtt_setup(), "GTT: you are the judge", "#v-gtt") as (page, tap, app):
        study = page.locator('[data-gchat="study"] .msg')
        tap.cut_after = lambda f: f.get("type") == "message"
        box = page.locator('[data-gchat="study"] textarea')
        page.wait_for_function(
            '() => !document.querySelector(`[data-gchat="study"] textarea`).disabled'
        )
        box.fill("Hello, what are you like?")
        box.press("Enter")
        page.locator('[data-gchat="study"] .msg.them').wait_for(timeout=30_000)
        _reconnected(page, tap)
        _resumed_in_place(tap, app, "gtt")
        assert page.locator("#v-lobby").is_hidden() and page.locator("#v-gtt").is_visible()
        mine = page.locator('[data-gchat="study"] .msg.you')
        assert mine.count() == 1 and "Hello, what are you like?" in mine.first.inner_text()
        shown = study.count()

        def changed(f: Frame) -> None:
            chat = next(c for c in f["chats"] if c["name"] == "study")
            chat["lines"].append({**chat["lines"][-1], "n": 99, "text": "INJECTED"})

        _other_stream(page, tap, "gtt", changed)
        assert study.count() == shown

        # On in the same stream: the test chat, its answer, once each.
        page.get_by_role("button", name="Done studying").click()
        test_box = page.locator('[data-gchat="test"] textarea')
        page.wait_for_function(
            '() => !document.querySelector(`[data-gchat="test"] textarea`).disabled'
        )
        test_box.fill("Are you real?")
        test_box.press("Enter")
        page.locator('[data-gchat="test"] .msg.them').wait_for()
        assert page.locator('[data-gchat="test"] .msg.you').count() == 1
        # The study chat: the person's message and the model's answer once each, then the
        # game's line that it ended.
        said = [m.get_attribute("class") for m in study.all()]
        assert len(said) == shown + 1 and mine.count() == 1 and "INJECTED" not in page.content()
        assert page.locator('[data-gchat="study"] .msg.them').count() == 1


def test_an_itt_chat_page_resumes_its_place_after_a_cut() -> None:
    setup = chat_setup(ai_after_s=0)  # a lone chatter meets the scripted AI at once
    with _tapped(setup, ITT_TITLE, "#c-log") as (page, tap, app):
        writable = "() => !document.getElementById('c-text').readOnly"
        page.wait_for_function(writable, timeout=30_000)
        theirs = page.locator("#c-log .msg.them")
        before = theirs.count()  # the AI's opening, when it writes first
        tap.cut_after = lambda f: f.get("type") == "message"
        page.locator("#c-text").fill("I like jazz too")
        page.locator("#c-text").press("Enter")
        page.wait_for_function(
            "n => document.querySelectorAll('#c-log .msg.them').length > n", arg=before
        )
        _reconnected(page, tap)
        _resumed_in_place(tap, app, "itt-chat")
        assert page.locator("#v-lobby").is_hidden()
        mine = page.locator("#c-log .msg.you")
        assert mine.count() == 1 and theirs.count() == before + 1

        def changed(f: Frame) -> None:
            f["lines"].append({**f["lines"][-1], "n": 99, "text": "INJECTED"})

        _other_stream(page, tap, "itt-chat", changed)
        page.wait_for_function(writable)
        page.locator("#c-text").fill("what about you")
        page.locator("#c-text").press("Enter")
        page.wait_for_function(
            "n => document.querySelectorAll('#c-log .msg.them').length > n", arg=before + 1
        )
        assert mine.count() == 2 and theirs.count() == before + 2
