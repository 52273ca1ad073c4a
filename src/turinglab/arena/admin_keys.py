"""The API keys a study config opened from /admin may use: only those the operator allows.

An `openai` agent reads its key from the environment variable its `api_key_env` names and sends
it to its `base_url`. From the command line that is the researcher's own doing. Pasted or
chosen in /admin it would let whoever has the admin password send any secret of the server's
environment (TURINGLAB_ARENA_SECRET, a database password, a cloud token) to a host they run. So
an admin-opened config may name only variables on the operator's allowlist, and only with the
base URLs it binds them to:

    turinglab serve study.yaml --allow-key-env OPENAI_API_KEY=https://api.openai.com/v1

A bare `NAME` lets that key go to any base URL the admin gives (only for a key the admin may
hold anyway). The start-up config's own (variable, base URL) pairs are allowed too: the operator
chose them, and the admin may reopen that study. By default nothing else is: no prefix is
trusted, as TURINGLAB_ARENA_SECRET shows. Like the file check (admin_files.py) this runs on the
validated config, before any agent is built.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel

from turinglab.config import ConfigError, ExperimentConfig

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class KeyAllowlist:
    # variable -> the base URLs its key may be sent to (None: any)
    allowed: dict[str, frozenset[str] | None] = field(default_factory=dict)

    @classmethod
    def parse(cls, given: Iterable[str]) -> KeyAllowlist:
        """From `--allow-key-env` values, NAME or NAME=BASE_URL; ValueError in one line."""
        allowed: dict[str, frozenset[str] | None] = {}
        for item in given:
            name, sep, url = item.partition("=")
            name, url = name.strip(), _url(url)
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"--allow-key-env {item!r}: give NAME or NAME=BASE_URL")
            if sep and not url.startswith(("https://", "http://")):
                raise ValueError(f"--allow-key-env {item!r}: the base URL must be http(s)://…")
            allowed[name] = _merged(allowed, name, url if sep else None)
        return cls(allowed)

    def with_config(self, config: ExperimentConfig | None) -> KeyAllowlist:
        """These, plus the pairs the operator's start-up config uses."""
        allowed = dict(self.allowed)
        for _, env, url in [] if config is None else _keyed_agents(config, ""):
            allowed[env] = _merged(allowed, env, _url(url))
        return KeyAllowlist(allowed)

    def check(self, config: ExperimentConfig, source: str) -> None:
        """ConfigError, naming the field, for a key variable or base URL not allowed."""
        for where, env, given_url in _keyed_agents(config, ""):
            url = _url(given_url)
            if env not in self.allowed:
                names = ", ".join(sorted(self.allowed)) or "none"
                raise ConfigError(
                    f"config error in {source}: {where}.api_key_env: a config opened from "
                    f"/admin may use only the API-key variables the server allows ({names}; "
                    f"turinglab serve --allow-key-env NAME=BASE_URL adds one), not {env}"
                )
            urls = self.allowed[env]
            if urls is not None and url not in urls:
                raise ConfigError(
                    f"config error in {source}: {where}.base_url: the key in {env} may be sent "
                    f"only to {', '.join(sorted(urls))}, not {given_url}"
                )


def _url(url: str) -> str:
    return url.strip().rstrip("/")


def _merged(
    allowed: dict[str, frozenset[str] | None], name: str, url: str | None
) -> frozenset[str] | None:
    if url is None or (name in allowed and allowed[name] is None):
        return None  # any URL
    return (allowed.get(name) or frozenset()) | {url}


def _keyed_agents(value: object, where: str) -> Iterator[tuple[str, str, str]]:
    """(where, variable, base URL) for every model in the config that names a key variable
    (any kind that may have one)."""
    if isinstance(value, BaseModel):
        env = getattr(value, "api_key_env", None)
        if env:
            yield where, str(env), str(getattr(value, "base_url", ""))
        for name in type(value).model_fields:
            yield from _keyed_agents(getattr(value, name), f"{where}.{name}".lstrip("."))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _keyed_agents(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _keyed_agents(item, f"{where}[{i}]")
