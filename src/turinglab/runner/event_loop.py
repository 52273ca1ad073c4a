"""The event loop the runner plays on: uvloop when it is installed, asyncio's otherwise.

At hundreds of calls a second the loop itself (select, transports, callbacks) is a large share
of the runner's CPU; uvloop does the same work in C. It changes nothing else: signals, Ctrl-C
and cancellation behave as under `asyncio.run`.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_name() -> str:
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


def run_on_fast_loop(main: Coroutine[Any, Any, T]) -> T:
    if loop_name() == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
