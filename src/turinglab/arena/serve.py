"""`serve`: run the arena in one process with uvicorn (what `turinglab serve` calls).

The admin password comes from TURINGLAB_ADMIN_PASSWORD; when unset one is generated and
printed once at start-up, so a fresh machine needs no setup.
"""

from __future__ import annotations

import os
import secrets
import sys
from typing import Any

from turinglab.arena.app import create_app
from turinglab.arena.hub import FinishedHook
from turinglab.arena.modes import ArenaSetup

PASSWORD_ENV = "TURINGLAB_ADMIN_PASSWORD"


def admin_password() -> tuple[str, bool]:
    """(password, generated?)"""
    given = os.environ.get(PASSWORD_ENV)
    if given:
        return given, False
    return secrets.token_urlsafe(12), True


def serve(
    config: ArenaSetup,
    host: str = "127.0.0.1",
    port: int = 8000,
    store: Any = None,
    redis: str | None = None,
    *,
    on_finished: FinishedHook | None = None,
) -> None:
    """Serve the arena until interrupted.

    `store` and `redis` are accepted for the CLI's sake: this process keeps state in memory and
    hands every finished game to `on_finished` (the lead wires the generic store there); the
    multi-process mode over PostgreSQL + Redis is not built yet, so a Redis URL is refused
    rather than silently ignored."""
    import uvicorn

    if redis:
        raise SystemExit("error: --redis: multi-process arenas are not supported yet")
    password, generated = admin_password()
    if generated:
        print(f"admin password (set {PASSWORD_ENV} to choose one): {password}", file=sys.stderr)
    app = create_app(config, admin_password=password, on_finished=on_finished)
    print(f"arena: http://{host}:{port}/  (admin: http://{host}:{port}/admin)", file=sys.stderr)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=64 * 1024)
