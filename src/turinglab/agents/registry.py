"""Agents from their config: one builder per kind, so a new kind is one new entry."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from turinglab.agents.base import Agent
from turinglab.agents.config import (
    AgentConfig,
    ElizaAgentConfig,
    LocalAgentConfig,
    OpenAIAgentConfig,
    ScriptedAgentConfig,
    VisionBaselineAgentConfig,
)
from turinglab.extras import require


class AgentSetupError(ValueError):
    """An agent cannot be built as configured (e.g. its API key variable is not set)."""


def _openai(name: str, cfg: OpenAIAgentConfig) -> Agent:
    from turinglab.agents.openai_compat import OpenAIChatAgent

    key = None
    if cfg.api_key_env:
        key = os.environ.get(cfg.api_key_env)
        if not key:
            raise AgentSetupError(
                f"agent {name!r}: environment variable {cfg.api_key_env} (api_key_env) is not set"
            )
    return OpenAIChatAgent(
        name=name,
        base_url=cfg.base_url,
        model=cfg.model,
        api_key=key,
        timeout_s=cfg.timeout_s,
        params=dict(cfg.params),
        headers=dict(cfg.headers),
        display_name=cfg.display_name,
        sees_images=cfg.sees_images is not False,
    )


def _local(name: str, cfg: LocalAgentConfig) -> Agent:
    from turinglab.agents.local_gguf import LocalGGUFAgent

    _require_extra(name, cfg)

    return LocalGGUFAgent(
        name,
        cfg.model,
        mode=cfg.mode,
        max_tokens=cfg.max_tokens,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        n_ctx=cfg.n_ctx,
        system_prompt=cfg.system_prompt,
        threads=cfg.threads,
    )


def _eliza(name: str, cfg: ElizaAgentConfig) -> Agent:
    from turinglab.agents.eliza import ElizaAgent

    return ElizaAgent(name=name, case=cfg.case)


def _scripted(name: str, cfg: ScriptedAgentConfig) -> Agent:
    from turinglab.agents.scripted import ScriptedAgent, load_replies

    replies = cfg.replies
    if cfg.replies_file is not None:
        try:
            replies = load_replies(cfg.replies_file)
        except (OSError, ValueError) as err:
            raise AgentSetupError(f"agent {name!r}: cannot read replies_file: {err}") from None
    return ScriptedAgent(name, replies, cycle=cfg.cycle, fallback=cfg.fallback)


def _vision_baseline(name: str, cfg: VisionBaselineAgentConfig) -> Agent:
    from turinglab.agents.vision_baseline import VisionBaselineAgent

    objects = tuple(w.lower() for w in cfg.objects) if cfg.objects else None
    return VisionBaselineAgent(name, objects)


BUILDERS: dict[type, Callable[[str, Any], Agent]] = {
    OpenAIAgentConfig: _openai,
    LocalAgentConfig: _local,
    ElizaAgentConfig: _eliza,
    ScriptedAgentConfig: _scripted,
    VisionBaselineAgentConfig: _vision_baseline,
}


def _require_extra(name: str, cfg: AgentConfig) -> None:
    if isinstance(cfg, LocalAgentConfig):
        require("local", "llama_cpp", f"agent {name!r} (a local llama.cpp model)")


def require_extras(configs: dict[str, AgentConfig]) -> None:
    """Raise MissingExtra for the first agent whose optional extra is not installed, before
    a run creates anything."""
    for name, cfg in configs.items():
        _require_extra(name, cfg)


def build_agent(name: str, cfg: AgentConfig) -> Agent:
    return BUILDERS[type(cfg)](name, cfg)


def endpoint_limits(agents: dict[str, Agent], configs: dict[str, AgentConfig]) -> dict[str, int]:
    """Per-endpoint call limits the config sets; local models take one call at a time."""
    limits: dict[str, int] = {}
    for name, agent in agents.items():
        cfg = configs[name]
        if agent.endpoint is None:
            continue
        if isinstance(cfg, OpenAIAgentConfig) and cfg.max_concurrency:
            limits[agent.endpoint] = cfg.max_concurrency
        elif isinstance(cfg, LocalAgentConfig):
            limits[agent.endpoint] = 1
    return limits


def display_names(configs: dict[str, AgentConfig]) -> dict[str, str]:
    """How prompts name each agent: its display name, its model id, else its config name."""
    names = {}
    for name, cfg in configs.items():
        if isinstance(cfg, OpenAIAgentConfig):
            names[name] = cfg.display_name or cfg.model
        else:
            names[name] = name
    return names


def describe(cfg: AgentConfig) -> str:
    if isinstance(cfg, OpenAIAgentConfig):
        return f"{cfg.model} at {cfg.base_url}"
    if isinstance(cfg, LocalAgentConfig):
        return f"GGUF {cfg.model} ({cfg.mode or 'auto'} mode, llama.cpp)"
    if isinstance(cfg, ElizaAgentConfig):
        return "ELIZA, DOCTOR script (Weizenbaum 1966)"
    if isinstance(cfg, VisionBaselineAgentConfig):
        return "vision baseline: image statistics, not a vision model"
    return f"{len(cfg.replies)} scripted replies"
