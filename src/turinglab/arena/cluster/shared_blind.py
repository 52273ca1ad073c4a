"""Blind matchmaking across several arena processes (cluster.py): the design of
matchmaking_wait.py — the same rule (blind_rule.py), match window, witness quota and fallback —
with who waits where and who may be taken as a witness kept in Redis.

The draw is made once per person and round (`MatchDesign.draw_for`, keyed by a secret all the
processes share, the study's seed, the run, the person and their rounds counted so far): a
page that joins again, here or on another process, or is adopted by one, gets the same wait
and witness kind. Nothing of it is stored: it follows from the round book, which the store
rebuilds (shared_rounds.py). A join again starts the wait (and its window) again from the new
join, with that same draw. (Without the secret a participant could work their own witness kind
out from their id.)

Two-party: within an interrogator's match window their process looks at the offer set, lets
the rule choose (only-witness people first, then — for a drawn "person" — the oldest offered)
and holds that witness (CLAIM: `blind-at` becomes `taken:<taker>@<their process>`); with
nobody free a drawn "person" who owes witness rounds offers themselves for the rest of the
window; at its end, an AI. At the interrogator's due time (join + drawn wait, used for nothing
else) CONFIRM seats the held witness and counts the round for both, or — the witness left —
anyone free, else an AI (a fallback). A witness's own process learns they were taken only when
it would act on them (their window's end, the witness wait): WITHDRAW answers `gone` and the
taker seats them. Who may only witness and is taken by nobody within `witness_wait_s` has
their witness rounds excused (`short_of_witnesses: finish`, kept in the book as `x`).
A held witness who leaves is let go (the interrogator meets someone else); an interrogator who
leaves gives their witness back (RELEASE), offered again by their own process.

Three-party: everyone waiting is offered; at an interrogator's due time TAKE takes the oldest
offered person who has not met them (as before), or they wait on, up to `max_wait_s`.

Entries expire with their process: CLAIM and TAKE drop any entry whose process's heartbeat key
(`alive:<process>`, cluster.py) has gone; a process that dies (SIGKILL) leaves its waiting
people to the process their pages reconnect to, which watches each (`watch`) and, once the dead
one's heartbeat has gone, adopts them (ADOPT), their wait counted from when they joined and
their book set back to the store's record (`recount`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from turinglab.arena.cluster.shared_blind_pairs import GONE, Pairs
from turinglab.arena.cluster.shared_rounds import BOOK_TTL_S
from turinglab.arena.core.blind_rule import Plan, decide, two_party_plan

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from turinglab.arena.cluster.shared_rounds import SharedRounds
    from turinglab.arena.core.match_design import Kind, MatchDesign
    from turinglab.arena.core.modes import ArenaMode, ArenaSettings
    from turinglab.arena.core.rounds import RoundBook
    from turinglab.games.clock import Clock

log = logging.getLogger(__name__)

# (mode, pids): seat them, pids[0] interrogating; their rounds are already counted.
Seat = Callable[["ArenaMode", list[str]], Awaitable[None]]
TimedOut = Callable[[str, float], None]
Short = Callable[[str, int], None]  # (pid, witness rounds excused): on to the exit survey
ModeOf = Callable[[str], "ArenaMode | None"]
Draw = Callable[["MatchDesign", str], "tuple[float, Kind]"]


@dataclass
class Waiting:
    """A person waiting on this process, and what the design drew for them."""

    mode: ArenaMode
    since: float
    plan: Plan
    design: MatchDesign
    max_wait_s: float  # then on to the exit survey
    offered: bool = False  # in the mode's offer set (may be taken as a witness)


def draw_key(secret: str, settings: ArenaSettings, run: str, pid: str, book: RoundBook) -> str:
    """Whose draw: the study's seed, the run, the person and the round they are on; `secret`
    (the processes' own) so that nobody can work their draw out from their id."""
    return f"{secret}|{settings.seed}|{run}|{pid}|{book.progress(pid).owed}"


class SharedBlind:
    """One process's side of blind matching over the shared offer sets."""

    def __init__(
        self,
        client: aioredis.Redis,
        books: SharedRounds,
        process: str,
        clock: Clock,
        rng: random.Random,
        seat: Seat,
        timed_out: TimedOut,
        short: Short | None = None,
        *,
        secret: str = "",
    ) -> None:
        self.redis = client
        self.books = books
        self.prefix = books.prefix
        self.process = process
        self.clock = clock
        self.rng = rng
        self._seat = seat
        self._timed_out = timed_out
        self._short = short
        self.secret = secret  # of the draws: the same on every process (cluster.py)
        self.draw: Draw = lambda design, key: design.draw_for(key)
        self.waiting: dict[str, Waiting] = {}
        self.fallbacks = 0  # interrogators drawn for a person who met an AI (no witness free)
        self.short_of_witnesses = 0  # witness-only people whose rounds were excused
        self.pairs = Pairs(client, books, process)
        # People with a socket here who wait on another process, by process: adopted here if
        # it dies (its heartbeat goes), since nobody else would seat them or tell them so.
        self.elsewhere: dict[str, str] = {}

    def _at(self, pid: str) -> str:
        return self.pairs.at(pid)

    def _wait_key(self, pid: str) -> str:
        """The mode `pid` waits for and when they joined (epoch s), for an adopting process."""
        return f"{self.prefix}blind-wait:{pid}"

    async def join(
        self, run: str, pid: str, mode: ArenaMode, settings: ArenaSettings, book: RoundBook
    ) -> bool:
        """`pid` waits here with their draw for this round, offered as a witness where their
        part says so; False (nobody queued) when they have played all their rounds. A join
        again while they wait here for the same mode (a page sending it twice) changes nothing."""
        kept = self.waiting.get(pid)
        same = kept is not None and kept.mode.name == mode.name
        if same and await self.redis.get(self._at(pid)) == self.process:
            return True  # still theirs (not taken meanwhile by another process)
        await self.leave(pid)
        self.elsewhere.pop(pid, None)
        await self._load(run, pid, book)
        if book.done(pid):
            return False
        waiting = self._draw(run, pid, mode, settings, book, self.clock.now())
        await self._register(pid, waiting, joining=True)
        return True

    async def _load(self, run: str, pid: str, book: RoundBook) -> None:
        """Their counts from the shared book, the witness rounds excused (`x`) included."""
        await self.books.load(run, pid, book)
        excused = await self.redis.hget(self.books.book_key(run, pid), "x")
        book.progress(pid).excused = int(excused or 0)

    def _draw(
        self,
        run: str,
        pid: str,
        mode: ArenaMode,
        settings: ArenaSettings,
        book: RoundBook,
        since: float,
    ) -> Waiting:
        """`pid` waits here from `since`: their draw for this round (the same on every process)."""
        design = settings.design
        assert design is not None, "blind matching needs a design"
        wait_s, wants = self.draw(design, draw_key(self.secret, settings, run, pid, book))
        if len(mode.witnesses) == 1:
            may = book.may(pid, "interrogator")
            plan = two_party_plan(design, since, wait_s, wants, may)
        else:
            plan = Plan(since + wait_s, "person")
        waiting = Waiting(mode, since, plan, design, settings.max_wait_s)
        self.waiting[pid] = waiting
        return waiting

    async def watch(
        self, run: str, pid: str, settings: ArenaSettings, book: RoundBook, mode_of: ModeOf
    ) -> bool:
        """`pid`, with no game and not waiting here, (re)connected here: whether they wait on
        some process — another, alive (watched until it dies), or this one, adopting them from
        a dead one (their wait counted from when they joined there, so `max_wait_s` holds) or
        given back to it by an interrogator who left."""
        if pid in self.waiting:
            return True
        found, value = await self.pairs.script(
            "ADOPT",
            [self._at(pid), self._wait_key(pid), f"{self.prefix}player:{pid}"],
            [self.process, f"{self.prefix}alive:", self.books.met_ttl_s],
        )
        if found == "elsewhere":
            self.elsewhere[pid] = str(value)
            return True
        self.elsewhere.pop(pid, None)
        if found not in ("adopted", "here"):
            return False  # seated or let go by that process: its frames tell them
        name, _, joined = str(value).partition("|")
        mode = mode_of(name)
        await self._load(run, pid, book)
        if found == "adopted":
            await self.books.recount(run, pid, book)  # a round the dead taker counted, if any
        if mode is None or book.done(pid):
            await self.redis.delete(self._at(pid))
            return False
        waited = max(0.0, time.time() - float(joined or time.time()))
        waiting = self._draw(run, pid, mode, settings, book, self.clock.now() - waited)
        log.info("blind matching: %s %s (waited %.1f s)", pid, found, waited)
        return await self._register(pid, waiting, joining=False)

    async def watch_elsewhere(
        self, run: str, settings: ArenaSettings, book: RoundBook, mode_of: ModeOf
    ) -> None:
        """Adopt the people watched here whose process has died (see `watch`)."""
        for pid in list(self.elsewhere):
            await self.watch(run, pid, settings, book, mode_of)

    async def register_again(
        self, run: str, book: RoundBook, plays: Callable[[str], Awaitable[bool]]
    ) -> None:
        """Redis restarted empty (this process's heartbeat had gone): everyone still waiting
        here is noted and offered again, their books rebuilt from the store. Without this,
        their `blind-at` keys gone, each would be taken for taken by another process and left
        waiting for nobody. Not those another process took and seated before (`plays`), or
        they could be seated twice."""
        for pid, waiting in list(self.waiting.items()):
            if await plays(pid):
                self.waiting.pop(pid, None)
                continue
            await self.books.load(run, pid, book)
            if not await self._register(pid, waiting, joining=False, lost=True):
                self._taken_away(pid)  # another process set them meanwhile: watched from here

    async def _register(
        self, pid: str, waiting: Waiting, *, joining: bool, lost: bool = False
    ) -> bool:
        """Note that `pid` waits here, offered as a witness when their part says so; `lost`:
        their keys were lost with Redis (set again unless another process has set them)."""
        offer = waiting.plan.kind == "witness" or len(waiting.mode.witnesses) > 1
        key = self.pairs.offer_set(waiting.mode)
        joined = f"{waiting.mode.name}|{time.time() - (self.clock.now() - waiting.since):.3f}"
        here = await self.pairs.script(
            "JOIN",
            [self._at(pid), key, key + ":n", self._wait_key(pid)],
            [
                self.process,
                self.pairs.entry(pid),
                int(offer),
                self.books.met_ttl_s,
                1 if joining else 2 if lost else 0,
                joined,
            ],
        )
        waiting.offered = offer and bool(here)
        if not here:
            self.waiting.pop(pid, None)
        return bool(here)

    async def leave(self, pid: str) -> bool:
        """Stop waiting (a witness held by an interrogator is let go, an interrogator's held
        witness given back); False when another process took them as a witness meanwhile."""
        waiting = self.waiting.pop(pid, None)
        if waiting is not None and waiting.plan.witness is not None:
            await self.pairs.release(waiting.plan.witness, waiting.mode)
        if waiting is None:
            await self.pairs.script("LET_GO", [self._at(pid)], [self.process])
        freed = waiting is not None and await self._withdraw(pid, waiting, left=True)
        self.elsewhere.pop(pid, None)  # they left: not adopted back if a taker dies
        return freed

    async def tick(self, run: str, book: RoundBook) -> None:
        """Decide, seat everyone due now, excuse or send on those who waited too long."""
        now = self.clock.now()
        await self._learn_taken()
        for pid, waiting in list(self.waiting.items()):
            if self.waiting.get(pid) is not waiting:  # seated earlier in this pass
                continue
            if len(waiting.mode.witnesses) == 1:
                await self._two_party(run, pid, waiting, book, now)
            else:
                await self._three_party(run, pid, waiting, book, now)

    async def _learn_taken(self) -> None:
        """Those offered here whom another process took (or who joined again elsewhere): no
        longer waiting here, watched until seated. Learnt at once, one read a tick, so that a
        witness back from their game does not find a stale wait here."""
        offered = [pid for pid, waiting in self.waiting.items() if waiting.offered]
        if not offered:
            return
        found = await self.redis.mget([self._at(pid) for pid in offered])
        for pid, at in zip(offered, found, strict=True):
            if at is not None and at != self.process:
                self._taken_away(pid)

    async def _two_party(
        self, run: str, pid: str, waiting: Waiting, book: RoundBook, now: float
    ) -> None:
        """The rule of blind_rule.py for one person (as BlindMatcher.tick, in one process)."""
        plan = waiting.plan
        if plan.witness is None and self._only_witness(pid, book):
            if not waiting.offered:
                plan.kind = "witness"
                await self._register(pid, waiting, joining=False)
            wait_s = min(waiting.design.witness_wait_s, waiting.max_wait_s)
            # Nobody took them in time (and nobody takes them now): excused.
            if now - waiting.since >= wait_s and await self._withdraw(pid, waiting, release=True):
                await self._excuse(run, pid, book)
            return
        if not plan.decided:
            found = await self._claim(run, pid, waiting, book, anyone=plan.wants == "person")
            if found == GONE:
                return
            step = decide(plan, now, found, book.may(pid, "witness"))
            if step == "offer" and not waiting.offered:
                await self._register(pid, waiting, joining=False)
            elif step == "ai":
                if waiting.offered and not await self._withdraw(pid, waiting):
                    return  # taken as a witness at the last moment: the taker seats them
                if plan.wants == "person":
                    await self._fell_back(run)
        if plan.decided and now >= plan.due:
            await self._start(run, pid, waiting, book)

    def _only_witness(self, pid: str, book: RoundBook) -> bool:
        return not book.may(pid, "interrogator") and book.may(pid, "witness")

    async def _claim(
        self, run: str, pid: str, waiting: Waiting, book: RoundBook, *, anyone: bool
    ) -> str | None:
        """Hold the witness the rule chooses (None: nobody free; GONE: `pid` was taken as a
        witness, or waits elsewhere now, and is watched from here)."""
        found = await self.pairs.claim(run, pid, waiting.mode, book, anyone=anyone)
        if found == GONE:
            self._taken_away(pid)
        elif found is not None:
            waiting.offered = False  # out of the offer set with them
        return found

    async def _start(self, run: str, pid: str, waiting: Waiting, book: RoundBook) -> None:
        """Their due time: with the witness they hold (or, if they left, anyone free), else an
        AI."""
        plan = waiting.plan
        for _ in range(2):  # the held witness; if they left, one more look (anyone free)
            if plan.witness is None:
                break
            outcome = await self.pairs.confirm(run, pid, plan.witness, book)
            if outcome == "paired":
                self.waiting.pop(pid, None)
                self.waiting.pop(plan.witness, None)  # when they waited here
                await self._seat(waiting.mode, [pid, plan.witness])
                await self.pairs.seated(pid, plan.witness)
                return
            if outcome == "gone":  # joined again elsewhere: their witness is given back
                await self.pairs.release(plan.witness, waiting.mode)
                self._taken_away(pid)
                return
            plan.witness = None
            found = await self._claim(run, pid, waiting, book, anyone=True)
            if found == GONE:
                return
            plan.witness = found
        if plan.witness is not None:  # held, then left too: given back, not kept
            await self.pairs.release(plan.witness, waiting.mode)
            plan.witness = None
        if not await self._withdraw(pid, waiting, release=True):
            return
        if plan.kind == "person":  # drawn for a person, their witness left: an AI
            await self._fell_back(run)
        self.waiting.pop(pid, None)
        await self.books.count_alone(run, pid, book)
        await self._seat(waiting.mode, [pid])

    async def _excuse(self, run: str, pid: str, book: RoundBook) -> None:
        """No interrogator took them in time for their last witness rounds: excused (the
        design's shortfall, not theirs), kept in the shared book, their study complete."""
        self.waiting.pop(pid, None)
        excused = book.excuse(pid)
        self.short_of_witnesses += 1
        await self.redis.hset(self.books.book_key(run, pid), "x", book.progress(pid).excused)
        if self._short is not None:
            self._short(pid, excused)

    async def _three_party(
        self, run: str, pid: str, waiting: Waiting, book: RoundBook, now: float
    ) -> None:
        """At their due time a person interrogates anyone offered, or waits on (still offered)
        until `max_wait_s`."""
        if now >= waiting.plan.due and book.may(pid, "interrogator"):
            found = await self.pairs.take(run, pid, waiting.mode, book, offered=waiting.offered)
            outcome, partner = found
            if outcome == "gone":
                self._taken_away(pid)
                return
            if partner is not None:
                self.waiting.pop(pid, None)
                self.waiting.pop(partner, None)  # when they waited here
                await self._seat(waiting.mode, [pid, partner])
                await self.pairs.seated(pid, partner)
                return
        if now - waiting.since >= waiting.max_wait_s and await self._withdraw(
            pid, waiting, release=True
        ):
            self.waiting.pop(pid, None)
            self._timed_out(pid, now - waiting.since)

    async def _withdraw(
        self, pid: str, waiting: Waiting, *, release: bool = False, left: bool = False
    ) -> bool:
        """Take `pid` out of the offer set (and, with `release`, let go of them; `left`: also
        when held as a witness); False, and forgotten here, when they were taken meanwhile or
        wait on another process now."""
        waiting.offered = False
        keys = [self._at(pid), self.pairs.offer_set(waiting.mode)]
        entry = self.pairs.entry(pid)
        args: list[str | int] = [self.process, entry, int(release or left), int(left)]
        outcome = await self.pairs.script("WITHDRAW", keys, args)
        if outcome in ("free", "left"):
            return True
        self._taken_away(pid)
        return False

    def _taken_away(self, pid: str) -> None:
        """Another process took `pid` (or they joined again on one): it seats them. Watched from
        here until it has, as it may die first (`watch_elsewhere`)."""
        self.waiting.pop(pid, None)
        self.elsewhere[pid] = "taken"

    async def _fell_back(self, run: str) -> None:
        self.fallbacks += 1
        try:  # the study's count, over every process (the admin page shows it)
            pipe = self.redis.pipeline(transaction=False)
            pipe.incr(self._fallbacks_key(run))
            pipe.expire(self._fallbacks_key(run), BOOK_TTL_S)
            await pipe.execute()
        except RedisError as err:  # only a count: the person is seated already
            log.warning("blind matching: fallback not counted in Redis (%s)", err)

    def _fallbacks_key(self, run: str) -> str:
        return f"{self.prefix}fallbacks:{run}"

    async def study_fallbacks(self, run: str) -> int:
        """Interrogators drawn for a person who met an AI, on every process of the study
        (since Redis last started empty)."""
        return int(await self.redis.get(self._fallbacks_key(run)) or 0)
