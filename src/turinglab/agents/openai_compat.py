"""An agent for any server speaking the chat-completions protocol (OpenAI, OpenRouter, vLLM,
Ollama, llama.cpp's server).

It is a bare aiohttp client on purpose: the runner sustains hundreds of calls a second on a
small machine, and an SDK costs several times more CPU per call. It never retries: the runner
owns the one retry loop, so every failure leaves here as a typed error from `errors.py`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any, NoReturn

import aiohttp

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.errors import FatalError, RateLimited, TransientError

_MAX_ERROR_CHARS = 500
_TRANSIENT_4XX = frozenset({408, 409, 425})
# OpenAI's x-ratelimit-reset-* headers are Go-style durations such as "1s", "20ms" or "6m0s".
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


class OpenAIChatAgent:
    """One model behind one chat-completions endpoint. Stateless apart from its HTTP session."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 480.0,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        display_name: str | None = None,
        sees_images: bool = True,
    ) -> None:
        self.name = name
        # Images go out as image_url parts; False for a text-only model behind the endpoint
        # (it then gets "[image]" markers, as local models do: games/table.py).
        self.sees_images = sees_images
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        # Only fields the user set are sent, so each provider's own defaults apply otherwise.
        self.params = dict(params or {})
        self.display_name = display_name
        self._url = f"{self.base_url}/chat/completions"
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        key_tag = hashlib.sha256(api_key.encode()).hexdigest()[:8] if api_key else "nokey"
        # Limits and 429 backoff are per model: one slow or rate-limited model behind a
        # router (OpenRouter) does not hold back the others behind the same URL.
        self._endpoint = f"{self.base_url}#{key_tag}#{model}"
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None

    @property
    def endpoint(self) -> str | None:
        return self._endpoint

    def _get_session(self) -> aiohttp.ClientSession:
        # Created lazily because a session belongs to the loop it was made in; a new loop
        # (as in tests that run one loop per test) gets a new session.
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session_loop is not loop:
            self._session = aiohttp.ClientSession(
                connector=_shared_connector(loop, self.base_url, self),
                connector_owner=False,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                headers=self._headers,
            )
            self._session_loop = loop
        return self._session

    def _body(self, history: list[ChatMessage], ctx: CallContext) -> bytes:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m) for m in history],
            **self.params,
        }
        if ctx.stop:
            body["stop"] = list(ctx.stop)
        return json.dumps(body).encode()

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        session = self._get_session()
        data = self._body(history, ctx)
        start = time.perf_counter()
        try:
            async with session.post(self._url, data=data) as resp:
                status = resp.status
                raw = await resp.read()
                resp_headers = resp.headers
        except aiohttp.InvalidURL as exc:
            raise FatalError(f"{self.name}: invalid URL {self._url!r}: {exc}") from exc
        except TimeoutError as exc:  # aiohttp's own timeouts subclass TimeoutError too
            raise TransientError(
                f"{self.name}: no complete response within {self.timeout_s:g} s"
            ) from exc
        except aiohttp.ClientError as exc:
            # Connection refused/reset, server disconnected, truncated payload: all retryable.
            raise TransientError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        latency = time.perf_counter() - start

        if not 200 <= status < 300:
            self._raise_for_status(status, raw, resp_headers)
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            raise TransientError(
                f"{self.name}: malformed response: HTTP {status}, not JSON: {_snippet(raw)}",
                status=status,
            ) from exc
        if not isinstance(payload, dict):
            raise TransientError(f"{self.name}: malformed response: {_snippet(raw)}", status=status)
        return self._parse(payload, raw, status, resp_headers, latency)

    def _parse(
        self,
        payload: dict[str, Any],
        raw: bytes,
        status: int,
        resp_headers: Any,
        latency: float,
    ) -> AgentReply:
        # OpenRouter reports upstream failures as HTTP 200 with an error object.
        error = payload.get("error")
        if error is not None and not payload.get("choices"):
            self._raise_body_error(error, raw, resp_headers)
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices:
            raise TransientError(
                f"{self.name}: malformed response: HTTP {status}, no choices: {_snippet(raw)}",
                status=status,
            )
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise TransientError(
                f"{self.name}: malformed response: HTTP {status}, no message: {_snippet(raw)}",
                status=status,
            )
        if choice.get("error") is not None:  # OpenRouter: a provider failed mid-generation
            self._raise_body_error(choice["error"], raw, resp_headers)

        usage = payload.get("usage")
        if not isinstance(usage, dict):  # llama.cpp and some proxies may leave it out
            usage = {}
        return AgentReply(
            text=_content_text(message.get("content")),
            route=Route(
                backend="openai",
                model=payload.get("model") or self.model,
                base_url=self.base_url,
                provider=payload.get("provider"),
                display_name=self.display_name,
            ),
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
            latency_s=latency,
            extra={"finish_reason": choice.get("finish_reason"), "id": payload.get("id")},
        )

    def _raise_body_error(self, error: Any, raw: bytes, resp_headers: Any) -> NoReturn:
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, str) and code.isdigit():
            code = int(code)
        if isinstance(code, int) and not isinstance(code, bool):
            self._raise_for_status(code, raw, resp_headers, in_body=True)
        raise TransientError(f"{self.name}: error in HTTP 200 body: {_error_message(raw)}")

    def _raise_for_status(
        self, status: int, raw: bytes, resp_headers: Any, *, in_body: bool = False
    ) -> NoReturn:
        where = " (in HTTP 200 body)" if in_body else ""
        message = f"{self.name}: HTTP {status}{where}: {_error_message(raw)}"
        if status == 429:
            raise RateLimited(message, status=status, retry_after=_retry_after(resp_headers))
        if status in _TRANSIENT_4XX or 500 <= status <= 599:
            raise TransientError(message, status=status, retry_after=_retry_after(resp_headers))
        # Other 4xx (bad request, auth, unknown model), or an unfollowed 3xx: a retry won't help.
        raise FatalError(message, status=status)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
        await _release_connector(self.base_url, self)


