"""The simulated clock: virtual time, ordered wake-ups, holds, no real waiting."""

from __future__ import annotations

import asyncio
import time

import pytest

from turinglab.games.clock import REAL_CLOCK, SIMULATED_EPOCH, PausableClock, SimulatedClock


async def test_sleepers_wake_in_deadline_order_without_waiting() -> None:
    clock = SimulatedClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.now() - SIMULATED_EPOCH))

    start = time.perf_counter()
    await asyncio.gather(sleeper("c", 300), sleeper("a", 3), sleeper("b", 40), sleeper("a2", 3))
    assert woke == [("a", 3), ("a2", 3), ("b", 40), ("c", 300)]
    assert time.perf_counter() - start < 2.0  # a real sleeper would wait 300 s (3 s for "a")


async def test_cancelled_sleeper_does_not_move_time() -> None:
    clock = SimulatedClock(start=0)
    task = asyncio.ensure_future(clock.sleep(1000))
    await asyncio.sleep(0)
    task.cancel()
    await clock.sleep(5)
    assert clock.now() == 5


async def test_time_stands_still_while_held() -> None:
    clock = SimulatedClock(start=0)
    seen: list[float] = []

    async def slow_work() -> None:
        async with clock.hold():
            await asyncio.sleep(0.05)  # real work outside the clock (a model call)
            seen.append(clock.now())

    async def timer() -> None:
        await clock.sleep(10)
        seen.append(clock.now())

    await asyncio.gather(timer(), slow_work())
    assert seen == [0, 10]


async def test_real_clock_sleeps_for_real() -> None:
    start = time.perf_counter()
    await REAL_CLOCK.sleep(0.02)
    async with REAL_CLOCK.hold():
        pass
    assert time.perf_counter() - start >= 0.015 and abs(REAL_CLOCK.now() - time.time()) < 1


async def test_a_pausable_clock_carries_over_time_it_stood_still_elsewhere() -> None:
    """A game taken over (arena/core/takeover.py): the seconds its clock stood still under its
    first owner still count, so its time left is the same; later pauses add to them."""
    base = SimulatedClock()
    clock = PausableClock(base)
    clock.carry_over(40.0)
    assert clock.now() == base.now() - 40.0 and clock.stopped_for == 40.0
    with pytest.raises(ValueError, match="negative"):
        clock.carry_over(-1.0)
    clock.pause()
    base_before = base.now()
    await base.sleep(5.0)
    clock.resume()
    assert clock.stopped_for == 45.0 and clock.now() == base_before - 40.0
