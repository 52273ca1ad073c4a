"""The page protocol's conformance suite: the vectors in tests/fixtures/page_protocol/ (frames
and events in; what the page takes, where it stands and what it sends out) run through the
page's own static/protocol.js under Node and through arena/page_protocol.py, which every
Python client (the tests' scripted people, `bench arena`'s people) uses. Each must meet every
expectation, and the two must agree on every step, so a client cannot behave unlike the page.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
from typing import Any

import pytest

from turinglab.arena.page_protocol import PageProtocol

ROOT = pathlib.Path(__file__).parent
VECTORS = ROOT / "fixtures" / "page_protocol"
NAMES = sorted(p.stem for p in VECTORS.glob("*.json"))


def _step(p: PageProtocol, s: dict[str, Any]) -> Any:
    if s["do"] == "frame":
        r = p.frame(s["f"], s["now"])
        return {"take": r.take, "sends": r.sends, "answered": r.answered, "notice": r.notice}
    if s["do"] == "input":
        return {"sends": p.input(s["frame"], s["now"], s["open"])}
    if s["do"] == "tick":
        beat = p.tick(s["now"], s["socket"])
        return {"dead": beat.dead, "sends": beat.sends}
    if s["do"] == "closed":
        return p.closed(s["code"], s["rand"])
    if s["do"] == "opened":
        return p.opened(s["now"])
    if s["do"] == "connecting":
        return p.connecting(s["now"])
    if s["do"] == "query":
        return p.query()
    if s["do"] == "sending":
        return p.sending(s["channel"])
    raise AssertionError(f"unknown step {s['do']}")


def python_trace(vector: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step's result and the state after it, checked against the vector's expectations."""
    p, trace = PageProtocol(), []
    for i, s in enumerate(json.loads(json.dumps(vector["steps"]))):
        got = json.loads(json.dumps(_step(p, s)))
        state = {"at": p.query(), "unanswered": list(p.unanswered)}
        where = f"{vector['name']} step {i} ({s['do']})"
        if isinstance(s.get("expect"), dict):
            for key, want in s["expect"].items():
                assert got[key] == want, f"{where}: {key} {got[key]!r} != {want!r}"
        elif "expect" in s:
            assert got == s["expect"], f"{where}: {got!r} != {s['expect']!r}"
        for key, want in s.get("state", {}).items():
            assert state[key] == want, f"{where}: {key} {state[key]!r} != {want!r}"
        trace.append({"result": got, "state": state})
    return trace


@pytest.fixture(scope="module")
def node_traces() -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (the page protocol's JS runs under it)")
    run = subprocess.run(
        [node, str(ROOT / "page_protocol" / "run.js"), str(VECTORS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    traces: dict[str, Any] = json.loads(run.stdout)
    return traces


def test_there_are_vectors() -> None:
    assert {"takeover_snapshot", "saving_resumed", "inputs", "heartbeat"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_python_clients_follow_the_page(name: str, node_traces: dict[str, Any]) -> None:
    vector = json.loads((VECTORS / f"{name}.json").read_text())
    assert python_trace(vector) == node_traces[name]
