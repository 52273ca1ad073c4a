"""The study's round book in Redis, so that several arena processes run one study (cluster.py).

Each participant has a hash `book:<run>:<pid>` under the arena's namespace: `i` and `w`, the
rounds played as interrogator and as witness, and `g:<mode>`, the AI witness groups they still
have to meet in the current cycle (a JSON list). It is changed only inside Lua scripts or by
HINCRBY, which Redis runs atomically, so whichever process seats a person reads and updates the
same book. Each process mirrors the counts it reads into its lobby's RoundBook (rounds.py),
which is what its frames show ("round 2 of 8", "rounds-done").

Matchmaking is one script, TAKE_OR_WAIT: it takes the first person queued for the mode who has
not met the caller and whose quota allows the opposite role, counts the round for both, records
that they met, and says which role the caller plays; or it queues the caller; or, when the
caller has played all their rounds, says so and queues nobody.

The scripts build the partner's keys from prefixes: fine on one Redis server, not on Redis
Cluster (whose scripts must name every key they touch).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from turinglab.arena.rounds import Role, RoundBook

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

    import redis.asyncio as aioredis

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
# died, and its people's sockets with it) is dropped, never matched.
# Returns {outcome, partner entry, caller's role, caller i, caller w, partner i, partner w}.
TAKE_OR_WAIT = (
    BOOK_LUA
    + """
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
    """One arena's round books in Redis; `prefix` is the arena's namespace."""

    def __init__(self, client: aioredis.Redis, prefix: str, met_ttl_s: int) -> None:
        self.redis = client
        self.prefix = prefix
        self.met_ttl_s = met_ttl_s
        self._take = client.register_script(TAKE_OR_WAIT)
        self._draw = client.register_script(DRAW_GROUPS)

    def book_key(self, run: str, pid: str) -> str:
        return f"{self.prefix}book:{run}:{pid}"

    async def take_or_wait(
        self, run: str, mode: str, pid: str, process: str, book: RoundBook
    ) -> Taken:
        """Pair `pid` with someone queued for `mode` whose quota fits, or queue them; the
        counts read are mirrored into `book` (this process's RoundBook)."""
        both_fit_caller_asks = book.rng.random() < 0.5
        found = await self._take(
            keys=[f"{self.prefix}queue:{mode}", self.book_key(run, pid)],
            args=[
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
            ],
        )
        outcome, partner, role, ci, cw, oi, ow = found
        book.mirror(pid, int(ci), int(cw))
        if outcome != "paired":
            return Taken(outcome)
        taken = Taken("paired", str(partner), role)
        book.mirror(taken.partner_id, int(oi), int(ow))
        return taken

    async def load(self, run: str, pid: str, book: RoundBook) -> None:
        """Mirror a person's counts from Redis into this process's book."""
        i, w = await self.redis.hmget(self.book_key(run, pid), ["i", "w"])
        book.mirror(pid, int(i or 0), int(w or 0))

    async def count_alone(self, run: str, pid: str, book: RoundBook) -> None:
        """Count a round as interrogator for someone seated with AI witnesses only."""
        key = self.book_key(run, pid)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hincrby(key, "i", 1)
        pipe.hget(key, "w")
        pipe.expire(key, BOOK_TTL_S)
        interrogated, witnessed, _ = await pipe.execute()
        book.mirror(pid, int(interrogated), int(witnessed or 0))

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
