"""The study's round book in Redis, so that several arena processes run one study (cluster.py).

Each participant has a hash `book:<run>:<pid>` under the arena's namespace: `i` and `w`, the
rounds played as interrogator and as witness, and `g:<mode>`, the AI witness groups they still
have to meet in the current cycle (a JSON list). It is changed only inside Lua scripts or by
HINCRBY, which Redis runs atomically, so whichever process seats a person reads and updates the
same book. Each process mirrors the counts it reads into its lobby's RoundBook (rounds.py),
which is what its frames show ("round 2 of 8", "rounds-done").

A game that was not a round (abandoned or flagged: abandon.py) gives its rounds back here too
(GIVE_BACK, by the process that played it), or the next process to mirror the book would count
them again; and its AI witness groups go back to the front of the interrogator's cycle
(GROUPS_BACK), so each interrogator still meets every group.

Matchmaking is one script, TAKE_OR_WAIT: it takes the first person queued for the mode who has
not met the caller and whose quota allows the opposite role, counts the round for both, records
that they met, and says which role the caller plays; or it queues the caller; or, when the
caller has played all their rounds, says so and queues nobody.

Redis is not the durable record: the store is. A book Redis lost (it restarted empty, or the
key expired) is rebuilt from the store's count of the person's study games per role, and their
met-set from whom they sat with, before any decision reads it: TAKE_OR_WAIT and COUNT_ALONE
answer `unseeded` for a caller without a book, and `load` (which blind matching calls as a
person joins) seeds one. Seeding only fills what is missing (HSETNX, SADD), so counts a
concurrent writer made meanwhile are never overwritten. When the store cannot be read either
(it is down, or failed a commit moments ago), nothing is decided for that caller
(`BookLost`): an empty book would seat them for rounds they have already played. The AI
witness groups' cycle is not rebuilt: after a loss a person may meet a group again before
meeting all.

The store also corrects Redis the other way (`recount`): a process that paired two people
and died before seating them counted a round for each that no game holds. Whoever picks them
up (cluster.py: a person taken and never seated, one adopted from a dead process's queue) and
any "done" about to end someone's study set the book back to the store's record.

The scripts build the partner's keys from prefixes: fine on one Redis server, not on Redis
Cluster (whose scripts must name every key they touch).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from turinglab.arena.core.metrics import fault
from turinglab.arena.core.rounds import Role, RoundBook

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

    import redis.asyncio as aioredis

    from turinglab.store.arena_people import PastRounds

log = logging.getLogger(__name__)

# (run, pid) -> the person's rounds as the store has them; None: no store, nothing to count.
PastSource = Callable[[str, str], Awaitable["PastRounds | None"]]

# A book outlives any study session; it is refreshed on every change.
BOOK_TTL_S = 30 * 24 * 3600

# Lua shared by the pairing scripts (here and shared_blind.py): a person's round counts, and
# recording that two people were paired (both books, who met whom, and their TTLs).
BOOK_LUA = """
local function counts(book)
  local c = redis.call('HMGET', book, 'i', 'w')
  return tonumber(c[1] or '0'), tonumber(c[2] or '0')
end
local function record_pair(book1, i1, w1, book2, i2, w2, met1, met2, pid1, pid2, met_ttl, ttl)
  redis.call('HSET', book1, 'i', i1, 'w', w1)
  redis.call('HSET', book2, 'i', i2, 'w', w2)
  redis.call('SADD', met1, pid2)
  redis.call('SADD', met2, pid1)
  for _, key in ipairs({met1, met2}) do redis.call('EXPIRE', key, met_ttl) end
  for _, key in ipairs({book1, book2}) do redis.call('EXPIRE', key, ttl) end
end
"""

# KEYS[1] the mode's queue, KEYS[2] the caller's book.
# ARGV[1] the caller's entry "pid|process", ARGV[2] pid, ARGV[3] the book key prefix,
# ARGV[4] the met-set key prefix, ARGV[5] interrogator quota, ARGV[6] witness quota,
# ARGV[7] "1" when the caller interrogates if both ways fit, ARGV[8] met-set TTL, ARGV[9] book TTL,
# ARGV[10] the heartbeat key prefix: an entry whose process's heartbeat has expired (the process
# died, and its people's sockets with it) is dropped, never matched. ARGV[11] "1": answer
# `unseeded` when the caller has no book (Redis lost it: rebuild it from the store first).
# Returns {outcome, partner entry, caller's role, caller i, caller w, partner i, partner w}.
TAKE_OR_WAIT = (
    BOOK_LUA
    + """
