"""`serve`: run the arena in one process with uvicorn (what `turinglab serve` calls).

The admin password comes from TURINGLAB_ADMIN_PASSWORD; when unset one is generated and
printed once at start-up, so a fresh machine needs no setup.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from turinglab.arena.core.hub import FinishedHook
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.modes.setups import default_setup, setup_from_config
from turinglab.arena.web.admin_keys import KeyAllowlist
from turinglab.arena.web.app import create_app
from turinglab.config import ExperimentConfig, load_config
from turinglab.heap import settle_heap
from turinglab.store import arena_games
from turinglab.store.database import DEFAULT_STORE, Store

PASSWORD_ENV = "TURINGLAB_ADMIN_PASSWORD"
SECRET_ENV = "TURINGLAB_ARENA_SECRET"  # signs session cookies; the same for every process


def uvicorn_options() -> dict[str, Any]:
    """How uvicorn runs the arena (here and in the load benchmark, bench/arena_bench.py).

    uvloop and httptools (C) when installed: each costs the event loop less per frame than
    asyncio's Python loop and h11. Per-message deflate is off: compressing every small frame
    costs CPU and saves little."""
    have = importlib.util.find_spec
    return {
        "loop": "uvloop" if have("uvloop") else "asyncio",
        "http": "httptools" if have("httptools") else "h11",
        "ws": "websockets-sansio",
        "ws_max_size": 64 * 1024,
        "ws_per_message_deflate": False,
    }


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


def store_location(given: str | None, config: object) -> str:
    """Where the arena writes, in the order `--help` gives: --store, $TURINGLAB_STORE, the
    config's `store:`, ./turinglab.db (as every other command picks its store)."""
    from_config = config.store if isinstance(config, ExperimentConfig) else None
    return given or os.environ.get("TURINGLAB_STORE") or from_config or DEFAULT_STORE


def serve(
    config: ArenaSetup | ExperimentConfig | str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    store: str | None = None,
    redis: str | None = None,
    *,
    on_finished: FinishedHook | None = None,
    itt_study: Path | None = None,
    itt_batch_size: int = 20,
    itt_collect: Path | None = None,
    proxy_headers: bool = False,
    forwarded_allow_ips: str = "127.0.0.1",
    allow_key_env: Sequence[str] = (),
    allow_base_url: Sequence[str] = (),
    check_only: bool = False,
) -> None:
    """Serve the arena until interrupted (with `check_only`: make the start-up checks, the AI
    witnesses' timing included, and return without serving).

    Every game is written to `store` (a path means SQLite; default turinglab.db) as it is
    played: a game row when it starts, each message as it is said, the verdict and survey at
    the end.

    With `redis` (a redis:// URL) this process is one of several serving one arena: they share
    the store (use PostgreSQL), Redis carries frames and matchmaking between them, and
    TURINGLAB_ARENA_SECRET (the same in every process) signs the session cookies.

    Behind a TLS reverse proxy (deploy/README.md) pass `proxy_headers` and the proxy's address
    in `forwarded_allow_ips`: uvicorn then takes the client's address and scheme from the
    proxy's X-Forwarded-For/-Proto, so session cookies are marked Secure and the admin
    password throttle counts guesses per real client.

    `allow_key_env` (NAME or NAME=BASE_URL): the API-key variables a config opened from /admin
    may use, besides the start-up config's own (admin_keys.py); `allow_base_url`: base URLs
    those configs' models may use besides these and the start-up config's (no others: a
    keyless model's URL is a request from this server too)."""
    import uvicorn

    from turinglab.arena.web.startup_checks import listen_problem, redis_problem, store_problem

    try:
        keys = KeyAllowlist.parse(allow_key_env, allow_base_url)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    secret = os.environ.get(SECRET_ENV)
    if redis and not secret:
        raise SystemExit(f"error: --redis needs {SECRET_ENV} set (the same in every process)")
    # Before anything is written: a server that cannot start leaves no arena run behind.
    problem = (redis_problem(redis) if redis else None) or listen_problem(host, port)
    if problem:
        raise SystemExit(f"error: {problem}")
    config_path = Path(config) if isinstance(config, str | Path) else None
    try:
        if config_path is not None:
            config = load_config(config_path)
        setup = resolve_setup(config)
    except (ValueError, OSError) as err:
        raise SystemExit(f"error: {err}") from None
    store = store_location(store, config)
    problem = store_problem(store)
    if problem:
        raise SystemExit(f"error: {problem}")
    # A study's AI witnesses must reply within a person's time (witness_preflight.py).
    from turinglab.arena.core.witness_preflight import witness_timing_problem

    experiment = config.experiment if isinstance(config, ExperimentConfig) else None
    settings = setup.settings
    problem = witness_timing_problem(
        experiment, setup.agents, settings.witness_timing, settings.witness_reply_max_s
    )
    if problem:
        raise SystemExit(f"error: {problem}")
    if check_only:
        print("checks passed (--check: not serving)", file=sys.stderr)
        return
    judging = None
    if itt_study is not None:  # ITT human judging of a study folder, under /judge
        from turinglab.arena.itt.judging import open_judging

        try:
            judging = open_judging(itt_study, batch_size=itt_batch_size)
        except (ValueError, OSError) as err:
            raise SystemExit(f"error: --itt-study {itt_study}: {err}") from None
    collecting = None
    if itt_collect is not None:  # ITT human responses to stimuli, under /respond
        from turinglab.arena.itt.collect_store import CollectStore

        try:
            collecting = CollectStore.open(itt_collect)
        except (ValueError, OSError) as err:
            raise SystemExit(f"error: --itt-collect {itt_collect}: {err}") from None
    try:
        kept = ArenaStore(Store(store), setup, worker=f"arena:{port}")
    except Exception as err:  # a bad URL, an unreachable database, a store of another version
        raise SystemExit(f"error: store {store}: {err}") from None
    # The admin may open other study configs from the start-up config's folder (or here).
    studies_dir = config_path.parent if config_path is not None else Path.cwd()
    password, generated = admin_password()
    if generated:
        print(f"admin password (set {PASSWORD_ENV} to choose one): {password}", file=sys.stderr)
    app = create_app(
        setup,
        admin_password=password,
        on_finished=on_finished,
        store=kept,
        redis_url=redis or None,
        secret=secret if redis else None,
        judging=judging,
        collecting=collecting,
        studies_dir=studies_dir,
        admin_keys=keys.with_config(config if isinstance(config, ExperimentConfig) else None),
    )
    modes = ", ".join(m.name for m in setup.modes)
    print(f"arena: http://{host}:{port}/  ({modes})", file=sys.stderr)
    print(f"admin: http://{host}:{port}/admin (study configs from {studies_dir})", file=sys.stderr)
    if judging is not None:
        print(f"judging: http://{host}:{port}/judge  ({itt_study})", file=sys.stderr)
    if collecting is not None:
        print(
            f"responses: http://{host}:{port}/respond  ({len(collecting.stimuli.stimuli)} "
            f"stimuli; answers in {collecting.output})",
            file=sys.stderr,
        )
    shown = arena_games.address(kept.store)
    print(f"store: {shown} (run {kept.run_id})", file=sys.stderr)
    settle_heap()
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="warning",
            proxy_headers=proxy_headers,
            forwarded_allow_ips=forwarded_allow_ips if proxy_headers else None,
            **uvicorn_options(),
        )
    finally:
        kept.close()  # whatever is queued is written before the process ends
