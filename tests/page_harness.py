"""Real arena pages in Chromium for the fault tests: a proxy in front of the processes (as
nginx), a page that records its socket's traffic, a person's moves on it, and what it shows.

Each page gets an init script that wraps `WebSocket` and logs, with the page's clock, every
frame in and out, every socket opened and every socket the page gave up (its heartbeat's
"reconnecting…"), what it shows the person itself (a toast, the connection line), and how
many inputs it still holds after each frame (protocol.js's `page.unanswered`).
`longest_unexplained_wait` reads that log (or a scripted talker's, in the same form) as a
person would live it: from the moment they are owed something (an input unanswered, or their
socket down) to the next frame or notice they are shown.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from fault_fixtures import StoredGame
from test_arena_browser import PHONE

WAIT_MS = 90_000  # conditions, not speed: generous for a loaded machine


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(ConnectionError, OSError):
        writer.close()


class FailoverProxy:
    """A TCP proxy: each connection goes to the first of `bases` that accepts it (a process
    that refuses is skipped, as nginx's next upstream). Once `rotate()`d, each new connection
    starts one further along the list (round robin), so a page's reconnect may well land on a
    process that accepts the connection and never answers (one paused by SIGSTOP)."""

    def __init__(self, bases: list[str]) -> None:
        self.ports = [int(b.rsplit(":", 1)[1]) for b in bases]
        self.rotating = False
        self.connections = 0  # since rotate()
        self.url = ""
        self._server: asyncio.Server | None = None

    def rotate(self) -> None:
        self.rotating, self.connections = True, 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        order = list(self.ports)
        if self.rotating:
            k = self.connections % len(order)
            self.connections += 1
            order = order[k:] + order[:k]
        for port in order:
            try:
                up_r, up_w = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue
            await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))
            return
        writer.close()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self.url

    def close(self) -> None:
        if self._server is not None:
            self._server.close()


@contextlib.asynccontextmanager
async def failover_proxy(bases: list[str]) -> AsyncIterator[FailoverProxy]:
    proxy = FailoverProxy(bases)
    await proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()


# Logs the page's socket traffic in window.__wire (see the module docstring).
RECORDER = """
(() => {
  const wire = (window.__wire = []);
  const held = () => { try { return page.unanswered.size; } catch (e) { return 0; } };
  // Where the page stands in its game stream after a frame (what it took): "stream:seq".
  const at = () => { try { return page.at ? `${page.at.stream}:${page.at.seq}` : null; }
                     catch (e) { return null; } };
  const Native = window.WebSocket;
  class Recorded extends Native {
    constructor(...args) {
      super(...args);
      window.__latestSocket = this;
      const latest = () => window.__latestSocket === this;
      wire.push({ t: Date.now(), e: "connect" });
      this.addEventListener("open", () => latest() && wire.push({ t: Date.now(), e: "open" }));
      this.addEventListener("close", () => latest() && wire.push({ t: Date.now(), e: "close" }));
      this.addEventListener("message", (m) => {
        const f = JSON.parse(m.data);
        const t = Date.now();
        // After the page's own handler (a task later: a microtask would run before it).
        setTimeout(() => wire.push({ t, e: "in", type: f.type, code: f.code || null,
                                     held: held(), seq: f.seq, stream: f.stream,
                                     ref: f.ref || null, at: at() }), 0);
      });
    }
    send(data) {
      const f = JSON.parse(data);
      wire.push({ t: Date.now(), e: "out", type: f.type, id: f.id || null, held: held() });
      super.send(data);
    }
    close(...args) {  // the page gave this socket up: it shows "reconnecting…"
      wire.push({ t: Date.now(), e: "given-up" });
      super.close(...args);
    }
  }
  window.WebSocket = Recorded;
  // What the page tells the person itself: a toast, the connection line.
  document.addEventListener("DOMContentLoaded", () => {
    for (const id of ["toast", "conn"]) {
      const box = document.getElementById(id);
      if (!box) continue;
      new MutationObserver(() => {
        if (!box.hidden) wire.push({ t: Date.now(), e: id, text: box.textContent });
      }).observe(box, { childList: true, characterData: true, subtree: true, attributes: true });
    }
  });
})();
"""


async def open_page(browser: Any, base: str, errors: list[str]) -> Any:
    """A fresh page (its own cookies) at the lobby, consent ticked."""
    page = await (await browser.new_context(viewport=PHONE)).new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.add_init_script(RECORDER)
    await page.goto(base + "/")
    await page.locator("#v-lobby").wait_for(timeout=WAIT_MS)
    await page.locator("#consent").check()
    return page


async def seat_pages(waiter: Any, taker: Any) -> tuple[Any, Any]:
    """`waiter` queues first; `taker`'s process takes the match (and owns the game). Returns
    (interrogator, witness)."""
    for page in (waiter, taker):
        # The engine's "Three-party" (it resumes elsewhere), not the chat game of that title.
        await page.get_by_role("button", name="Three-party").first.click()
        if page is waiter:
            await waiter.locator("#v-waiting").wait_for(timeout=WAIT_MS)
    for page in (waiter, taker):
        await page.locator("#v-game").wait_for(timeout=WAIT_MS)
    roles = {p: await p.locator("#role").text_content() for p in (waiter, taker)}
    judge = next(p for p, r in roles.items() if "interrogator" in str(r))
    return judge, (taker if judge is waiter else waiter)


async def say(page: Any, channel: str, text: str) -> None:
    await page.wait_for_function(
        'c => { const b = document.querySelector(`[data-input="${c}"]`); return b && !b.readOnly }',
        arg=channel,
        timeout=WAIT_MS,
    )
    box = page.locator(f'[data-input="{channel}"]')
    await box.fill(text)  # typed keys are not needed here; Enter sends as the page does
    await box.press("Enter")


# Every message bubble on a page, without the screen readers' speaker label.
BUBBLES = "[...document.querySelectorAll('.log .msg')].map(li => li.childNodes[1].textContent)"


async def shown(page: Any) -> list[str]:
    return list(await page.evaluate(f"() => {BUBBLES}"))


async def until_replies(page: Any, channel: str, n: int) -> None:
    await page.wait_for_function(
        '([c, n]) => document.querySelectorAll(`[data-log="${c}"] .msg.them`).length >= n',
        arg=[channel, n],
        timeout=WAIT_MS,
    )


async def ask(judge: Any, turn: int) -> None:
    for ch in ("A", "B"):
        await say(judge, ch, f"page question {turn} for {ch}")


async def answer(judge: Any, witness: Any, turn: int) -> None:
    """The person answers question `turn`; both witnesses' answers reach the judge."""
    mine = str(await witness.evaluate("() => game.channels[0]"))  # the witness's one chat
    await until_replies(witness, mine, turn)
    await say(witness, mine, f"page answer {turn}")
    for ch in ("A", "B"):
        await until_replies(judge, ch, turn)


async def exchange(judge: Any, witness: Any, turn: int) -> None:
    """The interrogator asks both witnesses; the person answers; both answers arrive."""
    await ask(judge, turn)
    await answer(judge, witness, turn)


async def primed(judge: Any, witness: Any) -> None:
    """Before a fault: question 2 asked and seen by the witness, the AI witness's answer back,
    so that either page can write into the fault (`say_anywhere`)."""
    await ask(judge, 2)
    mine = str(await witness.evaluate("() => game.channels[0]"))
    await until_replies(witness, mine, 2)
    await judge.wait_for_function(
        "() => [...document.querySelectorAll('[data-log]')]"
        ".some(log => log.querySelectorAll('.msg.them').length >= 2)",
        timeout=WAIT_MS,
    )


async def say_anywhere(page: Any, text: str) -> None:
    """Write in the first chat where the page lets its person write now."""
    channel = await page.evaluate(
        '() => game.channels.find(c => !document.querySelector(`[data-input="${c}"]`).readOnly)'
    )
    assert channel, "nowhere to write"
    await say(page, str(channel), text)


async def go_on(judge: Any, witness: Any, sayer: Any) -> None:
    """After `primed` and `say_anywhere(sayer)`: the game goes on through round 3 (the
    witness's answer 2 was what it said into the fault, if it was the one)."""
    if sayer is not witness:
        await answer(judge, witness, 2)
    await exchange(judge, witness, 3)


async def decide(judge: Any, witness: Any) -> None:
    """The interrogator ends the talk and gives a verdict; both pages show the reveal."""
    await judge.locator("#end").click()
    await judge.locator("#end").click()  # two clicks: ending is final
    await judge.locator("#verdict").wait_for(timeout=WAIT_MS)
    await judge.locator('input[name="choice"]').first.check()
    await judge.locator("#verdict button").click()
    for page in (judge, witness):
        await page.locator("#reveal").wait_for(timeout=WAIT_MS)


async def game_of(page: Any) -> str:
    return str(await page.evaluate("() => game.game"))


async def shows_what_is_stored(page: Any, game: StoredGame) -> None:
    """The page shows every stored message its seat was shown, once, and nothing else; and
    how the game ended: an outcome, or the stated reason it was flagged."""
    # The page's seat: the interrogator's, or the one person witness's.
    judge = await page.evaluate("() => game.role") == "interrogator"
    seat = next(s for s in game.seats.values() if (s == "interrogator") == judge)
    mine = [t for t, vis in zip(game.texts, game.visible, strict=True) if seat in vis]
    on_page = await shown(page)
    assert Counter(on_page) == Counter(mine), (seat, on_page, mine)
    await page.locator("#reveal").wait_for(timeout=WAIT_MS)
    if game.status == "finished":
        assert await page.locator("#flagged").is_hidden()
        assert (await page.locator("#outcome").text_content() or "").strip()
    else:
        assert game.flags, game.status
        assert (await page.locator("#flagged").text_content() or "").strip()


async def wire(page: Any) -> list[dict[str, Any]]:
    return list(await page.evaluate("() => window.__wire"))


def longest_unexplained_wait(events: list[dict[str, Any]], until_ms: float) -> float:
    """Seconds, at most, that the person was owed an answer (an input unanswered, on an open
    socket) without a frame arriving or a notice on screen. Pongs are not shown, so they
    explain nothing; a toast does, and so does "reconnecting…", which the page shows from the
    moment it gives a socket up (or loses it) until one opens (how long that takes is the
    takeover's grace, tested apart). Each frame or notice starts the wait again while an input
    is still unanswered; one still open counts until `until_ms`."""
    held = 0  # inputs unanswered
    down = False  # "reconnecting…" on screen: no open socket
    since: float | None = None  # when the current untold wait began
    longest = 0.0

    def told(t: float) -> None:
        nonlocal since, longest
        if since is not None:
            longest = max(longest, t - since)
        since = None

    for ev in sorted(events, key=lambda e: e["t"]):
        t, kind = ev["t"], ev["e"]
        if kind == "in":
            held = ev.get("held", held)
            if ev["type"] != "pong":
                told(t)
        elif kind == "out" and ev.get("id"):
            held = max(held, ev.get("held", held))
        elif kind in ("given-up", "close"):
            told(t)
            down = True
        elif kind == "open":
            down = False
        elif kind == "toast":
            told(t)
        if since is None and held > 0 and not down:
            since = t
    if since is not None:
        longest = max(longest, until_ms - since)
    return longest / 1000
