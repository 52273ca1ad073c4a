"""Turing Lab: Turing tests of every kind, run as games between agents in roles."""

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage, Route
from turinglab.analysis.gtt import pair_table, turing_scores
from turinglab.config import ConfigError, ExperimentConfig, load_config, parse_config
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

__version__ = "0.1.0"

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
