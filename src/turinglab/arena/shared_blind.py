"""Blind matchmaking across several arena processes (cluster.py): the design of
matchmaking_wait.py, with the list of people who may be taken as witnesses kept in Redis.

Each process draws a person's wait and part as they join there, exactly as one process does
(`MatchDesign`: the witness kind is decided before any matching, the wait comes from one
distribution). What is shared, in Redis and changed only by Lua scripts (atomic there):

* `blind-at:<pid>`: the process a person waits on, the only one that may seat them: set as
  they join, `taken:<process>` from TAKE until that process has seated them, then `seated`;
  deleted when they are seated with AI witnesses or let go. A person who joins again on
  another process (a reconnect elsewhere) is waited for there only; the first process's plan
  lapses. `blind-wait:<pid>` keeps the mode and when they joined, for ADOPT;
* `blind:<mode>`, a sorted set of entries "pid|process", oldest first: who may be taken as a
  witness — in one-witness modes those drawn to witness, in three-party modes everyone waiting.

At an interrogator's due time TAKE takes the oldest offered person who has not met them and
whose quota allows witnessing, counts the round for both in the shared round book
(shared_rounds.py), records that they met and marks both `blind-at` keys taken; it answers `gone`
when the caller is no longer waiting here (taken as a witness meanwhile: the taker seats them).
A witness nobody took by their own due time withdraws (WITHDRAW): still theirs, they interrogate
instead, as in one process. An AI game or a time-out first lets go of the person the same way,
so nobody is seated twice.

Entries expire with their process: TAKE drops any entry whose process's heartbeat key
(`alive:<process>`, cluster.py) has gone, so nobody is matched with someone whose socket died
with their process; an entry dropped while its process was only silent is not lost, as its
`blind-at` key still names that process. Quotas are read from the shared book as a person joins;
TAKE counts a person-to-person round, `count_alone` one with an AI witness.

A process that dies (SIGKILL) leaves its waiting people, and any it took but had not seated,
with nobody to seat them or time them out. Their pages reconnect to another process without
joining again; that process watches each (`watch`: told they wait) and once the dead one's
heartbeat has gone ADOPT moves them to it, their wait counted from when they first joined.
A person waiting here whom another process took as a witness is watched the same way (their
socket stays here: nothing would make them reconnect), and adopted back if the taker dies
before seating them. An adopted person's book is set back to the store's record (`recount`):
the taker counted a round for them that no game holds.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from turinglab.arena.matchmaking_wait import MatchDesign, Plan
from turinglab.arena.shared_rounds import BOOK_LUA, BOOK_TTL_S

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from turinglab.arena.modes import ArenaMode, ArenaSettings
    from turinglab.arena.rounds import RoundBook
    from turinglab.arena.shared_rounds import SharedRounds
    from turinglab.games.clock import Clock

log = logging.getLogger(__name__)

# KEYS[1] the person's `blind-at` key, KEYS[2] the mode's offer set, KEYS[3] the offer counter
# (oldest first), KEYS[4] their `blind-wait` key. ARGV[1] this process, ARGV[2] the entry,
# ARGV[3] "1" to offer them, ARGV[4] the keys' TTL, ARGV[5] "1" as they join, "2" when Redis
# lost their keys (restarted empty: set again unless another process has set them since),
# else they must still be waiting here, ARGV[6] "<mode>|<epoch s joined>" for `blind-wait`.
# 0: they are not (taken, or waiting on another process).
JOIN = """
if ARGV[5] == '1' then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
  redis.call('SET', KEYS[4], ARGV[6], 'EX', ARGV[4])
elseif ARGV[5] == '2' then
  redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[4])
  redis.call('SET', KEYS[4], ARGV[6], 'NX', 'EX', ARGV[4])
