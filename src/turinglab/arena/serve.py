"""`serve`: run the arena in one process with uvicorn (what `turinglab serve` calls).

The admin password comes from TURINGLAB_ADMIN_PASSWORD; when unset one is generated and
printed once at start-up, so a fresh machine needs no setup.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import Any

from turinglab.arena.app import create_app
from turinglab.arena.hub import FinishedHook
from turinglab.arena.modes import ArenaSetup
from turinglab.arena.setups import default_setup, setup_from_config
from turinglab.config import ExperimentConfig, load_config

PASSWORD_ENV = "TURINGLAB_ADMIN_PASSWORD"


def admin_password() -> tuple[str, bool]:
    """(password, generated?)"""
    given = os.environ.get(PASSWORD_ENV)
    if given:
        return given, False
    return secrets.token_urlsafe(12), True


def resolve_setup(config: ArenaSetup | ExperimentConfig | str | Path | None) -> ArenaSetup:
    """An arena setup from what the CLI was given: nothing (embedded agents), a study config
    file or a parsed config, or a ready setup."""
    if config is None:
        return default_setup()
    if isinstance(config, ArenaSetup):
        return config
    if isinstance(config, str | Path):
        config = load_config(Path(config))
    return setup_from_config(config)


def serve(
    config: ArenaSetup | ExperimentConfig | str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    store: Any = None,
    redis: str | None = None,
    *,
    on_finished: FinishedHook | None = None,
) -> None:
    """Serve the arena until interrupted.

    `store` is accepted for the CLI's sake: this process keeps state in memory and hands every
    finished game to `on_finished` (where the generic store can keep it); the multi-process
    mode over PostgreSQL + Redis is not built yet, so a Redis URL is refused rather than
    silently ignored."""
    import uvicorn

    if redis:
        raise SystemExit("error: --redis: multi-process arenas are not supported yet")
    try:
        setup = resolve_setup(config)
    except (ValueError, OSError) as err:
        raise SystemExit(f"error: {err}") from None
    password, generated = admin_password()
    if generated:
        print(f"admin password (set {PASSWORD_ENV} to choose one): {password}", file=sys.stderr)
    app = create_app(setup, admin_password=password, on_finished=on_finished)
    modes = ", ".join(m.name for m in setup.modes)
    print(f"arena: http://{host}:{port}/  ({modes})", file=sys.stderr)
    print(f"admin: http://{host}:{port}/admin", file=sys.stderr)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=64 * 1024)
