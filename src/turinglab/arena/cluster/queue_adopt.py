"""Open matching across processes (cluster.py): who waits in the shared queue on which process,
so that people queued on a process that dies are not left waiting for nobody.

A queued person's entry "pid|process" lives in `queue:<mode>` (shared_rounds.py), and only
that process may seat them, give them AI witnesses or time them out. If it is SIGKILLed, their
entry is dropped and their page reconnects to another process without joining again: that one
would show them an idle lobby while they believe they wait. So each queued person also has
`queued:<pid>` = "<process>|<mode>|<epoch s queued>", set before the process tries to pair
them (it may die between pairing and seating them too) and deleted once they are seated or
leave the queue; the process they reconnect to watches them while their process lives (it may
still seat them) and, once its heartbeat has gone, ADOPT moves them to itself, to be queued
there with their wait counted from when they first queued. The round a dying process counted
for a pair it never seated is taken back there (shared_rounds.py, `recount`); their partner,
queued on another process, is queued again by that one (cluster.py, `count_taken_away`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import redis.asyncio as aioredis

# KEYS[1] the person's `queued` key, KEYS[2] their game route (`player:<pid>`). ARGV[1] this
# process, ARGV[2] the heartbeat key prefix, ARGV[3] the key's TTL. {'elsewhere', ''} while
# their process lives and still queues them, or has taken them from the queue to seat them (a
# route shows up, or it dies first and they are adopted); {'adopted', value} once it has died
# (the key names this process now); else {'none', ''}.
ADOPT = """
local v = redis.call('GET', KEYS[1])
if not v then return {'none', ''} end
local proc, mode = string.match(v, '^([^|]*)|([^|]*)|')
if proc == ARGV[1] or not mode then return {'none', ''} end
if redis.call('EXISTS', KEYS[2]) == 1 then  -- seated (a game's route): not waiting any more
  redis.call('DEL', KEYS[1])
  return {'none', ''}
end
if redis.call('EXISTS', ARGV[2] .. proc) == 1 then
  return {'elsewhere', v}  -- queued there, or being seated (leaving deletes the key)
end
redis.call('SET', KEYS[1], ARGV[1] .. string.sub(v, string.len(proc) + 1), 'EX', ARGV[3])
return {'adopted', v}
"""

# KEYS[1] the person's `queued` key. ARGV[1] the queue key prefix, ARGV[2] the pid. A person
# who leaves the lobby on another process than the one queueing them: their entry goes, so
# that one does not seat them later (nor a process adopting them once it died).
LEAVE = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
redis.call('DEL', KEYS[1])
local proc, mode = string.match(v, '^([^|]*)|([^|]*)|')
if not mode then return 0 end
return redis.call('LREM', ARGV[1] .. mode, 0, ARGV[2] .. '|' .. proc)
"""

TTL_S = 6 * 3600
# How long a watched person's entry may be missing, with no answer from their process (a game,
# a status), before it is taken for lost with Redis (restarted empty) rather than in flight.
VANISHED_S = 2.0


@dataclass(frozen=True)
class Found:
    state: Literal["none", "elsewhere", "adopted", "vanished"]
    mode: str = ""
    waited_s: float = 0.0  # since they first queued, on whichever process


class QueueAdopt:
    """One process's side: note whom it queues, find those queued on a dead process."""

    def __init__(self, client: aioredis.Redis, prefix: str, process: str) -> None:
        self.redis = client
        self.prefix = prefix
        self.process = process
        self._adopt = client.register_script(ADOPT)
        self._leave = client.register_script(LEAVE)
        self.elsewhere: set[str] = set()  # with a socket here, queued on a live process
        # pid -> their entry as last seen there, until that process answers them (`forget`),
        # and since when it is missing: a Redis restarted empty drops it, and a process that
        # died just before it never writes it again, nor seats them or times them out.
        self._watched: dict[str, str] = {}
        self._missing: dict[str, float] = {}

    def key(self, pid: str) -> str:
        return f"{self.prefix}queued:{pid}"

    async def queued(self, pid: str, mode: str, waited_s: float) -> None:
        value = f"{self.process}|{mode}|{time.time() - waited_s:.3f}"
        await self.redis.set(self.key(pid), value, ex=TTL_S)

    async def find(self, pid: str) -> Found:
        state, value = await self._adopt(
            keys=[self.key(pid), f"{self.prefix}player:{pid}"],
            args=[self.process, f"{self.prefix}alive:", TTL_S],
        )
        if state == "elsewhere":
            self.elsewhere.add(pid)
            self._watched[pid] = str(value)
            self._missing.pop(pid, None)
            return Found("elsewhere")
        if state == "none" and pid in self._watched:  # unanswered: lost with Redis, or in flight
            since_m = self._missing.setdefault(pid, time.monotonic())
            if time.monotonic() - since_m < VANISHED_S:
                return Found("none")  # still watched: asked again next tick
            state, value = "vanished", self._watched[pid]
        self.forget(pid)
        if state == "none":
            return Found("none")
        _, mode, since = str(value).split("|", 2)
        return Found(state, mode, max(0.0, time.time() - float(since)))

    def forget(self, pid: str) -> None:
        """Not watched any more: their process answered them (a game, a status), they were
        adopted, or they left."""
        self.elsewhere.discard(pid)
        self._watched.pop(pid, None)
        self._missing.pop(pid, None)

    async def leave(self, pid: str) -> bool:
        """`pid` left the lobby here while queued on another process: out of that queue.
        False when they were no longer in it (seated meanwhile, or never queued)."""
        self.forget(pid)
        removed = await self._leave(keys=[self.key(pid)], args=[f"{self.prefix}queue:", pid])
        return bool(removed)