end
if ARGV[5] ~= '1' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[2])
end
return 1
"""

# KEYS[1] the person's `blind-at` key, KEYS[2] the mode's offer set. ARGV[1] this process,
# ARGV[2] the entry, ARGV[3] "1" when this process lets go of them (seated with an AI, timed
# out, gone). 'free': withdrawn, still waiting here; 'gone': taken by a process, or waiting on
# another. An entry dropped as a ghost (its process was silent past its TTL, then came back)
# is free: its person must not be left waiting for nobody.
WITHDRAW = """
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'gone' end
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) end
return 'free'
"""

# KEYS[1] the person's `blind-at` key, KEYS[2] their `blind-wait` key, KEYS[3] their game
# route (`player:<pid>`, cluster.py). ARGV[1] this process, ARGV[2] the heartbeat key prefix,
# ARGV[3] the key's TTL. When they wait on a process whose heartbeat has gone, or were taken by
# one that died before it seated them, they wait here from now on: {'adopted',
# "<mode>|<epoch s joined>"}; {'elsewhere', process} while that process lives; {'none', ''}
# when they wait nowhere else.
ADOPT = """
local at = redis.call('GET', KEYS[1])
if not at or at == ARGV[1] or at == 'seated' then return {'none', ''} end
local proc = string.match(at, '^taken:(.*)$') or at
if redis.call('EXISTS', ARGV[2] .. proc) == 1 then return {'elsewhere', at} end
if proc ~= at and redis.call('EXISTS', KEYS[3]) == 1 then  -- seated before it died
  redis.call('DEL', KEYS[1])
  return {'none', ''}
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return {'adopted', redis.call('GET', KEYS[2]) or ''}
"""

# KEYS[1] the mode's offer set, KEYS[2] the caller's book, KEYS[3] the caller's `blind-at` key,
# KEYS[4] the offer counter. ARGV[1] the caller's entry, ARGV[2] their pid, ARGV[3] the book key
# prefix, ARGV[4] the met-set prefix, ARGV[5] interrogator quota, ARGV[6] witness quota,
# ARGV[7] met-set TTL, ARGV[8] book TTL, ARGV[9] the heartbeat key prefix, ARGV[10] "1" when
# the caller is offered too (three-party), ARGV[11] the `blind-at` prefix, ARGV[12] this process.
# An entry is taken only while its person's `blind-at` names its process: one who joined again
# elsewhere, or was taken, is not there any more.
# Returns {outcome, partner entry, caller i, caller w, partner i, partner w}.
TAKE = (
    BOOK_LUA
    + """
if redis.call('GET', KEYS[3]) ~= ARGV[12] then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {'gone', '', 0, 0, 0, 0}
end
local qi, qw = tonumber(ARGV[5]), tonumber(ARGV[6])
local ci, cw = counts(KEYS[2])
local met = ARGV[4] .. ARGV[2]
for _, e in ipairs(ci < qi and redis.call('ZRANGE', KEYS[1], 0, -1) or {}) do
  local other = string.match(e, '^([^|]+)')
  local proc = string.match(e, '|(.*)$')
  if redis.call('EXISTS', ARGV[9] .. proc) == 0 then
    redis.call('ZREM', KEYS[1], e)  -- its process died, and the person's socket with it
  elseif redis.call('GET', ARGV[11] .. other) ~= proc then
    redis.call('ZREM', KEYS[1], e)  -- taken, or waiting elsewhere now
  elseif other ~= ARGV[2] and redis.call('SISMEMBER', met, other) == 0 then
    local book = ARGV[3] .. other
    local oi, ow = counts(book)
    if ow < qw then
      redis.call('ZREM', KEYS[1], e, ARGV[1])
      -- Taken, not yet seated: marked, so that if this process dies before it seats them
      -- the one they reconnect to adopts them (ADOPT) instead of leaving them untold.
      local taken = 'taken:' .. ARGV[12]
      redis.call('SET', ARGV[11] .. other, taken, 'EX', ARGV[7])
      redis.call('SET', KEYS[3], taken, 'EX', ARGV[7])
      ci, ow = ci + 1, ow + 1
      record_pair(KEYS[2], ci, cw, book, oi, ow, met, ARGV[4] .. other, ARGV[2], other,
                  ARGV[7], ARGV[8])
      return {'paired', e, ci, cw, oi, ow}
    end
  end
end
if ARGV[10] == '1' then  -- still offered (again, if it was dropped as a ghost meanwhile)
  redis.call('ZADD', KEYS[1], 'NX', redis.call('INCR', KEYS[4]), ARGV[1])