if ARGV[11] == '1' and redis.call('HEXISTS', KEYS[2], 'i') == 0 then
  return {'unseeded', '', '', 0, 0, 0, 0}
end
local qi, qw = tonumber(ARGV[5]), tonumber(ARGV[6])
local ci, cw = counts(KEYS[2])
if ci >= qi and cw >= qw then
  redis.call('LREM', KEYS[1], 0, ARGV[1])
  return {'done', '', '', ci, cw, 0, 0}
end
local met = ARGV[4] .. ARGV[2]
local prefix = ARGV[2] .. '|'
local k = 0
while k < redis.call('LLEN', KEYS[1]) do
  local e = redis.call('LINDEX', KEYS[1], k)
  local proc = string.match(e, '|(.*)$')
  if proc and redis.call('EXISTS', ARGV[10] .. proc) == 0 then
    redis.call('LREM', KEYS[1], 1, e)  -- its process is gone: the next entry moves up to k
    k = k - 1
  elseif string.sub(e, 1, string.len(prefix)) ~= prefix then
    local other = string.match(e, '^([^|]+)')
    if redis.call('SISMEMBER', met, other) == 0 then
      local book = ARGV[3] .. other
      local oi, ow = counts(book)
      local asks = ci < qi and ow < qw  -- the caller interrogates, the other witnesses
      local answers = oi < qi and cw < qw  -- the other way round
      if asks or answers then
        if asks and answers then asks = ARGV[7] == '1' end
        local role = 'witness'
        if asks then
          role = 'interrogator'
          ci, ow = ci + 1, ow + 1
        else
          cw, oi = cw + 1, oi + 1
        end
        redis.call('LREM', KEYS[1], 1, e)
        record_pair(KEYS[2], ci, cw, book, oi, ow, met, ARGV[4] .. other, ARGV[2], other,
                    ARGV[8], ARGV[9])
        return {'paired', e, role, ci, cw, oi, ow}
      end
    end
  end
  k = k + 1
