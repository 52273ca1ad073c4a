"""An asyncio event loop whose clock is virtual: when nothing is ready to run, time jumps to
the next timer instead of waiting for it, so a 10-minute game takes milliseconds, and a run
depends on nothing but what it was given (no wall clock, no threads).

Work that asyncio would hand to a thread (`asyncio.to_thread`, `run_in_executor`: the store's
reads) runs at once on the loop: in a real process it runs beside the loop, here it takes no
virtual time, which is one schedule of the many the real one allows.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

# Whose work a task is (a simulated process's name): inherited by every task it starts.
WHOSE: contextvars.ContextVar[str] = contextvars.ContextVar("sim_whose", default="")


class Stuck(Exception):
    """Nothing is ready and no timer is set: the run can never go on."""


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self._virtual = 0.0
        self.steps = 0  # callbacks run (a measure of the schedule's length)
        self._whose: weakref.WeakKeyDictionary[asyncio.Task[Any], str] = weakref.WeakKeyDictionary()

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

    def tasks_of(self, whose: str) -> list[asyncio.Task[Any]]:
        """The unfinished tasks of `whose` (started by its work, or by theirs)."""
        return [t for t, w in list(self._whose.items()) if w == whose and not t.done()]

    def time(self) -> float:
        return self._virtual

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
        self.steps += len(ready)
        super()._run_once()  # type: ignore[misc]

    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., Any], *args: Any
    ) -> asyncio.Future[Any]:
        future = self.create_future()
        try:
            future.set_result(func(*args))
        except BaseException as err:
            future.set_exception(err)
        return future
