"""OpenAIChatAgent against a real local HTTP server: replies, sent fields and error mapping."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import time
from collections.abc import AsyncIterator, Callable
from email.utils import formatdate
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.errors import FatalError, RateLimited, TransientError
from turinglab.agents.openai_compat import OpenAIChatAgent, _retry_after
from turinglab.testing.fake_openai import FakeOpenAIServer, reply_text, start_fake_server_process

HISTORY = [ChatMessage("user", "Hello there. Who are you?")]
CTX = CallContext(seed=1)


def make_agent(base_url: str, **kwargs: Any) -> OpenAIChatAgent:
    kwargs.setdefault("name", "tester")
    kwargs.setdefault("model", "fake-model-1")
    return OpenAIChatAgent(base_url=base_url, **kwargs)


@pytest.fixture
async def agent_for() -> AsyncIterator[Callable[..., OpenAIChatAgent]]:
    """Builds agents and closes them all after the test."""
    made: list[OpenAIChatAgent] = []

    def build(base_url: str, **kwargs: Any) -> OpenAIChatAgent:
        made.append(make_agent(base_url, **kwargs))
        return made[-1]

    yield build
    for agent in made:
        await agent.aclose()


async def get_json(url: str) -> Any:
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        return await resp.json()


def root(base_url: str) -> str:
    return base_url.removesuffix("/v1")


# --- success path -------------------------------------------------------------------------------


async def test_success_reply_and_route(fake_server: FakeOpenAIServer, agent_for) -> None:
    assert fake_server.base_url is not None
    agent = agent_for(fake_server.base_url, api_key="sk-test", display_name="Fake One")
    assert isinstance(agent, Agent)

    reply = await agent.reply(HISTORY, CTX)

    assert reply.text == reply_text([{"role": "user", "content": HISTORY[0].content}], 2)
    assert reply.text.startswith("Question 1:")
    assert reply.route.backend == "openai"
    assert reply.route.model == "fake-model-1"  # echoed by the server
    assert reply.route.provider == "fake"
    assert reply.route.base_url == fake_server.base_url
    assert reply.route.display_name == "Fake One"
    assert reply.tokens_in == len(HISTORY[0].content) // 4
    assert reply.tokens_out is not None and reply.tokens_out > 0
    assert reply.latency_s is not None and reply.latency_s > 0
    assert reply.extra["finish_reason"] == "stop"
    assert reply.extra["id"].startswith("chatcmpl-fake")


def test_endpoint_names_base_url_key_and_model() -> None:
    keyed = make_agent("http://h/v1/", api_key="sk-abc")
    digest = hashlib.sha256(b"sk-abc").hexdigest()[:8]
    assert keyed.endpoint == f"http://h/v1#{digest}#fake-model-1"
    assert make_agent("http://h/v1").endpoint == "http://h/v1#nokey#fake-model-1"
    # Limits and 429 backoff are per model: two models behind one router do not share them.
    assert make_agent("http://h/v1", model="x").endpoint != make_agent("http://h/v1").endpoint


async def test_params_are_sent_only_when_set(fake_server: FakeOpenAIServer, agent_for) -> None:
    assert fake_server.base_url is not None
    await agent_for(fake_server.base_url).reply(HISTORY, CTX)
    sent = await get_json(root(fake_server.base_url) + "/_last_request")
    assert set(sent) == {"model", "messages"}
    assert sent["messages"] == [{"role": "user", "content": HISTORY[0].content}]

    params = {"temperature": 0.7, "max_tokens": 64, "provider": {"order": ["x"]}}
    await agent_for(fake_server.base_url, params=params).reply(HISTORY, CTX)
    sent = await get_json(root(fake_server.base_url) + "/_last_request")
    assert sent["temperature"] == 0.7
    assert sent["max_tokens"] == 64
    assert sent["provider"] == {"order": ["x"]}
    assert "stop" not in sent


async def test_stop_sequences_are_sent(fake_server: FakeOpenAIServer, agent_for) -> None:
    assert fake_server.base_url is not None
    agent = agent_for(fake_server.base_url)
    await agent.reply(HISTORY, CallContext(seed=1, stop=("\nJudge:", "</answer>")))
    assert fake_server.last_request is not None
    assert fake_server.last_request["stop"] == ["\nJudge:", "</answer>"]


async def test_distinguisher_decides_after_answer_after_turns(
    fake_server: FakeOpenAIServer, agent_for
) -> None:
    assert fake_server.base_url is not None
    agent = agent_for(fake_server.base_url)
    history = [ChatMessage("user", "Find out who it is. End with <answer>1</answer> or 0.")]
    for _ in range(2):
        reply = await agent.reply(history, CTX)
        assert "<answer>" not in reply.text
        history += [ChatMessage("assistant", reply.text), ChatMessage("user", "Sure, ask on.")]
    final = await agent.reply(history, CTX)
    assert final.text in (
        "I have decided. <answer>0</answer>",
        "I have decided. <answer>1</answer>",
    )
    assert (await agent.reply(history, CTX)).text == final.text  # stable, not hash()-seeded


# --- error mapping ------------------------------------------------------------------------------


async def test_429_with_retry_after_is_rate_limited(fake_server, agent_for) -> None:
    fake_server.configure(faults=[{"kind": "rate_limit", "retry_after": 3}])
    with pytest.raises(RateLimited) as err:
        await agent_for(fake_server.base_url).reply(HISTORY, CTX)
    assert err.value.retry_after == 3
    assert err.value.status == 429
    assert "tester" in str(err.value) and "429" in str(err.value)


async def test_500_is_transient(fake_server, agent_for) -> None:
    fake_server.configure(faults=[{"kind": "server_error"}])
    with pytest.raises(TransientError) as err:
        await agent_for(fake_server.base_url).reply(HISTORY, CTX)
    assert err.value.status == 500
    assert "tester" in str(err.value) and "fake server error" in str(err.value)


@pytest.mark.parametrize("kind", ["malformed", "truncated"])
async def test_bad_bodies_are_transient(fake_server, agent_for, kind: str) -> None:
    fake_server.configure(faults=[{"kind": kind}])
    with pytest.raises(TransientError, match="malformed response"):
        await agent_for(fake_server.base_url).reply(HISTORY, CTX)


@pytest.mark.parametrize(
    ("code", "error"), [(429, RateLimited), (502, TransientError), (400, FatalError)]
)
async def test_error_in_200_body_is_classified_by_its_code(
    fake_server, agent_for, code: int, error: type[Exception]
) -> None:
    fake_server.configure(faults=[{"kind": "error_body", "status": code}])
    with pytest.raises(error, match=f"HTTP {code}"):
        await agent_for(fake_server.base_url).reply(HISTORY, CTX)


async def test_hang_past_client_timeout_is_transient(fake_server, agent_for) -> None:
    fake_server.configure(faults=[{"kind": "timeout"}])
    start = time.perf_counter()
    with pytest.raises(TransientError, match="tester"):
        await agent_for(fake_server.base_url, timeout_s=0.5).reply(HISTORY, CTX)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("status", [400, 401, 404])
async def test_client_errors_are_fatal_with_the_server_message(
    fake_server, agent_for, status: int
) -> None:
    fake_server.configure(faults=[{"kind": "bad_request", "status": status}])
    with pytest.raises(FatalError) as err:
        await agent_for(fake_server.base_url).reply(HISTORY, CTX)
    assert err.value.status == status
    assert f"HTTP {status}" in str(err.value) and "fake bad request" in str(err.value)


async def test_connection_refused_is_transient(agent_for) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(TransientError, match="tester"):
        await agent_for(f"http://127.0.0.1:{port}/v1").reply(HISTORY, CTX)


def test_retry_after_header_forms() -> None:
    assert _retry_after(CIMultiDict({"Retry-After": "7"})) == 7
    in_30s = formatdate(time.time() + 30, usegmt=True)
    assert 25 < (_retry_after(CIMultiDict({"Retry-After": in_30s})) or 0) <= 30
    assert _retry_after(CIMultiDict({"retry-after-ms": "1500"})) == 1.5
    assert _retry_after(CIMultiDict({"x-ratelimit-reset-requests": "1m30s"})) == 90
    assert _retry_after(CIMultiDict({"x-ratelimit-reset-requests": "20ms"})) == 0.02
    assert _retry_after(CIMultiDict({"x-ratelimit-reset-requests": "soon"})) is None
    assert _retry_after(CIMultiDict()) is None


# --- what other servers send --------------------------------------------------------------------


@pytest.fixture
async def canned() -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """A server answering every chat request with `box["body"]` (a dict), as-is."""
    box: dict[str, Any] = {}

    async def handler(request: web.Request) -> web.Response:
        return web.json_response(box["body"])

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1", box
    await runner.cleanup()


async def test_minimal_server_reply_is_accepted(canned, agent_for) -> None:
    base_url, box = canned  # llama.cpp-like: no usage, model, provider or id
    box["body"] = {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}
    reply = await agent_for(base_url).reply(HISTORY, CTX)
    assert reply.text == "hi"
    assert reply.route.model == "fake-model-1" and reply.route.provider is None
    assert reply.tokens_in is None and reply.tokens_out is None
    assert reply.extra == {"finish_reason": None, "id": None}


async def test_null_content_is_an_empty_reply(canned, agent_for) -> None:
    base_url, box = canned
    message = {"role": "assistant", "content": None, "reasoning": "thinking..."}
    box["body"] = {"choices": [{"message": message, "finish_reason": "length"}]}
    reply = await agent_for(base_url).reply(HISTORY, CTX)
    assert reply.text == ""
    assert reply.extra["finish_reason"] == "length"


@pytest.mark.parametrize("body", [{"choices": []}, {"choices": [{"index": 0}]}, [1, 2]])
async def test_missing_choices_or_message_is_transient(canned, agent_for, body: Any) -> None:
    base_url, box = canned
    box["body"] = body
    with pytest.raises(TransientError, match="malformed response"):
        await agent_for(base_url).reply(HISTORY, CTX)


# --- the fake server itself ---------------------------------------------------------------------


async def test_fake_server_serves_requests_concurrently(fake_server, agent_for) -> None:
    fake_server.configure(latency_s=0.2)
    agent = agent_for(fake_server.base_url)
    start = time.perf_counter()
    replies = await asyncio.gather(*(agent.reply(HISTORY, CTX) for _ in range(300)))
    elapsed = time.perf_counter() - start
    assert len(replies) == 300
    assert elapsed < 10, f"300 requests of 0.2 s took {elapsed:.1f} s: not concurrent"
    stats = await get_json(root(fake_server.base_url) + "/_stats")
    assert stats["requests"] == stats["completions"] == 300
    assert stats["by_status"] == {"200": 300}
    assert stats["max_in_flight"] > 100 and stats["in_flight"] == 0


async def test_probabilistic_faults_are_deterministic_given_seed(fake_server, agent_for) -> None:
    agent = agent_for(fake_server.base_url)

    async def pattern() -> list[bool]:
        fake_server.configure(seed=7, faults=[{"kind": "server_error", "probability": 0.5}])
        outcomes = []
        for _ in range(20):
            try:
                await agent.reply(HISTORY, CTX)
                outcomes.append(True)
            except TransientError:
                outcomes.append(False)
        return outcomes

    first = await pattern()
    assert first == await pattern()
    assert 0 < sum(first) < 20


async def test_fault_triggers_first_and_every(fake_server, agent_for) -> None:
    agent = agent_for(fake_server.base_url)
    fake_server.configure(faults=[{"kind": "rate_limit", "first": 2}])
    for _ in range(2):
        with pytest.raises(RateLimited):
            await agent.reply(HISTORY, CTX)
    await agent.reply(HISTORY, CTX)

    fake_server.configure(faults=[{"kind": "server_error", "every": 3}])
    outcomes = []
    for _ in range(6):
        try:
            await agent.reply(HISTORY, CTX)
            outcomes.append("ok")
        except TransientError:
            outcomes.append("err")
    assert outcomes == ["ok", "ok", "err", "ok", "ok", "err"]


async def test_control_over_http(fake_server) -> None:
    url = root(fake_server.base_url)
    async with aiohttp.ClientSession() as session:
        async with session.post(url + "/_control", json={"latency_s": 0.01}) as resp:
            assert resp.status == 200
            assert (await resp.json())["latency_s"] == 0.01
        async with session.post(url + "/_control", json={"nonsense": 1}) as resp:
            assert resp.status == 400
        async with session.get(url + "/v1/models") as resp:
            assert (await resp.json())["data"][0]["id"] == "fake-model"
        async with session.post(url + "/_reset") as resp:
            assert (await resp.json())["requests"] == 0
    assert fake_server.behaviour.latency_s == 0.01


@pytest.mark.server
async def test_against_fake_server_process(agent_for) -> None:
    with start_fake_server_process(
        latency_s=0.05, faults=[{"kind": "rate_limit", "first": 1}]
    ) as srv:
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.base_url.endswith("/v1")
        agent = agent_for(srv.base_url)
        with pytest.raises(RateLimited):
            await agent.reply(HISTORY, CTX)
        assert (await agent.reply(HISTORY, CTX)).text.startswith("Question 1:")
        srv.configure(faults=[{"kind": "server_error"}])
        with pytest.raises(TransientError):
            await agent.reply(HISTORY, CTX)
        assert srv.stats()["by_status"] == {"429": 1, "200": 1, "500": 1}
    assert srv.proc.returncode is not None
