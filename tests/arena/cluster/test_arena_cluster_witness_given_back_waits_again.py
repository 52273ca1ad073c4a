"""A witness given back by an interrogator of their own process waits again there
(shared_blind.py, ADOPT in shared_blind_scripts.py), on a real Redis.

An interrogator holds a witness (CLAIM) and closes their page before their due time: the
witness is given back (RELEASE), offered again by their own process. When that process was
the taker too, it had stopped waiting for them (taken, it would seat them) and, with ADOPT
answering "none" for its own holds, stopped watching them as well: the witness stayed in the
offer set with no process waiting for them — never excused, never timed out, seated only if
some later interrogator happened to take them (at the end of a study, nobody). Found by
test_arena_cluster_typing_relay.py's harness (a study that never settled)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from test_arena_cluster_blind import Drawn, Processes, fixed, mode_named
from test_arena_multiprocess import alive_namespace
from turinglab.arena.core.match_design import MatchDesign
from turinglab.arena.core.modes import ArenaSettings


@pytest.fixture
async def namespace() -> AsyncIterator[tuple[aioredis.Redis, str]]:
    async with alive_namespace("P0", "P1") as made:
        yield made


@pytest.mark.parametrize("taker_on", [0, 1])
async def test_a_witness_given_back_waits_again(namespace: tuple, taker_on: int) -> None:
    client, prefix = namespace
    settings = ArenaSettings(
        design=MatchDesign(human_witness_share=1.0, wait_min_s=5, wait_max_s=5), max_wait_s=60
    )
    mode = mode_named("two-party")
    procs = Processes(client, prefix, n=2, seed=1, rng_for=Drawn)
    for i in (0, 1):
        fixed(procs, i, "person", 5.0)

    async def tick() -> None:
        for i in (0, 1):
            await procs.tick_one(i, settings)
        procs.clock.t += 0.5

    await procs.join("w", 0, mode, settings)
    await tick()  # nobody offered: w offers themselves on P0
    await procs.join("i", taker_on, mode, settings)
    await tick()  # i holds w
    await tick()  # w's process learns it ...
    await tick()  # ... and watches them (held: seated by the taker, or given back)
    assert await client.get(f"{prefix}blind-at:w") == f"taken:P{taker_on}@P0"
    assert "w" not in procs.matchers[0].waiting
    # Watched where their page is: were it to close now, the cluster would let them go
    # (disconnect → leave_queues, cluster.py) rather than seat the interrogator with nobody.
    assert "w" in procs.matchers[0].elsewhere
    await procs.matchers[taker_on].leave("i")  # i's page closes: w given back to P0
    assert await client.get(f"{prefix}blind-at:w") == "P0"
    await tick()
    assert "w" in procs.matchers[0].waiting, "given back, and waited for by nobody"
    while procs.waiting:
        await tick()
        assert procs.clock.t < 120, "w was never seated nor sent on"
    assert procs.seated == [["w"]]  # due, nobody else: w interrogates an AI
