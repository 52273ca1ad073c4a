"""The API keys a study config opened from /admin may use: only those the operator allows.

An `openai` agent reads its key from the environment variable its `api_key_env` names and sends
it to its `base_url`. From the command line that is the researcher's own doing. Pasted or
chosen in /admin it would let whoever has the admin password send any secret of the server's
environment (TURINGLAB_ARENA_SECRET, a database password, a cloud token) to a host they run. So
an admin-opened config may name only variables on the operator's allowlist, and only with the
base URLs it binds them to:

    turinglab serve study.yaml --allow-key-env OPENAI_API_KEY=https://api.openai.com/v1

A bare `NAME` lets that key go to any base URL the server allows (only for a key the admin may
hold anyway). The start-up config's own (variable, base URL) pairs are allowed too: the operator
chose them, and the admin may reopen that study. By default nothing else is: no prefix is
trusted, as TURINGLAB_ARENA_SECRET shows.

A model without a key is a request from the server too: a `base_url` of
http://169.254.169.254/… or http://127.0.0.1:6379 would have the server post to its cloud's
metadata service or to a database on its own network, and show the answer as the witness's
reply (server-side request forgery). So every `base_url` in an admin-opened config, keyed or
not, must be one the operator named: in the start-up config, in an `--allow-key-env
NAME=BASE_URL`, or in `--allow-base-url URL` (repeatable). They are compared whole (trailing
slashes aside), so no path or user-info trick reaches another host. Like the file check
(admin_files.py) these run on the validated config, before any agent is built.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel

from turinglab.arena.web.admin_files import config_nodes
from turinglab.config import ConfigError, ExperimentConfig

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class KeyAllowlist:
    # variable -> the base URLs its key may be sent to (None: any the server allows)
    allowed: dict[str, frozenset[str] | None] = field(default_factory=dict)
    # base URLs any model may use (--allow-base-url, the start-up config's)
    base_urls: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, given: Iterable[str], base_urls: Iterable[str] = ()) -> KeyAllowlist:
        """From `--allow-key-env` values, NAME or NAME=BASE_URL, and `--allow-base-url`
        values; ValueError in one line."""
        allowed: dict[str, frozenset[str] | None] = {}
        for item in given:
            name, sep, url = item.partition("=")
            name, url = name.strip(), _url(url)
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"--allow-key-env {item!r}: give NAME or NAME=BASE_URL")
            if sep and not _is_http(url):
                raise ValueError(f"--allow-key-env {item!r}: the base URL must be http(s)://…")
            allowed[name] = _merged(allowed, name, url if sep else None)
        urls: set[str] = set()
        for item in base_urls:
            if not _is_http(_url(item)):
                raise ValueError(f"--allow-base-url {item!r}: give an http(s)://… base URL")
            urls.add(_url(item))
        return cls(allowed, frozenset(urls))

    def with_config(self, config: ExperimentConfig | None) -> KeyAllowlist:
        """These, plus the pairs and base URLs the operator's start-up config uses."""
        allowed = dict(self.allowed)
        for _, env, url in [] if config is None else _keyed_agents(config):
            allowed[env] = _merged(allowed, env, _url(url))
        urls = {_url(url) for _, url in ([] if config is None else _base_urls(config))}
        return KeyAllowlist(allowed, self.base_urls | urls)

    @property
    def reachable(self) -> frozenset[str]:
        """Every base URL a model of an admin-opened config may use."""
        keyed = (urls for urls in self.allowed.values() if urls is not None)
        return self.base_urls.union(*keyed)

    def check(self, config: ExperimentConfig, source: str) -> None:
        """ConfigError, naming the field, for a key variable or base URL not allowed."""
        self._check_keys(config, source)
        reachable = self.reachable
        for where, given_url in _base_urls(config):
            if _url(given_url) not in reachable:
                names = ", ".join(sorted(reachable)) or "none"
                raise ConfigError(
                    f"config error in {source}: {where}.base_url: a config opened from /admin "
                    f"may use only the base URLs the server allows ({names}; turinglab serve "
                    f"--allow-base-url URL adds one), not {given_url}"
                )

    def _check_keys(self, config: ExperimentConfig, source: str) -> None:
        for where, env, given_url in _keyed_agents(config):
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


def _is_http(url: str) -> bool:
    return url.startswith(("https://", "http://")) and len(url.split("://", 1)[1]) > 0


def _merged(
    allowed: dict[str, frozenset[str] | None], name: str, url: str | None
) -> frozenset[str] | None:
    if url is None or (name in allowed and allowed[name] is None):
        return None  # any URL
    return (allowed.get(name) or frozenset()) | {url}


def _models(config: ExperimentConfig) -> Iterator[tuple[str, BaseModel]]:
    """(where, model) for every settings model in the config, at any depth."""
    for where, value in config_nodes(config):
        if isinstance(value, BaseModel):
            yield where, value


def _base_urls(config: ExperimentConfig) -> Iterator[tuple[str, str]]:
    """(where, base URL) for every model in the config that has one, keyed or not."""
    for where, model in _models(config):
        url = getattr(model, "base_url", None)
        if isinstance(url, str):
            yield where, url


def _keyed_agents(config: ExperimentConfig) -> Iterator[tuple[str, str, str]]:
    """(where, variable, base URL) for every model in the config that names a key variable
    (any kind that may have one)."""
    for where, model in _models(config):
        env = getattr(model, "api_key_env", None)
        if env:
            yield where, str(env), str(getattr(model, "base_url", ""))
