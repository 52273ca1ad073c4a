"""The arena benchmark's simulated people: one client process plays its share of them.

Each person arrives at a time fixed in advance (an open-loop schedule: nobody waits for the
server to be ready for them), gives consent, opens the page's socket and plays study rounds
in the three-party game until the arena says their rounds are done, in whichever role it gives
them, as a person would:

* before writing they read what they are answering (~1 s + 0.03 s per character) and think
  (Γ-distributed, ~1.5 s), about 2–5 s in all, as the issue measured people;
* they type at a human pace (games/typing_timeline.Typist: bursts of keys ~0.26 s apart with
  pauses, ~46 words a minute), the page sending a typing frame on a keystroke at most every
  2 s; what they send is a real chat turn (chat_texts.py) cut at 300 characters;
* the interrogator writes to whichever witness has answered, until the clock ends the talk,
  then gives a verdict after 3–12 s; between games people read the reveal for 3–10 s;
* in each game a person drops their connection with probability `reconnect_p` (back 1–5 s
  later, resuming from the last frame seen) and leaves for good with `abandon_p`; each time
  their page breaks mid-game (its server lost, not their own drop, or a message of theirs
  unanswered for 5 s) they give up and close it with `give_up_p` (0 unless asked: the
  simulator's hunts turn it on).

Every action has its scheduled time; latencies are measured from it, so a client that falls
behind shows as latency (and as `max_late_s`), never as a quieter load. The people run in their
own processes (arena_bench.py starts them), never in a server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from turinglab.arena.core.abandon import TOLD_LEFT
from turinglab.bench.arena_link import Link
from turinglab.bench.arena_tally import Tally, parse_tag, tag
from turinglab.bench.chat_texts import draw_turn, tagged
from turinglab.games.typing_timeline import Typist, throttled
from turinglab.heap import settle_heap

MODE = "three-party"
LONG_WAIT_S = 15.0  # a person who waited longer than this for a frame has their link described
STUCK_S = 5.0  # a message of theirs unanswered this long: the page looks broken to them
END_GRACE_S = 240.0  # after the deadline: verdict timeout (120 s) and a takeover, with room


@dataclass(frozen=True)
class Script:
    rounds: int  # the server's; people stop when it says their rounds are done
    reconnect_p: float
    abandon_p: float
    seed: int
    max_wait_s: float  # the server's lobby limit (then "no-match")
    pace: float = 1.0  # scales reading, thinking and typing times (1: a person's; tests: less)
    # Words no frame of a game may hold before its reveal (Tally.look; sim: the AI's names)
    hidden: tuple[str, ...] = ()
    end_early_p: float = 0.0  # per game: the interrogator ends the talk before its time is up
    give_up_p: float = 0.0  # per break of their page mid-game: the person closes it for good


async def _at(t: float, tally: Tally) -> None:
    """Sleep until epoch time `t`; note how late the loop woke."""
    await asyncio.sleep(max(0.0, t - time.time()))
    tally.max_late_s = max(tally.max_late_s, time.time() - t)


def _reading_s(n_chars: int, rng: random.Random) -> float:
    return 1.0 + 0.03 * n_chars + rng.gammavariate(2.5, 0.6)


class Game:
    """One person's seat in one game, from the snapshot that started it to its end."""

    def __init__(
        self,
        link: Link,
        snap: dict[str, Any],
        who: str,
        tally: Tally,
        rng: random.Random,
        pace: float,
        hidden: tuple[str, ...] = (),
    ) -> None:
        self.link, self.who, self.tally, self.rng, self.pace = link, who, tally, rng, pace
        self.hidden = hidden
        self.id = snap["game"]
        self.role = snap["role"]
        self.choices = snap["judge_choices"]
        self.started = time.time()
        self.k = 0  # messages written
        self.n_seen = 0  # messages in this person's transcript (the server's `after`)
        self.mine: dict[str, list[str]] = {}  # channel -> my acknowledged message ids
        self.seen_mids: set[str] = set()
        self.changed = asyncio.Event()
        self.over = asyncio.Event()
        self.outcome = ""
        self._look(snap)
        self._apply(snap)

    # ---- the frames -------------------------------------------------------------------------

    def _look(self, f: dict[str, Any]) -> None:
        if self.hidden and not self.over.is_set():  # before the reveal
            self.tally.look(self.who, self.id, f, self.hidden)

    def _apply(self, snap: dict[str, Any]) -> None:
        self.channels: list[str] = snap["channels"]
        self.phase = snap["phase"]
        self.deadline = snap["deadline"] - snap["now"] + time.time() if snap["deadline"] else None
        if self.phase == "playing" or self.id not in self.tally.talk_ends:
            self.tally.talk_ends[self.id] = self.deadline or 0.0
        self.last: dict[str, str] = {}
        self.unread: dict[str, str] = {}
        for m in snap["messages"]:
            self._message(m, from_snapshot=True)
        if snap.get("reveal"):
            self._ended(snap["reveal"])

    def _message(self, m: dict[str, Any], *, from_snapshot: bool = False) -> None:
        self.n_seen = max(self.n_seen, m["n"] + 1)
        if m["sender"] == "game":
            return
        self.last[m["channel"]] = m["sender"]
        now = time.time()
        found = parse_tag(m["text"])
        if m["sender"] == "them":
            self.unread[m["channel"]] = m["text"]
            if found is not None:  # from a person: a relay
                mid, at = found
                if mid not in self.seen_mids or not from_snapshot:
                    self.tally.received[mid] += 1
                    if mid not in self.seen_mids:
                        self.tally.relay_ms.append((at, (now - at) * 1000))
                self.seen_mids.add(mid)
        elif found is not None and found[0] not in self.seen_mids:  # mine, shown as sent
            mid, at = found
            self.seen_mids.add(mid)
            self.tally.acked.append(mid)
            self.tally.ack_ms.append((at, (now - at) * 1000))
            self.mine.setdefault(m["channel"], []).append(mid)

    def _ended(self, reveal: dict[str, Any] | None) -> None:
        if self.over.is_set():
            return
        if reveal is not None and not reveal.get("flagged"):  # both stayed: all must arrive
            people = {s["channel"] for s in reveal["sides"] if s["kind"] == "human"}
            for channel, mids in self.mine.items():  # only messages to the person are relays
                if self.role == "witness" or channel in people:
                    self.tally.expected += [(mid, self.id) for mid in mids]
        if reveal is None:
            self.outcome = self.outcome or "ended without a reveal"
        elif reveal.get("flagged"):
            self.outcome = f"flagged: {reveal['flagged'][:80]}"
            if reveal["flagged"] == TOLD_LEFT:  # a page still here was counted gone
                self._odd(reveal, "told they left")
        else:
            self.outcome = "finished"
        self.tally.told.setdefault(self.id, time.time())
        self.over.set()
        self.changed.set()

    async def _pump(self) -> None:
        while True:
            f = await self.link.frames.get()
            self._look(f)
            kind = f["type"]
            if kind == "message":
                self._message(f)
            elif kind == "typing":
                self.tally.counts["typing frames received"] += 1
            elif kind == "phase":
                if self.phase == "playing" and f["phase"] != "playing":
                    # The talk ended by now: maybe before its deadline (someone pressed "end");
                    # a page told late (a resume after an outage) keeps the deadline.
                    ends = self.tally.talk_ends
                    ends[self.id] = min(ends.get(self.id, time.time()), time.time())
                self.phase = f["phase"]
            elif kind == "reveal":
                self._ended(f)
            elif kind == "game":
                if f["game"] != self.id:
                    self.tally.counts["snapshots of another game"] += 1
                    self._odd(f, f["game"])
                self._apply(f)
            elif kind == "error":
                self.tally.errors[f["code"]] += 1
                if f["code"] == "moving":
                    self.tally.moved[self.id] = time.time()
                elif f["code"] == "no-session":
                    self.outcome = "session lost"
                    self._ended(None)
            elif kind == "status":  # out of the game: it ended without telling this page
                self.outcome = f"status {f['state']} mid-game"
                self._odd(f, f["state"])
                self._ended(None)
            self.changed.set()

    def _odd(self, f: dict[str, Any], what: str) -> None:
        """Keep a frame this page did not expect mid-game, with where it stood, for the trace."""
        self.tally.odd_frames.append({
            "person": self.link.cookie.partition(".")[0], "tag": self.who, "game": self.id,
            "role": self.role, "phase": self.phase,
            "frame": f["type"], "what": what, "at": time.time(), "sockets": self.link.sockets,
            "server": self.link.bases[0],
        })  # fmt: skip

    async def _changed(self) -> None:
        self.changed.clear()
        await self.changed.wait()

    # ---- what the person does -----------------------------------------------------------------

    async def play(
        self,
        reconnect_at: float | None,
        leave_at: float | None,
        end_at: float | None = None,
        give_up: tuple[random.Random, float] | None = None,
    ) -> str:
        pump = asyncio.create_task(self._pump())
        fates = []
        if reconnect_at is not None:
            fates.append(asyncio.create_task(self._drop(self.started + reconnect_at)))
        if end_at is not None and self.role == "interrogator":
            fates.append(asyncio.create_task(self._end_early(self.started + end_at)))
        actor = asyncio.create_task(self._act())
        try:
            cap = (self.deadline or time.time() + 600) + END_GRACE_S - time.time()
            if leave_at is not None:
                left = await self._leave(self.started + leave_at)
                if left:
                    return "left"
            if give_up is not None and await self._give_up(*give_up, max(1.0, cap)):
                return "left"
            await asyncio.wait_for(self.over.wait(), max(1.0, cap))
        except TimeoutError:
            self.outcome = "no end within the deadline + 240 s"
        finally:
            for task in (pump, actor, *fates):
                task.cancel()
            if self.role == "interrogator":
                self.tally.games.append((self.started, time.time()))
        return self.outcome

    async def _leave(self, at: float) -> bool:
        """Abandon: at `at`, if the talk is still on, close the page for good."""
        while not self.over.is_set() and time.time() < at:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.over.wait(), at - time.time())
        if self.over.is_set() or self.phase != "playing":
            return False
        self.tally.left[self.id] = time.time()
        self.tally.leavers[self.id] += 1
        self.tally.told.pop(self.id, None)  # the other person's notice, not this one's
        self.outcome = "left"
        await self.link.close()
        return True

    async def _give_up(self, draws: random.Random, chance: float, within_s: float) -> bool:
        """Each time the page breaks while the talk is on — its server lost, or a message of
        theirs unanswered for STUCK_S — close it for good with the draw's chance (some people
        do not wait for a broken page). Only asked for when the chance is not 0: the task and
        its wake-ups change a simulated schedule."""
        end, stuck_seen = time.time() + within_s, set[str]()
        while not self.over.is_set() and time.time() < end:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.link.broke.wait(), 1.0)
            now = time.time()
            stuck = {k for k, i in self.link.unanswered.items() if now - i.due > STUCK_S}
            broke, new = self.link.broke.is_set(), stuck - stuck_seen
            self.link.broke.clear()
            stuck_seen |= stuck
            playing = self.phase == "playing" and not self.over.is_set()
            if (broke or new) and playing and draws.random() < chance:
                self.tally.counts["gave up on a broken page"] += 1
                return await self._leave(now)
        return False

    async def _end_early(self, at: float) -> None:
        """At `at`, if the talk is still on, press "end" (then the verdict, as at time up)."""
        await _at(at, self.tally)
        if not self.over.is_set() and self.phase == "playing":
            self.tally.counts["talks ended early"] += 1
            await self.link.send_input({"type": "end"}, at)

    async def _drop(self, at: float) -> None:
        await _at(at, self.tally)
        if not self.over.is_set():
            await self.link.bounce(self.rng.uniform(1.0, 5.0) * self.pace)

    async def _act(self) -> None:
        while self.phase == "playing" and not self.over.is_set():
            channel = self._my_turn()
            if channel is None:
                await self._changed()
                continue
            await self._write(channel)
        if self.role == "interrogator" and not self.over.is_set():
            while self.phase == "playing":
                await self._changed()
            if self.phase == "verdict":
                due = time.time() + self.rng.uniform(3.0, 12.0) * self.pace
                await _at(due, self.tally)
                verdict = {
                    "type": "verdict",
                    "choice": self.rng.choice(self.choices),
                    "confidence": self.rng.randint(0, 100),
                    "reason": draw_turn(self.rng)[:200],
                }
                await self.link.send_input(verdict, due)

    def _my_turn(self) -> str | None:
        """A channel where this person may write now (a reply to read first, if any)."""
        if self.role == "interrogator":
            open_ = [c for c in self.channels if self.last.get(c) != "you"]
            answered = [c for c in open_ if c in self.unread]
            return self.rng.choice(answered or open_) if open_ else None
        return next((c for c in self.channels if self.last.get(c) == "them"), None)

    async def _write(self, channel: str) -> None:
        """Read, think, type (typing frames as the page sends them), send; abandoned if the
        talk ends first."""
        now = time.time()
        mid = f"{self.who}m{self.k}"
        self.k += 1
        turn = draw_turn(self.rng)
        keys = Typist().keystrokes(
            self.rng, _reading_s(len(self.unread.pop(channel, "")), self.rng)
        )
        n_keys = max(len(turn), len(mid) + 15)  # as tagged() makes the text
        times = [now + next(keys) * self.pace for _ in range(n_keys)]
        send_at = times[-1]
        text = tagged(tag(mid, send_at), turn)
        for at in throttled(times[: len(text)]):
            await _at(at, self.tally)
            if self.phase != "playing" or self.over.is_set():
                return
            await self.link.send({"type": "typing", "channel": channel})
            self.tally.counts["typing frames sent"] += 1
        await _at(send_at, self.tally)
        if self.phase != "playing" or self.over.is_set():
            return
        self.last[channel] = "you"
        frame = {"type": "message", "channel": channel, "text": text, "after": self.n_seen}
        await self.link.send_input(frame, send_at)


