"""Someone watched here while queued on another process is adopted here when their queue entry
is lost with Redis and that process never answers them.

Their page reconnected here just after the process queueing them was killed (its heartbeat
still alive: watched, `elsewhere`); Redis then restarted empty, so their `queued:<pid>` entry,
the one record of whom that process queued, was gone, and ADOPT said "none" as for someone
seated or let go. Nobody seated them, gave them a witness or timed them out: left waiting
(sim seeds 107, 160). Missing for VANISHED_S with no answer from that process (a game, a
status), the entry is taken for lost and they are queued here, their wait counted from when
they first queued; answered, they are simply not watched any more.
"""

from __future__ import annotations

import pytest

from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster import queue_adopt
from turinglab.arena.cluster.queue_adopt import QueueAdopt

pytestmark = [pytest.mark.slow]


async def test_a_watched_person_whose_entry_is_lost_unanswered_is_found_vanished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with alive_namespace("P-dying") as (client, prefix):
        there, here = QueueAdopt(client, prefix, "P-dying"), QueueAdopt(client, prefix, "P-here")
        await there.queued("a", "chat", 30.0)
        await there.queued("b", "chat", 30.0)
        assert (await here.find("a")).state == (await here.find("b")).state == "elsewhere"
        await client.delete(here.key("a"), here.key("b"))  # Redis restarted empty
        assert (await here.find("a")).state == "none" and "a" in here.elsewhere  # in flight?
        here.forget("b")  # its process answered b (a status, a game): nothing lost
        monkeypatch.setattr(queue_adopt, "VANISHED_S", 0.0)
        found = await here.find("a")
        assert (found.state, found.mode) == ("vanished", "chat")
        assert 29.0 < found.waited_s < 60.0  # since they first queued there
        assert "a" not in here.elsewhere
        assert (await here.find("b")).state == "none" and "b" not in here.elsewhere
