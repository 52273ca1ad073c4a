"""`turinglab agents` lists the agents a config (or the embedded set) offers; `turinglab chat`
talks to one of them in the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from turinglab.cli.errors import fail
from turinglab.cli.options import ConfigOption
from turinglab.cli.printing import console

if TYPE_CHECKING:
    from turinglab.config import AgentConfig


def agent_configs(config_path: Path | None) -> dict[str, AgentConfig]:
    from turinglab.config import EMBEDDED_AGENTS, ConfigError, load_config

    if config_path is None:
        return dict(EMBEDDED_AGENTS)
    try:
        return load_config(config_path).all_agents()
    except ConfigError as err:
        raise fail(str(err)) from None


def agents(config_path: ConfigOption = None) -> None:
    """List the agents available: the embedded ones and those a config declares."""
    from turinglab.agents.registry import describe
    from turinglab.config import EMBEDDED_AGENTS

    table = Table(title="Agents")
    for col in ("name", "kind", "what", "source"):
        table.add_column(col)
    for name, cfg in agent_configs(config_path).items():
        source = "embedded" if EMBEDDED_AGENTS.get(name) == cfg else str(config_path)
        table.add_row(name, cfg.kind, describe(cfg), source)
    console.print(table)


def chat(
    agent_name: Annotated[str, typer.Argument(metavar="AGENT")],
    config_path: ConfigOption = None,
    seed: Annotated[int, typer.Option(help="seed for the agent's sampling")] = 0,
) -> None:
    """Talk to an agent in the terminal (stdin line by line when it is not a TTY).

    Without a TTY each input line gets exactly one output line: the reply, newlines flattened.
    """
    import asyncio

    from turinglab.agents.base import CallContext, ChatMessage
    from turinglab.agents.errors import AgentError
    from turinglab.agents.registry import AgentSetupError, build_agent
    from turinglab.agents.retry import Caller, RetryPolicy

    configs = agent_configs(config_path)
    if agent_name not in configs:
        raise fail(f"unknown agent {agent_name!r}; known: {', '.join(sorted(configs))}")
    try:
        agent = build_agent(agent_name, configs[agent_name])
    except AgentSetupError as err:
        raise fail(str(err)) from None
    interactive = sys.stdin.isatty()
    # A person is waiting: two quick retries, not a batch run's minute of backoff.
    caller = Caller(RetryPolicy(retries=2, base_s=0.5, max_s=2.0), default_limit=4, seed=seed)

    async def converse() -> None:
        history: list[ChatMessage] = []
        if interactive:
            console.print(f"Chatting with [bold]{agent_name}[/]. Ctrl-D to leave.")
        try:
            while True:
                line = console.input("[bold cyan]you>[/] ") if interactive else sys.stdin.readline()
                if not line:
                    break
                history.append(ChatMessage("user", line.rstrip("\n")))
                ctx = CallContext(seed=seed + len(history), participant="chat")
                reply = await caller(agent, history, ctx)
                history.append(ChatMessage("assistant", reply.text))
                if interactive:
                    console.print(f"[bold green]{agent_name}>[/] {reply.text}", highlight=False)
                else:
                    print(" ".join(reply.text.split()), flush=True)
        finally:
            await agent.aclose()

    try:
        asyncio.run(converse())
    except (EOFError, KeyboardInterrupt):
        pass
    except AgentError as err:
        message = " ".join(str(err).split())
        # The agent's errors often name it already: "doc2: doc2: ..." says nothing more.
        while message.startswith(f"{agent_name}: {agent_name}:"):
            message = message.removeprefix(f"{agent_name}: ")
        named = message if message.startswith(f"{agent_name}:") else f"{agent_name}: {message}"
        raise fail(named) from None