end
return {'none', '', ci, cw, 0, 0}
"""
)

# KEYS: the `blind-at` keys of people this process took, now seated. ARGV[1] its marker,
# ARGV[2] the keys' TTL. Marked SEATED (until they join again), not deleted: a process that
# still lists them as waiting (it learns they were taken at their due time) and notes its
# waiting people again after Redis restarted empty (JOIN, "2") must not offer them again.
SEATED = """
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('SET', key, 'seated', 'EX', ARGV[2]) end
end
"""

# (mode, pids): seat them, pids[0] interrogating; their rounds are already counted.
Seat = Callable[["ArenaMode", list[str]], Awaitable[None]]
TimedOut = Callable[[str, float], None]
ModeOf = Callable[[str], "ArenaMode | None"]


@dataclass
class Waiting:
    """A person waiting on this process, and what the design drew for them."""

    mode: ArenaMode
    since: float
    plan: Plan
    design: MatchDesign
    max_wait_s: float  # then on to the exit survey
    offered: bool = False  # in the mode's offer set (may be taken as a witness)


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
    ) -> None:
        self.redis = client
        self.books = books
        self.prefix = books.prefix
        self.process = process
        self.clock = clock
        self.rng = rng
        self._seat = seat
        self._timed_out = timed_out
        self.waiting: dict[str, Waiting] = {}
        self.fallbacks = 0  # interrogators drawn for a person who met an AI (no witness free)
        self._join = client.register_script(JOIN)
        self._withdraw_script = client.register_script(WITHDRAW)
        self._take = client.register_script(TAKE)
        self._adopt_script = client.register_script(ADOPT)
        self._seated = client.register_script(SEATED)
        # People with a socket here who wait on another process, by process: adopted here if
        # it dies (its heartbeat goes), since nobody else would seat them or tell them so.
        self.elsewhere: dict[str, str] = {}

    @property
    def _taken(self) -> str:
        """What a person's `blind-at` says between TAKE and their seat here."""
        return f"taken:{self.process}"

    def _entry(self, pid: str) -> str:
        return f"{pid}|{self.process}"

    def _set(self, mode: ArenaMode) -> str:
        return f"{self.prefix}blind:{mode.name}"

    def _at(self, pid: str) -> str:
        """Which process `pid` waits on: the one that may seat them."""
        return f"{self.prefix}blind-at:{pid}"

    def _wait_key(self, pid: str) -> str:
        """The mode `pid` waits for and when they joined (epoch s), for an adopting process."""
        return f"{self.prefix}blind-wait:{pid}"

    async def join(
        self, run: str, pid: str, mode: ArenaMode, settings: ArenaSettings, book: RoundBook
    ) -> bool:
        """Draw `pid`'s wait and part, offering them as a witness where the part says so;
        False (nobody queued) when they have played all their rounds."""
        await self.leave(pid)
        self.elsewhere.pop(pid, None)
        await self.books.load(run, pid, book)
        if book.done(pid):
            return False
        waiting = self._draw(pid, mode, settings, book, self.clock.now())
        await self._register(pid, waiting, joining=True)
        return True

    def _draw(
        self, pid: str, mode: ArenaMode, settings: ArenaSettings, book: RoundBook, since: float
    ) -> Waiting:
        """`pid` waits here from `since`: their wait and part drawn by the design."""
        design = settings.design
        assert design is not None, "blind matching needs a design"
        plan = Plan(since + design.draw_wait(self.rng), "person")
        if len(mode.witnesses) == 1:
            plan.kind = design.draw_kind(self.rng)
        waiting = Waiting(mode, since, plan, design, settings.max_wait_s)
        self._within_quota(pid, waiting, book)
        self.waiting[pid] = waiting
        return waiting

    async def watch(
        self, run: str, pid: str, settings: ArenaSettings, book: RoundBook, mode_of: ModeOf
    ) -> bool:
        """`pid`, with no game and not waiting here, (re)connected here: whether they wait on
        some process — another, alive (watched until it dies), or this one, adopting them from
        a dead one (their wait counted from when they joined there, so `max_wait_s` holds)."""
        if pid in self.waiting:
            return True
        found, value = await self._adopt_script(
            keys=[self._at(pid), self._wait_key(pid), f"{self.prefix}player:{pid}"],
            args=[self.process, f"{self.prefix}alive:", self.books.met_ttl_s],
        )
        if found == "elsewhere":
            self.elsewhere[pid] = str(value)
            return True
        self.elsewhere.pop(pid, None)
        if found != "adopted":
            return False  # seated or let go by that process: its frames tell them
        name, _, joined = str(value).partition("|")
        mode = mode_of(name)
        await self.books.load(run, pid, book)
        await self.books.recount(run, pid, book)  # a round the dead taker counted, if any
        if mode is None or book.done(pid):
            await self.redis.delete(self._at(pid))
            return False
        waited = max(0.0, time.time() - float(joined or time.time()))
        waiting = self._draw(pid, mode, settings, book, self.clock.now() - waited)
        log.info("blind matching: %s adopted from a dead process (waited %.1f s)", pid, waited)
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
        their `blind-at` keys gone, each would be taken for taken by another process at their
        due time and left waiting for nobody. Not those another process took and seated
        before (`plays`: kept in `waiting` here until their due time), or they could be
        seated twice."""
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
        key = self._set(waiting.mode)
        joined = f"{waiting.mode.name}|{time.time() - (self.clock.now() - waiting.since):.3f}"
        here = await self._join(
            keys=[self._at(pid), key, key + ":n", self._wait_key(pid)],
            args=[
                self.process,
                self._entry(pid),
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
        """Stop waiting; False when another process took them as a witness meanwhile."""
        waiting = self.waiting.pop(pid, None)
        freed = waiting is not None and await self._withdraw(pid, waiting, release=True)
        self.elsewhere.pop(pid, None)  # they left: not adopted back if a taker dies
        return freed

    async def tick(self, run: str, book: RoundBook) -> None:
        """Seat everyone due now; send on those who waited past `max_wait_s`."""
        now = self.clock.now()
        for pid, waiting in list(self.waiting.items()):
            if self.waiting.get(pid) is not waiting:  # seated earlier in this pass
                continue
            plan, one_witness = waiting.plan, len(waiting.mode.witnesses) == 1
            if now >= plan.due:
                self._within_quota(pid, waiting, book)
                if plan.kind == "witness" and not waiting.offered:  # may only witness now
                    await self._register(pid, waiting, joining=False)
                elif plan.kind == "witness" and one_witness and book.may(pid, "interrogator"):
                    # Nobody took them as a witness in their time: they interrogate now instead,
                    # their witness drawn as anyone's is (as in one process).
                    if not await self._withdraw(pid, waiting):
                        continue
                    plan.kind = waiting.design.draw_interrogation(self.rng)
                if plan.kind != "witness":
                    await self._due(run, pid, waiting, book)
            overdue = now - waiting.since >= waiting.max_wait_s
            if (
                overdue
                and self.waiting.get(pid) is waiting
                and await self._withdraw(pid, waiting, release=True)
            ):
                self.waiting.pop(pid, None)
                self._timed_out(pid, now - waiting.since)

    def _within_quota(self, pid: str, waiting: Waiting, book: RoundBook) -> None:
        """The draw, unless the person's rounds leave them only the other role."""
        plan = waiting.plan
        if plan.kind == "witness" and not book.may(pid, "witness"):
            plan.kind = waiting.design.draw_interrogation(self.rng)
        elif plan.kind != "witness" and not book.may(pid, "interrogator"):
            plan.kind = "witness"

    async def _withdraw(self, pid: str, waiting: Waiting, *, release: bool = False) -> bool:
        """Take `pid` out of the offer set (and, with `release`, let go of them); False, and
        forgotten here, when they were taken meanwhile or wait on another process now."""
        waiting.offered = False
        keys = [self._at(pid), self._set(waiting.mode)]
        args: list[str | int] = [self.process, self._entry(pid), int(release)]
        if await self._withdraw_script(keys=keys, args=args) == "free":
            return True
        self._taken_away(pid)
        return False

    def _taken_away(self, pid: str) -> None:
        """Another process took `pid` (or they joined again on one): it seats them. Watched from
        here until it has, as it may die first (`watch_elsewhere`)."""
        self.waiting.pop(pid, None)
        self.elsewhere[pid] = "taken"

    async def _due(self, run: str, pid: str, waiting: Waiting, book: RoundBook) -> None:
        mode, one_witness = waiting.mode, len(waiting.mode.witnesses) == 1
        if waiting.plan.kind == "person":
            outcome, partner = await self._take_witness(run, pid, waiting, book)
            if outcome == "gone":
                self._taken_away(pid)
                return
            if partner is not None:
                self.waiting.pop(pid, None)
                self.waiting.pop(partner, None)  # when they waited here
                await self._seat(mode, [pid, partner])
                keys, ttl = [self._at(pid), self._at(partner)], self.books.met_ttl_s
                await self._seated(keys=keys, args=[self._taken, ttl])
                return
            if not one_witness:
                return  # three-party with nobody to witness: keep waiting, still offered
        if not book.may(pid, "interrogator"):
            return
        if not await self._withdraw(pid, waiting, release=True):
            return
        self.waiting.pop(pid, None)
        await self.books.count_alone(run, pid, book)
        await self._seat(mode, [pid])
        if waiting.plan.kind == "person":  # drawn for a person, seated with an AI
            await self._fell_back(run)

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

    async def _take_witness(
        self, run: str, pid: str, waiting: Waiting, book: RoundBook
    ) -> tuple[str, str | None]:
        found = await self._take(
            keys=[
                self._set(waiting.mode),
                self.books.book_key(run, pid),
                self._at(pid),
                self._set(waiting.mode) + ":n",
            ],
            args=[
                self._entry(pid),
                pid,
                self.books.book_key(run, ""),
                f"{self.prefix}met:",
                book.quota["interrogator"],
                book.quota["witness"],
                self.books.met_ttl_s,
                BOOK_TTL_S,
                f"{self.prefix}alive:",
                "1" if waiting.offered else "0",
                f"{self.prefix}blind-at:",
                self.process,
            ],
        )
        outcome, entry, ci, cw, oi, ow = found
        if outcome == "gone":
            return "gone", None
        book.mirror(pid, int(ci), int(cw))
        if outcome != "paired":
            return "none", None
        partner = str(entry).split("|", 1)[0]
        book.mirror(partner, int(oi), int(ow))
        return "paired", partner