async def _consent(http: aiohttp.ClientSession, bases: list[str]) -> tuple[str, list[str]]:
    """The consent form, posted to the first server that takes the connection: one that has
    died is passed over, as the load balancer in front of them would (sim seed 98). Returns
    the session cookie and the servers, the one that took it first."""
    for k, base in enumerate(bases):
        try:
            async with http.post(base + "/consent", json={"consent": True}) as r:
                r.raise_for_status()
                return r.cookies["turinglab_session"].value, [*bases[k:], *bases[:k]]
        except aiohttp.ClientConnectionError:
            if k == len(bases) - 1:
                raise
    raise ValueError("no server to consent on")


class NoAnswer(Exception):
    """The arena sent neither a game nor a status in time (pongs do not count)."""


async def _next(link: Link, timeout: float, past: str = "") -> dict[str, Any]:
    """The next status or snapshot of a new game (not `past`, the one just played) within
    `timeout` s; other frames (pongs, the end of the last game) are passed over."""
    until = time.monotonic() + timeout
    while True:
        try:
            f = await asyncio.wait_for(link.frames.get(), until - time.monotonic())
        except TimeoutError:
            raise NoAnswer from None
        if f["type"] == "status" or (f["type"] == "game" and f["game"] != past):
            return f
        if f["type"] == "error" and f.get("code") == "retry":
            return f  # "not taken, please try again" (Redis restarting): the join, maybe
        if past and f["type"] == "resumed" and f.get("game") == past:
            return f  # the last game shown again after a reconnect: the join may be lost


