"""The page protocol's conformance suite: the vectors in tests/fixtures/page_protocol/ (frames
and events in; what the page takes, where it stands and what it sends out) run through the
page's own static/protocol.js under Node and through arena/core/page_protocol.py, which every
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

from turinglab.arena.core.page_protocol import PageProtocol

ROOT = pathlib.Path(__file__).parents[2]
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
        return {"dead": beat.dead, "late": beat.late, "sends": beat.sends}
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
    assert {"takeover_snapshot", "saving_resumed", "inputs", "heartbeat", "late"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_python_clients_follow_the_page(name: str, node_traces: dict[str, Any]) -> None:
    vector = json.loads((VECTORS / f"{name}.json").read_text())
    assert python_trace(vector) == node_traces[name]


# ---- the clients themselves -------------------------------------------------------------------
# Each Python client is driven through its own code (what it does with a frame, an input, a
# heartbeat), not just its PageProtocol: what it sends, takes and holds must be the page's at
# every step of every vector. Steps a client leaves to its protocol object (a reconnect's
# delay, a query) go to that object directly.


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Person:
    """A socket that keeps what the client sends."""

    def __init__(self) -> None:
        self.ws: object | None = object()
        self.sent: list[dict[str, Any]] = []

    async def send(self, **frame: Any) -> None:
        self.sent.append(frame)

    async def drop(self) -> None:
        self.ws = None


class _Socket:
    def __init__(self) -> None:
        self.closed = False
        self.sent: list[dict[str, Any]] = []

    async def send_str(self, data: str) -> None:
        self.sent.append(json.loads(data))

    async def close(self) -> None:
        self.closed = True


def _check(name: str, i: int, got: dict[str, Any], state: dict[str, Any], want: Any) -> None:
    got = json.loads(json.dumps(got))
    for key, value in got.items():
        assert value == want["result"][key], f"{name} step {i}: {key} {value!r}"
    assert state == want["state"], f"{name} step {i}: {state!r} != {want['state']!r}"


async def _talker_follows(vector: dict[str, Any], trace: list[Any]) -> None:
    from fault_fixtures import Talker

    clock, person = _Clock(), _Person()
    talker = Talker(person, "t", ["http://127.0.0.1:1"], clock=clock)  # type: ignore[arg-type]
    gave_up: list[float] = []

    async def reconnect() -> None:  # the socket given up: the client would open another
        gave_up.append(clock.now)

    talker._reconnect = reconnect  # type: ignore[method-assign]
    for i, s in enumerate(json.loads(json.dumps(vector["steps"]))):
        clock.now = s.get("now", clock.now)
        person.sent = []
        got: dict[str, Any] | None = None
        if s["do"] == "frame":
            got = {"take": await talker._accept(s["f"])}
        elif s["do"] == "input":
            person.ws = object() if s["open"] else None
            await talker._input(s["frame"])
            person.ws = object()
            got = {}
        elif s["do"] == "tick" and s["socket"] == "open":
            n = len(gave_up)
            talker._next_beat = clock.now
            await talker._beat()
            got = {"dead": len(gave_up) > n}
        else:
            _step(talker.page, s)
        if got is not None:
            got["sends"] = person.sent
        state = {"at": talker.page.query(), "unanswered": list(talker.page.unanswered)}
        _check(vector["name"], i, got or {}, state, trace[i])


async def _link_follows(vector: dict[str, Any], trace: list[Any], monkeypatch: Any) -> None:
    import asyncio
    import random

    from turinglab.bench import arena_link

    clock = _Clock()
    monkeypatch.setattr(arena_link, "_ms", clock)
    link = arena_link.Link(None, ["http://127.0.0.1:1"], "c", random.Random(0))  # type: ignore[arg-type]
    for i, s in enumerate(json.loads(json.dumps(vector["steps"]))):
        clock.now = s.get("now", clock.now)
        ws = _Socket()
        link.ws = ws  # type: ignore[assignment]
        got: dict[str, Any] | None = None
        if s["do"] == "frame":
            before = link.frames.qsize()
            link._arrived(s["f"])
            for _ in range(3):  # what it sends in answer goes on a task of its own
                await asyncio.sleep(0)
            got = {"take": link.frames.qsize() > before}
        elif s["do"] == "input":
            frame = dict(s["frame"])
            monkeypatch.setattr(arena_link.secrets, "token_hex", lambda _n, k=frame["id"]: k)
            if not s["open"]:
                ws.closed = True
            await link.send_input({k: v for k, v in frame.items() if k != "id"}, 0.0)
            got = {}
        elif s["do"] == "tick" and s["socket"] == "open":
            await link._beat()
            got = {"dead": ws.closed}
        else:
            _step(link.page, s)
        if got is not None:
            got["sends"] = [] if s["do"] == "input" and not s["open"] else ws.sent
        state = {"at": link.page.query(), "unanswered": list(link.page.unanswered)}
        _check(vector["name"], i, got or {}, state, trace[i])


@pytest.mark.parametrize("name", NAMES)
async def test_the_tests_talker_behaves_as_the_page(name: str, node_traces: dict[str, Any]) -> None:
    vector = json.loads((VECTORS / f"{name}.json").read_text())
    await _talker_follows(vector, node_traces[name])


@pytest.mark.parametrize("name", NAMES)
async def test_the_benchmark_s_link_behaves_as_the_page(
    name: str, node_traces: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    vector = json.loads((VECTORS / f"{name}.json").read_text())
    await _link_follows(vector, node_traces[name], monkeypatch)
