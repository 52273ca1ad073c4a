"""The GTT modes of test_arena_gtt.py's two scripted models, taken over quickly, their models
held at a gate: an AI-only game (gtt-watch) stands still partway, where a test takes it over.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace

from test_arena_gtt import gtt_setup
from test_arena_takeover import TAKEOVER_AFTER_S
from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSetup

GATE = "TURINGLAB_TEST_GTT_GATE"  # a file the models' second and later replies wait for


class Gated(ScriptedAgent):
    """A scripted model whose second and later replies wait until the file named by $GATE
    exists (no $GATE: they do not wait). The servers read it from the environment they
    inherit from the test."""

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        gate = os.environ.get(GATE)
        if gate and any(m.role == "assistant" for m in history):
            while not os.path.exists(gate):
                await asyncio.sleep(0.02)
        return await super().reply(history, ctx)


def gtt_takeover_setup() -> ArenaSetup:
    """The GTT modes (gtt-distinguish, gtt-act, gtt-watch), their models gated."""
    setup = gtt_setup()
    settings = setup.settings.model_copy(update={"takeover_after_s": TAKEOVER_AFTER_S})
    agents: dict[str, Agent] = {}
    for name, agent in setup.agents.items():
        assert isinstance(agent, ScriptedAgent)
        agents[name] = Gated(name, list(agent.replies))
    return replace(setup, agents=agents, settings=settings)
