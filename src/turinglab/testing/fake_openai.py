"""A real local HTTP server speaking the chat-completions protocol, for tests and benchmarks.

Its replies are deterministic so that games driven by it terminate: a distinguisher (whose
instructions, the first user message, mention "<answer>") decides after `answer_after` of its
own messages; everyone else gets a short sentence. With `strict_roles` it refuses, as vLLM
does, messages whose roles do not alternate user/assistant. Latency is an asyncio.sleep, so
thousands of requests can wait at once, and faults (429, 5xx, hangs, bad bodies) can be
injected by rule.

    python -m turinglab.testing.fake_openai --port 0 --latency 1.0 --faults '[...]'

prints `READY http://127.0.0.1:PORT/v1` once listening. Behaviour can be changed at run time
with POST /_control; GET /_stats, POST /_reset and GET /_last_request help tests look inside.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from aiohttp import web

from turinglab.named_colours import dominant_colour

FaultKind = Literal[
    "rate_limit", "server_error", "timeout", "malformed", "truncated", "bad_request", "error_body"
]
FAULT_KINDS: frozenset[str] = frozenset(get_args(FaultKind))
_DEFAULT_STATUS = {"rate_limit": 429, "server_error": 500, "bad_request": 400, "error_body": 502}
HANG_S = 3600.0  # "timeout" faults outlast any client timeout; stop() cancels them

_LINES = (
    "what did you have for breakfast?",
    "which city would you most like to visit, and why?",
    "tell me about a book you enjoyed.",
    "what is the last thing that made you laugh?",
    "how would you describe the colour blue to someone who cannot see?",
    "what do you usually do on a rainy afternoon?",
    "if you could learn any skill overnight, what would it be?",
)


@dataclass
class FaultRule:
    """Inject `kind` when any trigger matches: the first `first` requests, every `every`-th
    request, or with `probability`. A rule with no trigger always fires. Requests are counted
    from the last behaviour change. `status` overrides the HTTP code (e.g. 401 for bad_request);
    "error_body" answers HTTP 200 with {"error": {"code": status}} as OpenRouter does."""

    kind: FaultKind
    probability: float | None = None
    every: int | None = None
    first: int | None = None
    retry_after: float | None = None
    status: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")

    def fires(self, seq: int, rng: random.Random) -> bool:
        if self.probability is None and self.every is None and self.first is None:
            return True
        if self.first is not None and seq <= self.first:
            return True
        if self.every and seq % self.every == 0:
            return True
        return self.probability is not None and rng.random() < self.probability


@dataclass
class FakeBehaviour:
    latency_s: float = 0.0
    latency_jitter_s: float = 0.0
    answer_after: int = 2
    seed: int = 0
    faults: list[FaultRule] = field(default_factory=list)
    # Reject (HTTP 400) messages whose roles do not alternate user/assistant after an optional
    # system message, as vLLM does with Gemma's or Mistral's chat template.
    strict_roles: bool = False
    # What GET /models lists (OpenAI-style entries, e.g. with OpenRouter's `pricing`); None:
    # the one "fake-model", as a one-model server (llama.cpp's) lists itself.
    models: list[dict[str, Any]] | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any], base: FakeBehaviour | None = None) -> FakeBehaviour:
        """`base` with the fields in `data` replaced; fault rules may be given as dicts."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown behaviour fields: {sorted(unknown)}")
        data = dict(data)
        if "faults" in data:
            data["faults"] = [
                r if isinstance(r, FaultRule) else FaultRule(**r) for r in data["faults"]
            ]
        return dataclasses.replace(base or cls(), **data)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class _Stats:
    requests: int = 0
    completions: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    by_status: dict[str, int] = field(default_factory=dict)

    def count(self, status: int) -> None:
        key = str(status)
        self.by_status[key] = self.by_status.get(key, 0) + 1


