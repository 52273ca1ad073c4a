"""The simulator's pause (SIGSTOP, then SIGCONT): a paused process runs nothing, its timers and
wake-ups are held and run late when it resumes, others run on, and what is on the wire still
arrives (a frame it wrote before the pause; one sent to it waits for it); a schedule with a
pause long enough has its games taken over, and replays exactly."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import random
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from turinglab.sim.asgi_net import Network
from turinglab.sim.run import schedule
from turinglab.sim.virtual_loop import WHOSE, VirtualLoop


def _as(whose: str, loop: VirtualLoop, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    context = contextvars.copy_context()
    context.run(WHOSE.set, whose)
    return loop.create_task(coro, context=context)


def test_a_paused_process_runs_nothing_until_it_resumes_and_others_run_on() -> None:
    loop = VirtualLoop()
    ticks: dict[str, list[float]] = {"a": [], "b": []}
    wire: list[float] = []

    async def ticking(whose: str) -> None:
        for _ in range(10):
            await asyncio.sleep(1.0)
            ticks[whose].append(loop.time())

    async def main() -> None:
        a, b = _as("a", loop, ticking("a")), _as("b", loop, ticking("b"))
        # Sent by a just before its pause: on the wire, it arrives on time.
        _as("a", loop, _send_at(loop, 2.4, lambda: wire.append(loop.time())))
        loop.call_later(2.5, loop.pause, "a")
        loop.call_later(7.5, loop.resume, "a")
        await asyncio.gather(a, b)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert ticks["b"] == [float(k) for k in range(1, 11)]
    # a's sleep due at 3 s is held until 7.5 s, then it goes on from there.
    assert ticks["a"][:3] == [1.0, 2.0, 7.5] and ticks["a"][3] == pytest.approx(8.5)
    assert wire == [pytest.approx(3.0)]


async def _send_at(loop: VirtualLoop, at: float, deliver: Callable[[], None]) -> None:
    await asyncio.sleep(at - loop.time())
    loop.call_later(0.6, deliver, context=contextvars.Context())


def test_a_frame_on_the_wire_arrives_while_its_sender_is_paused() -> None:
    loop = VirtualLoop()

    async def echo(scope: Any, receive: Any, send: Any) -> None:
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        while (message := await receive())["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": message["text"]})
            if message["text"] == "pause now":
                loop.pause("a")  # SIGSTOP just after writing its answer

    async def main() -> tuple[str, float, str, float]:
        net = Network(random.Random(1), lambda whose, coro: _as(whose, loop, coro), (0.01, 0.01))
        net.apps["a"] = echo
        sock = await net.ws_connect("http://a/ws")
        await sock.send_str("pause now")
        first = await asyncio.wait_for(sock.__anext__(), 1.0)
        first_at = loop.time()
        await sock.send_str("again")  # waits for the process
        loop.call_later(5.0, loop.resume, "a")
        second = await sock.__anext__()
        second_at = loop.time()
        assert sock.server_task is not None
        sock.server_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sock.server_task
        return first.data, first_at, second.data, second_at

    try:
        first, first_at, second, second_at = loop.run_until_complete(main())
    finally:
        loop.close()
    assert (first, second) == ("pause now", "again")
    assert first_at < 0.1 and second_at > 5.0


@pytest.mark.slow
def test_a_paused_owner_is_taken_over_and_the_schedule_replays() -> None:
    first, again = schedule(2, 2, frozenset({"pause"})), schedule(2, 2, frozenset({"pause"}))
    stopped, _, for_s = first["plan"]["pause"]
    assert for_s > 10.0  # past the takeover's 10 s
    trace = "\n".join(first["trace"])
    assert f"{stopped} paused" in trace and f"{stopped} resumed" in trace
    assert '"event": "takeover"' in trace
    assert first["digest"] == again["digest"]


# Pause schedules that break a promise without `ClusterRoutes._give_up_if_taken`, each from a
# process stopped past its TTL whose games were taken over, woken before its heartbeat found
# out: a re-sent verdict acknowledged by the woken process's copy of the game, never reaching
# the new owner (3, 22, 71). Found on 2, 3, 5 and 43 (there also: the new owner's snapshot
# dropped as stale, the page shown the lobby in the verdict phase); since the heartbeat's
# cadence changed the schedules, 3, 22 and 71 are the seeds of 1-200 that break without it.
PAUSE_SEEDS = (3, 22, 71)


@pytest.mark.parametrize("seed", PAUSE_SEEDS)
def test_a_process_woken_after_its_games_were_taken_over_keeps_every_promise(seed: int) -> None:
    result = schedule(seed, 2, frozenset({"pause"}))
    assert result["plan"]["pause"] is not None and result["plan"]["pause"][2] > 10.0
    assert '"event": "takeover"' in "\n".join(result["trace"])
    assert result["violations"] == []


@pytest.mark.parametrize("seed", (17, 22))
def test_a_person_seated_while_the_process_that_queued_them_is_stopped_is_not_told_they_left(
    seed: int,
) -> None:
    """Queued on a process stopped moments later, seated by the other before the stopped one's
    heartbeat lapsed: their page, still open there, was counted gone from the start (nobody
    said it was there) and, woken, was told it had left."""
    result = schedule(seed, 2, frozenset({"pause"}))
    stopped, _, for_s = result["plan"]["pause"]
    trace = "\n".join(result["trace"])
    assert for_s > 12.0 and f"{stopped} resumed" in trace  # past the departure grace
    assert result["violations"] == []


# A person whose socket is on a process stopped past its TTL, their game owned by another: the
# owner found the stopped one dead and forgot that it held their socket, so once the grace had
# passed it ended the game as if they had left, and told them so on the page still open there
# (75, 114, 149). Woken, a process that registers again tells each owner again what it holds.
HOLDER_FORGOTTEN_SEEDS = (75, 114, 149)


@pytest.mark.parametrize("seed", HOLDER_FORGOTTEN_SEEDS)
def test_a_woken_process_tells_the_owners_again_whose_sockets_it_holds(seed: int) -> None:
    result = schedule(seed, 2, frozenset({"pause"}))
    assert result["plan"]["pause"] is not None and result["plan"]["pause"][2] > 10.0
    assert result["violations"] == []


def test_a_page_whose_reconnect_hung_on_the_stopped_owner_is_not_counted_gone() -> None:
    """Seed 156: a witness's socket dropped 2 s before their game's owner was stopped; the page
    reconnected to the stopped process, which accepted and never answered, gave it up after
    OPEN_MS and came back on the survivor 1 s after the takeover had ended the game "you left"
    (gone since the old owner's note, the grace passed). A note from just before the stop now
    leaves the page its backoff and a hung handshake (Takeover._carry_absence)."""
    result = schedule(156, 2, frozenset({"pause"}))
    assert result["plan"]["pause"] is not None and result["plan"]["pause"][2] > 10.0
    assert result["violations"] == []
