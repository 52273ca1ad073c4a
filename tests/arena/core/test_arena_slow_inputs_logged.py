"""A person's connect or input still being handled after a while is logged, once, and how long
it took when it ends: their socket is read only between inputs, so one stuck there hears
nothing, and the log is where an operator (or a benchmark's trace) finds it."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from turinglab.arena.core import metrics
from turinglab.arena.core.metrics import said_if_slow

log = logging.getLogger("test-slow")


async def test_a_slow_input_is_logged_while_it_runs_and_when_it_ends(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(metrics, "SLOW_S", 0.05)
    with caplog.at_level(logging.WARNING, logger="test-slow"):
        with said_if_slow(log, "input-slow", participant="p-1", frame="message"):
            await asyncio.sleep(0.15)
            events = [json.loads(r.getMessage())["event"] for r in caplog.records]
            assert events == ["input-slow"]  # said while still running
        with said_if_slow(log, "input-slow", participant="p-2", frame="message"):
            pass  # quick: nothing said
        await asyncio.sleep(0.1)
    lines = [json.loads(r.getMessage()) for r in caplog.records]
    assert [(x["event"], x["participant"]) for x in lines] == [
        ("input-slow", "p-1"),
        ("input-slow-done", "p-1"),
    ]
    assert lines[1]["seconds"] >= 0.15