async def person(
    http: aiohttp.ClientSession,
    bases: list[str],
    n: int,
    arrive: float,
    script: Script,
    tally: Tally,
) -> None:
    """Person `n`: arrives at `arrive` (epoch s) and plays until their rounds are done."""
    rng = random.Random(script.seed * 100_003 + n)
    await _at(arrive, tally)
    cookie, bases = await _consent(http, bases)
    link = Link(http, bases, cookie, rng)
    who = link.cookie.partition(".")[0]  # the participant id, to look them up in the store
    await link.open()
    try:
        first = tally.book(who, await _next(link, 60))
        tally.lobby_ms.append((time.time() - arrive) * 1000)
        due = time.time() + rng.uniform(2.0, 10.0) * script.pace  # reads the instructions
        past = ""
        for r in range(script.rounds + 4):  # rounds given back (abandoned games) are replayed
            if first.get("state") == "rounds-done":
                return
            await _at(due, tally)
            if r:
                await link.send({"type": "leave"})
            join = {"type": "join", "mode": MODE, "consent": True}
            await link.send(join)
            sent, seen, socket = time.time(), [], link.sockets
            try:
                frame = tally.book(who, await _next(link, 60, past))
                while frame["type"] in ("resumed", "error") or (
                    frame["type"] == "status" and frame["state"] in ("idle", "waiting")
                ):
                    seen.append(frame.get("state", frame["type"]))
                    if frame["type"] == "error":
                        # The page's toast on the lobby it still shows: "that was not taken,
                        # please try again". The person reads it and presses the mode again.
                        tally.counts["joins re-sent"] += 1
                        await asyncio.sleep(rng.uniform(1.0, 3.0) * script.pace)
                        await link.send(join)
                    elif frame["type"] == "resumed" and link.sockets != socket:
                        # The last game's end shown again after a reconnect: the leave and
                        # the join went with the old socket (its server died). The person
                        # sees the reveal again and presses "play again" again.
                        socket = link.sockets
                        tally.counts["joins re-sent"] += 1
                        await link.send({"type": "leave"})
                        await link.send(join)
                    elif frame.get("state") == "idle" and link.sockets != socket:
                        # The lobby after a reconnect: the join was lost with the old socket
                        # (its server died); the page sends it again (study.js).
                        socket = link.sockets
                        tally.counts["joins re-sent"] += 1
                        await link.send(join)
                    frame = tally.book(who, await _next(link, script.max_wait_s + 60, past))
            except NoAnswer:  # left waiting: the lobby limit passed and nobody said so
                tally.outcomes["no game or status within the lobby limit + 60 s"] += 1
                tally.stuck.append((sent, r, seen, who))
                return
            if frame["type"] == "status":
                if frame["state"] != "rounds-done":
                    tally.outcomes[f"status {frame['state']}"] += 1
                return
            tally.joins.append((frame["game"], r, due, time.time()))
            fate = rng.random()
            game = Game(link, frame, f"p{n}r{r}", tally, rng, script.pace, script.hidden)
            span = max(1.0, (game.deadline or time.time() + 60) - time.time())
            leave_at = rng.uniform(0.05, 0.95) * span if fate < script.abandon_p else None
            back = script.abandon_p <= fate < script.abandon_p + script.reconnect_p
            # Drawn apart, so that people who never end early keep their schedules.
            ends = random.Random(f"{script.seed}:{n}:{r}:end")
            end_at = ends.uniform(0.1, 0.8) * span if ends.random() < script.end_early_p else None
            give_up = None
            if script.give_up_p:
                give_up = (random.Random(f"{script.seed}:{n}:{r}:give-up"), script.give_up_p)
            outcome = await game.play(
                rng.uniform(0.05, 0.95) * span if back else None, leave_at, end_at, give_up
            )
            tally.outcomes[outcome] += 1
            past = game.id
            if outcome == "left":
                return
            due = time.time() + rng.uniform(3.0, 10.0) * script.pace  # the reveal, "again"
    finally:
        link.still_owed()
        tally.owed(link.longest_owed_s, link.longest_owed_what, link.longest_owed_since, who)
        if link.longest_owed_s > LONG_WAIT_S:  # what their page was doing, for the trace
            tally.long_waits.append({"person": who, **link.state(time.time())})
        took, what, since = link.longest_input
        tally.took(took, what, since, who)
        tally.counts["reconnects"] += link.reconnects
        tally.counts["inputs re-sent"] += link.resent
        tally.counts["frames dropped as seen"] += link.duplicate_frames
        tally.counts["gaps resumed"] += link.gaps
        tally.counts["new owners' snapshots taken"] += link.moved
        tally.counts["page faults (benchmark bugs)"] += link.page_errors
        await link.close()


async def play(
    people: list[tuple[int, float]], bases: list[str], script: Script, start_at: float
) -> Tally:
    """Play every (person number, arrival offset) given; offsets count from `start_at` (epoch
    seconds), the same moment in every client process. Person n's first server is n % P."""
    settle_heap()  # as the server does: a collector's pause here would read as its latency
    tally = Tally()
    own0 = time.process_time()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, cookie_jar=aiohttp.DummyCookieJar()
    ) as http:
        p = len(bases)
        results = await asyncio.gather(
            *(
                person(http, bases[n % p :] + bases[: n % p], n, start_at + at, script, tally)
                for n, at in people
            ),
            return_exceptions=True,
        )
    tally.failures.update(type(r).__name__ for r in results if isinstance(r, BaseException))
    tally.cpu_s = time.process_time() - own0
    return tally
