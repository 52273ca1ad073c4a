"""Turing Lab: Turing tests of every kind, run as games between agents in roles.

The public names below load on first use (PEP 562 module `__getattr__`), so that importing a
submodule — the command line above all — does not pull in scipy, pandas and the runner.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage, Route
    from turinglab.analysis.gtt import pair_table, turing_scores
    from turinglab.config import ConfigError, ExperimentConfig, load_config, parse_config
    from turinglab.runner.execute import run_experiment
    from turinglab.store.database import Store

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "Agent": "turinglab.agents.base",
    "AgentReply": "turinglab.agents.base",
    "CallContext": "turinglab.agents.base",
    "ChatMessage": "turinglab.agents.base",
    "Route": "turinglab.agents.base",
    "pair_table": "turinglab.analysis.gtt",
    "turing_scores": "turinglab.analysis.gtt",
    "ConfigError": "turinglab.config",
    "ExperimentConfig": "turinglab.config",
    "load_config": "turinglab.config",
    "parse_config": "turinglab.config",
    "run_experiment": "turinglab.runner.execute",
    "Store": "turinglab.store.database",
}

__all__ = [
    "Agent",
    "AgentReply",
    "CallContext",
    "ChatMessage",
    "ConfigError",
    "ExperimentConfig",
    "Route",
    "Store",
    "load_config",
    "pair_table",
    "parse_config",
    "run_experiment",
    "turing_scores",
]
assert set(__all__) == set(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'turinglab' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