end
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[1])
return {'waiting', '', '', ci, cw, 0, 0}
"""
)

# KEYS[1] a person's book, KEYS[2] their met-set. ARGV[1] interrogator rounds, ARGV[2] witness
# rounds, ARGV[3] book TTL, ARGV[4] met-set TTL, ARGV[5..] whom they met: the store's record,
# filling in only what Redis lacks.
SEED = """
redis.call('HSETNX', KEYS[1], 'i', ARGV[1])
redis.call('HSETNX', KEYS[1], 'w', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
if #ARGV > 4 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 5))
  redis.call('EXPIRE', KEYS[2], ARGV[4])
end
return 1
"""

# KEYS[1] a person's book, KEYS[2] their met-set, ARGV as SEED's. Unlike SEED it replaces what
# Redis has: the counts of a pair that a process recorded and then died before seating them.
RECOUNT = """
redis.call('HSET', KEYS[1], 'i', ARGV[1], 'w', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
if #ARGV > 4 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 5))
  redis.call('EXPIRE', KEYS[2], ARGV[4])
end
return 1
"""

# KEYS[1] a person's book, ARGV[1] "i" or "w": a round given back (its game was abandoned or
# flagged), never below none.
GIVE_BACK = """
if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') > 0 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
end
return 1
"""

# KEYS[1] the person's book. ARGV[1] "1": answer `unseeded` when they have none, ARGV[2] book
# TTL. Counts a round as interrogator; returns {outcome, i, w}.
COUNT_ALONE = """
if ARGV[1] == '1' and redis.call('HEXISTS', KEYS[1], 'i') == 0 then
  return {'unseeded', 0, 0}
end
local i = redis.call('HINCRBY', KEYS[1], 'i', 1)
local w = redis.call('HGET', KEYS[1], 'w') or '0'
redis.call('EXPIRE', KEYS[1], ARGV[2])
return {'counted', i, tonumber(w)}
"""

# KEYS[1] the interrogator's book. ARGV[1] the field (g:<mode>), ARGV[2] how many to draw,
# ARGV[3] fresh orders of all groups (a JSON list of lists), used one by one as the cycle
# empties, ARGV[4] book TTL. Returns the drawn groups.
DRAW_GROUPS = """
local left = cjson.decode(redis.call('HGET', KEYS[1], ARGV[1]) or '[]')
local fresh = cjson.decode(ARGV[3])
local used, drawn = 0, {}
for _ = 1, tonumber(ARGV[2]) do
  if #left == 0 then
    used = used + 1
    left = fresh[used]
  end
  table.insert(drawn, table.remove(left, 1))
end
redis.call('HSET', KEYS[1], ARGV[1], #left == 0 and '[]' or cjson.encode(left))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return drawn
"""

# KEYS[1] the interrogator's book. ARGV[1] the field (g:<mode>), ARGV[2] book TTL, ARGV[3..]
# the groups of a game that was no round: put first in the cycle, each once.
GROUPS_BACK = """
local left = cjson.decode(redis.call('HGET', KEYS[1], ARGV[1]) or '[]')
local back = {}
for i = 3, #ARGV do
  local found = false
  for _, g in ipairs(left) do
    if g == ARGV[i] then found = true end
  end
  if not found then table.insert(back, ARGV[i]) end
end
for _, g in ipairs(left) do table.insert(back, g) end
redis.call('HSET', KEYS[1], ARGV[1], #back == 0 and '[]' or cjson.encode(back))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return #back
"""


class BookLost(Exception):
    """Redis has no round book for the person and the store could not be read to rebuild it:
    deciding now would count their rounds from zero (sim seed 158 under `postgres`: two
    people played a third game of a two-round study). Try again later."""


@dataclass(frozen=True)
class Taken:
    """What TAKE_OR_WAIT decided for the caller."""

    outcome: Literal["paired", "waiting", "done"]
    partner: str | None = None  # the partner's entry "pid|process", when paired
    role: Role | None = None  # the caller's role, when paired

    @property
    def partner_id(self) -> str:
        assert self.partner is not None
        return self.partner.split("|", 1)[0]


class SharedRounds:
    """One arena's round books in Redis; `prefix` is the arena's namespace; `past` counts a
    person's rounds from the store, to rebuild a book Redis lost."""

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        met_ttl_s: int,
        past: PastSource | None = None,
    ) -> None:
        self.redis = client
        self.prefix = prefix
        self.met_ttl_s = met_ttl_s
        self.past = past
        self.seeded = 0  # books rebuilt by this process (from the store, or empty without one)
        self._take = client.register_script(TAKE_OR_WAIT)
        self._draw = client.register_script(DRAW_GROUPS)
        self._seed = client.register_script(SEED)
        self._recount = client.register_script(RECOUNT)
        self._give_back = client.register_script(GIVE_BACK)
        self._groups_back = client.register_script(GROUPS_BACK)
        self._count_alone = client.register_script(COUNT_ALONE)

    def book_key(self, run: str, pid: str) -> str:
        return f"{self.prefix}book:{run}:{pid}"

    async def seed(self, run: str, pid: str) -> bool:
        """Rebuild `pid`'s book and met-set from the store where Redis has none; False when the
        store could not be read (the book is left missing, to be tried again)."""
        try:
            past = None if self.past is None else await self.past(run, pid)
        except Exception as err:  # the store is down: decide on Redis's counts, as before
            log.warning("round book of %s not rebuilt from the store: %s", pid, err)
            return False
        args: list[str | int] = [0, 0, BOOK_TTL_S, self.met_ttl_s]
        if past is not None:
            args[:2] = [past.interrogated, past.witnessed]
            args += sorted(past.met)
        await self._seed(keys=[self.book_key(run, pid), f"{self.prefix}met:{pid}"], args=args)
        self.seeded += 1
        return True

    async def give_back(self, run: str, pid: str, role: Role) -> None:
        """A round of a game that was not one (abandoned, flagged) is not counted: the owner's
        book gave it back (abandon.py); the shared one must too, or the next mirror undoes it."""
        await self._give_back(keys=[self.book_key(run, pid)], args=[role[0]])

    async def give_groups_back(self, run: str, pid: str, mode: str, groups: Sequence[str]) -> None:
        """The AI witness groups of a game that was no round are met next, from the shared
        cycle too (as RoundBook.give_groups_back): a failed witness costs that game only."""
        if groups:
            await self._groups_back(
                keys=[self.book_key(run, pid)], args=[f"g:{mode}", BOOK_TTL_S, *groups]
            )

    async def recount(self, run: str, pid: str, book: RoundBook) -> bool:
        """Set `pid`'s book to the store's record where Redis counts more rounds: a pair that
        a process counted and then died before seating them (their game never existed), which
        would otherwise cost them a round, maybe their last ("rounds-done" too early), and bar
        them from meeting the person they never met. True when it was corrected."""
        if self.past is None:
            return False
        try:
            past = await self.past(run, pid)
        except Exception as err:  # the store is down: Redis's counts stand, as before
            log.warning("round book of %s not checked against the store: %s", pid, err)
            return False
        if past is None:
            return False
        i, w = await self.redis.hmget(self.book_key(run, pid), ["i", "w"])
        counted = (int(i or 0), int(w or 0))
        if counted[0] <= past.interrogated and counted[1] <= past.witnessed:
            return False
        args: list[str | int] = [past.interrogated, past.witnessed, BOOK_TTL_S, self.met_ttl_s]
        args += sorted(past.met)
        await self._recount(keys=[self.book_key(run, pid), f"{self.prefix}met:{pid}"], args=args)
        book.mirror(pid, past.interrogated, past.witnessed)
        stored = (past.interrogated, past.witnessed)
        fault(log, "rounds-recounted", participant=pid, counted=counted, stored=stored)
        return True

    async def take_or_wait(
        self, run: str, mode: str, pid: str, process: str, book: RoundBook
    ) -> Taken:
        """Pair `pid` with someone queued for `mode` whose quota fits, or queue them; the
        counts read are mirrored into `book` (this process's RoundBook)."""
        both_fit_caller_asks = book.rng.random() < 0.5
        args: list[str | int] = [
            f"{pid}|{process}",
            pid,
            self.book_key(run, ""),
            f"{self.prefix}met:",
            book.quota["interrogator"],
            book.quota["witness"],
            "1" if both_fit_caller_asks else "0",
            self.met_ttl_s,
            BOOK_TTL_S,
            f"{self.prefix}alive:",
        ]
        keys = [f"{self.prefix}queue:{mode}", self.book_key(run, pid)]
        found = await self._take(keys=keys, args=[*args, "1"])
        if found[0] == "unseeded":  # rebuilt, then decided
            if not await self.seed(run, pid):
                raise BookLost(pid)
            found = await self._take(keys=keys, args=[*args, "0"])
        outcome, partner, role, ci, cw, oi, ow = found
        book.mirror(pid, int(ci), int(cw))
        if outcome != "paired":
            return Taken(outcome)
        taken = Taken("paired", str(partner), role)
        book.mirror(taken.partner_id, int(oi), int(ow))
        return taken

    async def load(self, run: str, pid: str, book: RoundBook) -> None:
        """Mirror a person's counts from Redis into this process's book (rebuilt first when
        Redis has none)."""
        i, w = await self.redis.hmget(self.book_key(run, pid), ["i", "w"])
        if i is None and await self.seed(run, pid):
            i, w = await self.redis.hmget(self.book_key(run, pid), ["i", "w"])
        book.mirror(pid, int(i or 0), int(w or 0))

    async def count_alone(self, run: str, pid: str, book: RoundBook) -> None:
        """Count a round as interrogator for someone seated with AI witnesses only."""
        keys = [self.book_key(run, pid)]
        found = await self._count_alone(keys=keys, args=["1", BOOK_TTL_S])
        if found[0] == "unseeded":
            if not await self.seed(run, pid):
                raise BookLost(pid)
            found = await self._count_alone(keys=keys, args=["0", BOOK_TTL_S])
        _, interrogated, witnessed = found
        book.mirror(pid, int(interrogated), int(witnessed))

    async def draw_groups(
        self, run: str, pid: str, mode: str, groups: Sequence[str], n: int, rng: random.Random
    ) -> list[str]:
        """The next `n` AI witness groups for this interrogator, from their shared cycle: every
        group once, in an order drawn for them, then a fresh order (as RoundBook.next_groups)."""
        if not groups or n < 1:
            return []
        orders = []
        for _ in range(math.ceil(n / len(groups))):
            order = list(groups)
            rng.shuffle(order)
            orders.append(order)
        drawn = await self._draw(
            keys=[self.book_key(run, pid)],
            args=[f"g:{mode}", n, json.dumps(orders), BOOK_TTL_S],
        )
        return [str(g) for g in drawn]