def image_parts(messages: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """(media type, byte count) of every image_url part, checked as a vision API would:
    content parts must be text or image_url, and an image a base64 data URL."""
    seen = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            url = (part.get("image_url") or {}).get("url") if kind == "image_url" else None
            head, _, payload = str(url).partition(",")
            if not (head.startswith("data:image/") and head.endswith(";base64")):
                raise ValueError(f"content part is not text or a base64 image: {str(part)[:80]}")
            seen.append((head[5:-7], len(base64.b64decode(payload, validate=True))))
    return seen


def image_colours(messages: list[dict[str, Any]]) -> list[str]:
    """The named colour nearest the mean pixel of every image_url part, in order: a stand-in
    for a vision model's colour-estimation answer (the shared rule of named_colours.py)."""
    out = []
    for m in messages:
        content = m.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                payload = str(part["image_url"]["url"]).partition(",")[2]
                out.append(dominant_colour(base64.b64decode(payload)))
    return out


def _asked(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message, whatever its parts."""
    last: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    content = last.get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def vision_reply(messages: list[dict[str, Any]], images: list[tuple[str, int]]) -> str:
    """What the stand-in vision model says about the images it was shown: the dominant colour
    when asked for it, three things when asked what it sees, a human-or-machine guess when
    asked to judge an answer (by the answer's length: a deterministic, learnable rule), and
    otherwise what arrived, so a test can tell the image reached the "model"."""
    asked = _asked(messages).lower()
    if "human or a machine" in asked:  # first: a judge's prompt quotes the task's question
        answer = asked.rpartition("answer:")[2]
        return "machine" if len(answer.split()) % 2 else "human"
    if "dominant color" in asked:
        return f"The dominant color is {image_colours(messages)[0]}."
    if "what do you see" in asked:
        return f"{image_colours(messages)[0]}, square, picture"
    return "I see " + ", ".join(f"an {t} image of {n} bytes" for t, n in images) + "."


def reply_text(messages: list[dict[str, Any]], answer_after: int) -> str:
    """The deterministic reply to a conversation (see the module docstring)."""
    images = image_parts(messages)
    if images:
        return vision_reply(messages, images)
    first_user = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    said = sum(1 for m in messages if m.get("role") == "assistant")
    if isinstance(first_user, str) and "<answer>" in first_user and said >= answer_after:
        digest = hashlib.sha256()
        for m in messages:
            digest.update(f"{m.get('role')}\0{m.get('content')}\0".encode())
        return f"I have decided. <answer>{digest.digest()[0] & 1}</answer>"
    n = len(messages)
    return f"Question {n}: {_LINES[n % len(_LINES)]}"


STRICT_ROLES_ERROR = "Conversation roles must alternate user/assistant/user/assistant/..."


def roles_problem(messages: list[dict[str, Any]]) -> str | None:
    """Why a strict chat template would refuse these messages, or None."""
    roles = [m.get("role") for m in messages]
    if roles and roles[0] == "system":
        roles = roles[1:]
    for i, role in enumerate(roles):
        if role != ("user" if i % 2 == 0 else "assistant"):
            return f"{STRICT_ROLES_ERROR} (message {i} is {role!r})"
    return None


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers=headers,
        content_type="application/json",
    )


def _error(status: int, message: str, **headers: str) -> web.Response:
    body = {"error": {"message": message, "type": "fake_error", "code": status}}
    return _json(body, status, headers or None)


class FakeOpenAIServer:
    """In-process server: `base_url = await server.start()`, then `await server.stop()`."""

    def __init__(self, behaviour: FakeBehaviour | None = None) -> None:
        self.behaviour = behaviour or FakeBehaviour()
        self.base_url: str | None = None
        self.last_request: dict[str, Any] | None = None
        self._rng = random.Random(self.behaviour.seed)
        self._seq = 0  # chat requests since the last behaviour change, for fault triggers
        self._stats = _Stats()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runner: web.AppRunner | None = None

    def configure(self, **changes: Any) -> FakeBehaviour:
        """Replace behaviour fields (as POST /_control does); restarts the RNG and counters."""
        self.behaviour = FakeBehaviour.from_dict(changes, self.behaviour)
        self._rng = random.Random(self.behaviour.seed)
        self._seq = 0
        return self.behaviour

    def stats(self) -> dict[str, Any]:
        return dataclasses.asdict(self._stats)

    def reset(self) -> None:
        self._stats = _Stats(in_flight=self._stats.in_flight)
        self.last_request = None
        self._seq = 0

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/_control", self._control)
        app.router.add_get("/_stats", self._get_stats)
        app.router.add_post("/_reset", self._reset)
        app.router.add_get("/_last_request", self._last_request)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        # access_log=None: logging each request would cost more CPU than serving it.
        self._runner = web.AppRunner(self.make_app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port, backlog=4096).start()
        bound_port = self._runner.addresses[0][1]
        self.base_url = f"http://{host}:{bound_port}/v1"
        return self.base_url

    async def stop(self) -> None:
        # Cancel sleeping handlers first, or shutdown would wait for them (hangs last an hour).
        for task in list(self._tasks):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self._stats.requests += 1
        self._stats.in_flight += 1
        self._stats.max_in_flight = max(self._stats.max_in_flight, self._stats.in_flight)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            response = await self._answer(request)
        finally:
            # self._stats, not a local: /_reset may have replaced it meanwhile.
            self._stats.in_flight -= 1
            if task is not None:
                self._tasks.discard(task)
        self._stats.count(response.status)
        return response

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "request body is not JSON")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return _error(400, "'messages' must be a list of objects")
        self.last_request = body
        try:
            image_parts(messages)
        except ValueError as err:
            return _error(400, str(err))

        behaviour, rng = self.behaviour, self._rng
        if behaviour.strict_roles:
            problem = roles_problem(messages)
            if problem is not None:
                return _error(400, problem)
        self._seq += 1
        fault = next((r for r in behaviour.faults if r.fires(self._seq, rng)), None)
        delay = behaviour.latency_s
        if behaviour.latency_jitter_s:
            delay += rng.random() * behaviour.latency_jitter_s
        if fault is not None and fault.kind == "timeout":
            delay = HANG_S
        if delay > 0:
            await asyncio.sleep(delay)

        if fault is not None:
            status = fault.status or _DEFAULT_STATUS.get(fault.kind, 200)
            if fault.kind == "rate_limit":
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
                return _error(status, "fake rate limit", **headers)
            if fault.kind in ("server_error", "bad_request"):
                return _error(status, f"fake {fault.kind.replace('_', ' ')}")
            if fault.kind == "error_body":
                return _json({"error": {"code": status, "message": "fake upstream error"}})
            if fault.kind == "malformed":
                return web.Response(body=b"<html>502 Bad Gateway</html>", content_type="text/html")
            if fault.kind == "truncated":
                return _json({"id": "chatcmpl-fake", "object": "chat.completion"})

        self._stats.completions += 1
        text = reply_text(messages, behaviour.answer_after)
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        return _json(
            {
                "id": f"chatcmpl-fake-{self._stats.completions}",
                "object": "chat.completion",
                "model": body.get("model") or "fake-model",
                "provider": "fake",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": max(1, chars // 4),
                    "completion_tokens": max(1, len(text) // 4),
                    "total_tokens": max(1, chars // 4) + max(1, len(text) // 4),
                },
            }
        )

    async def _models(self, request: web.Request) -> web.Response:
        listed = self.behaviour.models
        if listed is None:
            listed = [{"id": "fake-model", "object": "model"}]
        return _json({"object": "list", "data": listed})

    async def _control(self, request: web.Request) -> web.Response:
        try:
            changes = await request.json()
            if not isinstance(changes, dict):
                raise ValueError("expected a JSON object")
            behaviour = self.configure(**changes)
        except (ValueError, TypeError) as exc:
            return _error(400, str(exc))
        return _json(behaviour.to_dict())

    async def _get_stats(self, request: web.Request) -> web.Response:
        return _json(self.stats())

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return _json(self.stats())

    async def _last_request(self, request: web.Request) -> web.Response:
        return _json(self.last_request)


# --- running it as a separate process ---------------------------------------------------------


@dataclass
class FakeServerProcess:
    """A server running in a child process; its control endpoints wrapped as blocking calls."""

    proc: subprocess.Popen[str]
    base_url: str

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def _call(self, method: str, path: str, data: Any = None) -> Any:
        body = None if data is None else json.dumps(data).encode()
        req = urllib.request.Request(
            self.root_url + path,
            data=body,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def configure(self, **changes: Any) -> dict[str, Any]:
        result: dict[str, Any] = self._call("POST", "/_control", changes)
        return result

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/_stats")
        return result

    def reset(self) -> None:
        self._call("POST", "/_reset", {})


@contextlib.contextmanager
def start_fake_server_process(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    latency_s: float = 0.0,
    latency_jitter_s: float = 0.0,
    answer_after: int = 2,
    seed: int = 0,
    faults: list[dict[str, Any]] | None = None,
    strict_roles: bool = False,
    startup_timeout_s: float = 30.0,
) -> Iterator[FakeServerProcess]:
    """Run the server in a child process until the block ends (SIGTERM, then SIGKILL)."""
    cmd = [
        sys.executable, "-m", "turinglab.testing.fake_openai",
        "--host", host, "--port", str(port),
        "--latency", str(latency_s), "--jitter", str(latency_jitter_s),
        "--answer-after", str(answer_after), "--seed", str(seed),
        "--faults", json.dumps(faults or []),
        *(["--strict-roles"] if strict_roles else []),
    ]  # fmt: skip
    # Make this very copy of the package importable in the child, installed or not.
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        base_url = _await_ready(proc, startup_timeout_s)
        yield FakeServerProcess(proc, base_url)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _await_ready(proc: subprocess.Popen[str], timeout_s: float) -> str:
    # readline() blocks, so it runs in a thread that a timeout can abandon.
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=timeout_s)
    except queue.Empty:
        raise RuntimeError(f"fake server did not start within {timeout_s} s") from None
    if not line.startswith("READY "):
        raise RuntimeError(f"fake server failed to start (exit {proc.poll()}): {line!r}")
    return line.split()[1]


async def _serve(args: argparse.Namespace) -> None:
    behaviour = FakeBehaviour.from_dict(
        {
            "latency_s": args.latency,
            "latency_jitter_s": args.jitter,
            "answer_after": args.answer_after,
            "seed": args.seed,
            "faults": json.loads(args.faults),
            "strict_roles": args.strict_roles,
        }
    )
    server = FakeOpenAIServer(behaviour)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    base_url = await server.start(args.host, args.port)
    print(f"READY {base_url}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--jitter", type=float, default=0.0, help="extra random seconds, 0..J")
    parser.add_argument("--answer-after", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--faults", default="[]", help="JSON list of FaultRule objects")
    parser.add_argument(
        "--strict-roles", action="store_true", help="HTTP 400 unless roles alternate (as vLLM)"
    )
    args = parser.parse_args(argv)
    try:
        import uvloop  # optional: used only when already installed
    except ImportError:
        asyncio.run(_serve(args))
    else:
        uvloop.run(_serve(args))


if __name__ == "__main__":
    main()
