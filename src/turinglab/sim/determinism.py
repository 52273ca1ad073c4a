"""Everything a run could take from outside, given by its seed instead: the wall clock and the
monotonic clock (read from the virtual loop), random ids (`secrets`, `uuid4`) and the `random`
module's shared generator. Names bound at import (`from time import monotonic`) are patched in
every loaded module too, and all of it is put back afterwards.

Set iteration over strings also varies between interpreters (hash randomisation): the command
line re-runs itself with PYTHONHASHSEED fixed (sim/cli.py) so a seed replays exactly.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from turinglab.sim.virtual_loop import VirtualLoop

EPOCH = 1_800_000_000.0  # the virtual wall clock's start (2027-01-15): any fixed moment


# Where the originals were found by the last full scan, and how many modules it covered: a
# scan reads every loaded module's names (a twentieth of a schedule), and between schedules
# only an import can bind a new one.
_found: list[tuple[Any, str, int]] = []
_scanned = 0


def _bindings(originals: dict[str, Any]) -> list[tuple[Any, str, int]]:
    """(module, name, id of the original) of every module attribute bound to one of them."""
    global _scanned
    if len(sys.modules) != _scanned:
        ids = {id(v) for v in originals.values()}
        _found.clear()
        for module in list(sys.modules.values()):
            space = getattr(module, "__dict__", None)
            if isinstance(space, dict):
                _found.extend((module, k, id(v)) for k, v in list(space.items()) if id(v) in ids)
        _scanned = len(sys.modules)
    return _found


def _patched(originals: dict[str, Any], replacements: dict[str, Any]) -> list[tuple[Any, str, Any]]:
    """(owner, name, original) of every module attribute bound to one of `originals`."""
    undo: list[tuple[Any, str, Any]] = []
    by_id = {id(v): k for k, v in originals.items()}
    for module, name, ident in _bindings(originals):
        key = by_id.get(ident)
        value = getattr(module, name, None)
        if key is not None and value is originals[key]:
            undo.append((module, name, value))
            setattr(module, name, replacements[key])
    return undo


@contextlib.contextmanager
def seeded(seed: int, loop: VirtualLoop) -> Iterator[random.Random]:
    """Within: the clocks are the loop's, ids and `random` come from `seed`. Yields the run's
    own generator for the simulation's choices (delays, faults, people)."""
    ids = random.Random(f"{seed}:ids")
    run = random.Random(f"{seed}:run")

    def token_bytes(n: int | None = None) -> bytes:
        return ids.randbytes(32 if n is None else n)

    def token_hex(n: int | None = None) -> str:
        return token_bytes(n).hex()

    def token_urlsafe(n: int | None = None) -> str:
        import base64

        return base64.urlsafe_b64encode(token_bytes(n)).rstrip(b"=").decode()

    def uuid4() -> uuid.UUID:
        return uuid.UUID(bytes=ids.randbytes(16), version=4)

    clocks: dict[str, Callable[..., Any]] = {
        "time": lambda: EPOCH + loop.time(),
        "time_ns": lambda: int((EPOCH + loop.time()) * 1e9),
        "monotonic": loop.time,
        "monotonic_ns": lambda: int(loop.time() * 1e9),
        "perf_counter": loop.time,
        "token_hex": token_hex,
        "token_bytes": token_bytes,
        "token_urlsafe": token_urlsafe,
        "uuid4": uuid4,
    }
    originals = {
        "time": time.time,
        "time_ns": time.time_ns,
        "monotonic": time.monotonic,
        "monotonic_ns": time.monotonic_ns,
        "perf_counter": time.perf_counter,
        "token_hex": secrets.token_hex,
        "token_bytes": secrets.token_bytes,
        "token_urlsafe": secrets.token_urlsafe,
        "uuid4": uuid.uuid4,
    }
    state = random.getstate()
    random.seed(f"{seed}:random")
    undo = _patched(originals, clocks)
    try:
        yield run
    finally:
        for owner, name, value in reversed(undo):
            setattr(owner, name, value)
        random.setstate(state)
