"""An asyncio event loop whose clock is virtual: when nothing is ready to run, time jumps to
the next timer instead of waiting for it, so a 10-minute game takes milliseconds, and a run
depends on nothing but what it was given (no wall clock, no threads).

A process can be paused (SIGSTOP, then SIGCONT): while it is, none of its callbacks run (its
tasks' steps, its timers, the wake-ups of what it awaits); they are held, in order, and run
when it resumes, late, as a stopped process's do. What is already on the wire to or from it
belongs to nobody (sim/asgi_net.py) and still arrives; what others send it waits for it.

Work that asyncio would hand to a thread (`asyncio.to_thread`, `run_in_executor`: the store's
reads) runs at once on the loop: in a real process it runs beside the loop, here it takes no
virtual time, which is one schedule of the many the real one allows — unless `executor_delay`
is set (the `postgres` fault: sim/store_faults.py), when it runs that long later, as the work
of whoever handed it over (held while they are paused).
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import weakref
from asyncio import base_events
from collections.abc import Callable, Coroutine
from typing import Any

_MIN_SCHEDULED = base_events._MIN_SCHEDULED_TIMER_HANDLES  # type: ignore[attr-defined]
_MIN_CANCELLED = base_events._MIN_CANCELLED_TIMER_HANDLES_FRACTION  # type: ignore[attr-defined]

# Whose work a task is (a simulated process's name): inherited by every task it starts.
WHOSE: contextvars.ContextVar[str] = contextvars.ContextVar("sim_whose", default="")


class Stuck(Exception):
    """Nothing is ready and no timer is set: the run can never go on."""


class _Timer(asyncio.TimerHandle):
    """A timer that, due at the same instant as another, runs after those set before it: a
    heap alone orders ties by its own history, and two processes' heartbeats started together
    fall due together for the whole run."""

    __slots__ = ("_key",)

    def __init__(self, order: int, when: float, *args: Any) -> None:
        super().__init__(when, *args)
        self._key = (when, order)  # compared as a tuple: the heap's hottest call

    def __lt__(self, other: Any) -> bool:
        return bool(self._key < other._key)


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._virtual = 0.0
        self.steps = 0  # callbacks run (a measure of the schedule's length)
        self._whose: weakref.WeakKeyDictionary[asyncio.Task[Any], str] = weakref.WeakKeyDictionary()
        self._paused: set[str] = set()
        self._held: list[asyncio.Handle] = []  # paused processes' callbacks, in order
        self._timers_set = 0
        self.executor_delay: Callable[[], float] | None = None

    def create_task(  # type: ignore[override]
        self,
        coro: Coroutine[Any, Any, Any],
        *,
        name: str | None = None,
        context: contextvars.Context | None = None,
    ) -> asyncio.Task[Any]:
        task = super().create_task(coro, name=name, context=context)
        self._whose[task] = context.run(WHOSE.get) if context is not None else WHOSE.get()
        return task

    def call_at(  # type: ignore[override]
        self, when: float, callback: Callable[..., Any], *args: Any, context: Any = None
    ) -> asyncio.TimerHandle:
        self._check_closed()  # type: ignore[attr-defined]
        self._timers_set += 1
        timer = _Timer(self._timers_set, when, callback, args, self, context)
        heapq.heappush(self._scheduled, timer)  # type: ignore[attr-defined]
        timer._scheduled = True  # type: ignore[attr-defined]
        return timer

    def tasks_of(self, whose: str) -> list[asyncio.Task[Any]]:
        """The unfinished tasks of `whose` (started by its work, or by theirs)."""
        return [t for t, w in list(self._whose.items()) if w == whose and not t.done()]

    def time(self) -> float:
        return self._virtual

    def pause(self, whose: str) -> None:
        """SIGSTOP: nothing of `whose` runs until `resume`."""
        self._paused.add(whose)

    def resume(self, whose: str) -> None:
        """SIGCONT: its held callbacks run next, in the order they were due."""
        self._paused.discard(whose)
        mine = [h for h in self._held if _whose(h) == whose]
        self._held = [h for h in self._held if _whose(h) != whose]
        self._ready.extend(mine)  # type: ignore[attr-defined]

    def _hold_paused(self) -> None:
        """Move the timers due now into the ready queue (as asyncio's _run_once would), then
        hold back the ready callbacks of paused processes."""
        scheduled: list[Any] = self._scheduled  # type: ignore[attr-defined]
        ready = self._ready  # type: ignore[attr-defined]
        end = self.time() + self._clock_resolution  # type: ignore[attr-defined]
        while scheduled and scheduled[0]._when < end:
            handle = heapq.heappop(scheduled)
            handle._scheduled = False
            ready.append(handle)
        runnable = [h for h in ready if _whose(h) not in self._paused]
        self._held.extend(h for h in ready if _whose(h) in self._paused)
        ready.clear()
        ready.extend(runnable)

    def _run_once(self) -> None:
        scheduled: list[Any] = self._scheduled  # type: ignore[attr-defined]
        while scheduled and scheduled[0]._cancelled:  # lazily dropped, as asyncio does
            handle = heapq.heappop(scheduled)
            handle._scheduled = False
            self._timer_cancelled_count -= 1  # type: ignore[attr-defined]
        ready = self._ready  # type: ignore[attr-defined]
        if not ready:
            if not scheduled:
                raise Stuck("nothing ready and no timer set")
            self._virtual = max(self._virtual, scheduled[0]._when)
        if self._paused:
            self._hold_paused()
            if not ready:  # all that was due is held: the next round goes on to the next timer
                return
        self.steps += len(ready)
        if self._debug or len(self._selector.get_map()) > 1:  # type: ignore[attr-defined]
            super()._run_once()  # type: ignore[misc]
            return
        self._run_ready()

    def _run_ready(self) -> None:
        """asyncio's _run_once without its poll: nothing but the loop's own wake-up pipe is
        registered and nothing writes to it from another thread (there are none), so the poll
        finds nothing. The same timers are dropped, made ready and run, in the same order."""
        loop: Any = self  # asyncio's private state
        scheduled: list[Any] = loop._scheduled
        count = len(scheduled)
        if count > _MIN_SCHEDULED and loop._timer_cancelled_count / count > _MIN_CANCELLED:
            kept = []
            for handle in scheduled:
                if handle._cancelled:
                    handle._scheduled = False
                else:
                    kept.append(handle)
            heapq.heapify(kept)
            loop._scheduled = scheduled = kept
            loop._timer_cancelled_count = 0
        else:
            while scheduled and scheduled[0]._cancelled:
                loop._timer_cancelled_count -= 1
                handle = heapq.heappop(scheduled)
                handle._scheduled = False
        ready = loop._ready
        end = self._virtual + loop._clock_resolution
        while scheduled and scheduled[0]._when < end:
            handle = heapq.heappop(scheduled)
            handle._scheduled = False
            ready.append(handle)
        popleft = ready.popleft
        for _ in range(len(ready)):
            handle = popleft()
            if not handle._cancelled:
                handle._run()
        handle = None  # (asyncio's: no cycle through an exception's frame)

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        future = self.create_future()

        def run() -> None:
            if future.cancelled():
                return
            try:
                future.set_result(func(*args))
            except BaseException as err:
                future.set_exception(err)

        if self.executor_delay is None:
            run()
        else:
            self.call_later(self.executor_delay(), run)
        return future


def _whose(handle: asyncio.Handle) -> str | None:
    """The process a callback works for (its context's mark)."""
    context: contextvars.Context | None = getattr(handle, "_context", None)
    return context.get(WHOSE) if context is not None else None