# Agents on one endpoint (a run's two sides often are) share one connection pool: each
# keep-alive connection then serves every agent, so a run opens half the connections, and a
# conversation's second call does not wait for a handshake. Keyed by base URL, per loop; closed
# when the last agent using it closes.
_CONNECTORS: dict[str, tuple[asyncio.AbstractEventLoop, aiohttp.TCPConnector, set[int]]] = {}


def _shared_connector(
    loop: asyncio.AbstractEventLoop, base_url: str, user: object
) -> aiohttp.TCPConnector:
    entry = _CONNECTORS.get(base_url)
    if entry is None or entry[0] is not loop or entry[1].closed:
        entry = (loop, aiohttp.TCPConnector(limit=0, ttl_dns_cache=300), set())
        _CONNECTORS[base_url] = entry
    entry[2].add(id(user))
    return entry[1]


async def _release_connector(base_url: str, user: object) -> None:
    entry = _CONNECTORS.get(base_url)
    if entry is None or id(user) not in entry[2]:
        return
    entry[2].discard(id(user))
    if not entry[2]:
        del _CONNECTORS[base_url]
        if entry[0] is asyncio.get_running_loop():
            await entry[1].close()


def _message(m: ChatMessage) -> dict[str, Any]:
    """A message as the API takes it: plain text, or text and image_url parts (data URLs)."""
    if not m.images:
        return {"role": m.role, "content": m.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    parts += [{"type": "image_url", "image_url": {"url": i.data_url}} for i in m.images]
    return {"role": m.role, "content": parts}


def _content_text(content: Any) -> str:
    """The reply text; null content (e.g. only reasoning came back) is an empty reply."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers send content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _snippet(raw: bytes) -> str:
    return raw[:_MAX_ERROR_CHARS].decode("utf-8", errors="replace")


def _error_message(raw: bytes) -> str:
    """The server's own error message when the body has one, else the start of the body."""
    try:
        payload = json.loads(raw)
    except ValueError:
        return _snippet(raw) or "(empty body)"
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            text = str(error.get("message") or error.get("detail") or error)
            # OpenRouter puts the upstream provider's own words in metadata.raw.
            metadata = error.get("metadata")
            if isinstance(metadata, dict) and metadata.get("raw"):
                text = f"{text} ({metadata['raw']})"
        else:
            text = str(error)
        return text[:_MAX_ERROR_CHARS]
    return _snippet(raw)


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait, from Retry-After (seconds or HTTP-date) or the provider variants."""
    if headers is None:
        return None
    value = headers.get("Retry-After")
    if value:
        value = value.strip()
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError, IndexError, OverflowError):
            pass
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("x-ratelimit-reset-requests")
    if value:
        return _duration_s(value.strip())
    return None


def _duration_s(value: str) -> float | None:
    """'2', '1.5s', '20ms' or '6m0s' in seconds; None for anything else."""
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
