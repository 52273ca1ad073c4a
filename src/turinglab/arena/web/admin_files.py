"""The files a study config opened from /admin may name: only files inside the studies folder.

A config names files (an agent's replies_file, a local model, a game's prompts or stimuli).
Run from the command line they may be anywhere: the researcher owns the machine. Pasted or
chosen in /admin they could read any file the server can (a scripted witness replays
/etc/hostname line by line), so each is resolved — symlinks followed — and must lie inside the
studies folder, and a local model file must start with GGUF's magic bytes. The check runs on
the validated config before any of its files is opened (config.py's `check` hook).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel

from turinglab.agents.config import LocalAgentConfig
from turinglab.agents.local_gguf import EMBEDDED_MODELS
from turinglab.config import ConfigError, ExperimentConfig

GGUF_MAGIC = b"GGUF"


def confined_to(
    root: Path | None, base_dir: Path | None, source: str
) -> Callable[[ExperimentConfig], None]:
    """The check for one admin-opened config: `root` is the studies folder (None: no file may
    be named), `base_dir` what the config's relative paths are relative to."""

    def check(config: ExperimentConfig) -> None:
        for where, path in named_files(config, base_dir):
            full = path.resolve()
            if root is None or not full.is_relative_to(root.resolve()):
                folder = "no folder is allowed" if root is None else f"{root.resolve()}"
                raise ConfigError(
                    f"config error in {source}: {where}: a config opened from /admin may only "
                    f"name files inside the studies folder ({folder}), not {path}"
                )
        for name, agent in config.agents.items():
            if isinstance(agent, LocalAgentConfig) and agent.model not in EMBEDDED_MODELS:
                _gguf(_model_path(agent.model), f"agents.{name}.model", source)

    return check


def named_files(config: ExperimentConfig, base_dir: Path | None) -> Iterator[tuple[str, Path]]:
    """Every file path the config names (any Path value in it, and local model files), each
    as the loader will open it, with the field that names it."""
    for where, value in config_nodes(config):
        if isinstance(value, Path):
            yield where, value if value.is_absolute() or base_dir is None else base_dir / value
    for name, agent in config.agents.items():
        if isinstance(agent, LocalAgentConfig) and agent.model not in EMBEDDED_MODELS:
            yield f"agents.{name}.model", _model_path(agent.model)


def _model_path(model: str) -> Path:
    return Path(model).expanduser()  # as agents/local_gguf.py's resolve_model_path opens it


def config_nodes(value: object, where: str = "") -> Iterator[tuple[str, object]]:
    """(where, value) for `value` and everything in it, at any depth, each before what it
    holds: a model's fields, a dict's items, a list's or tuple's elements."""
    yield where, value
    if isinstance(value, BaseModel):
        for field in type(value).model_fields:
            yield from config_nodes(getattr(value, field), f"{where}.{field}".lstrip("."))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from config_nodes(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from config_nodes(item, f"{where}[{i}]")


def _gguf(path: Path, where: str, source: str) -> None:
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except OSError as err:
        raise ConfigError(
            f"config error in {source}: {where}: cannot read {path}: {err.strerror}"
        ) from None
    if magic != GGUF_MAGIC:
        raise ConfigError(f"config error in {source}: {where}: {path} is not a GGUF model file")
