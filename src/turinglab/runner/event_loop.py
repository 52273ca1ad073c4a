"""The event loop the runner plays on: uvloop when it is installed, asyncio's otherwise.

At hundreds of calls a second the loop itself (select, transports, callbacks) is a large share
of the runner's CPU; uvloop does the same work in C. It changes nothing else: signals, Ctrl-C
and cancellation behave as under `asyncio.run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_name() -> str:
    try:  # an import, not a spec lookup: a package that is listed but broken counts as absent
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run_on_fast_loop(main: Coroutine[Any, Any, T]) -> T:
    if loop_name() == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
