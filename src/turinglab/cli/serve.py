"""`turinglab serve`: the browser arena (needs the `[arena]` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from turinglab.cli.errors import fail
from turinglab.cli.options import StoreOption


def serve(
    config_path: Annotated[
        Path | None,
        typer.Argument(
            metavar="[CONFIG]",
            help="a three-/two-party, strong, gtt, live-itt or conversation config; "
            "none: play the embedded agents",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    store: StoreOption = None,
    redis: Annotated[
        str | None, typer.Option(help="redis://… shared by several server processes")
    ] = None,
    itt_study: Annotated[
        Path | None, typer.Option(help="an ITT study folder for people to judge, at /judge")
    ] = None,
    itt_batch_size: Annotated[int, typer.Option(help="trials per ITT judge")] = 20,
    proxy_headers: Annotated[
        bool, typer.Option(help="behind a reverse proxy: trust its X-Forwarded-For/-Proto")
    ] = False,
    forwarded_allow_ips: Annotated[
        str, typer.Option(help="the proxies trusted with --proxy-headers (comma-separated)")
    ] = "127.0.0.1",
    itt_collect: Annotated[
        Path | None,
        typer.Option(
            help="an ITT stimuli file (or folder with stimuli.csv) for people to "
            "answer, at /respond"
        ),
    ] = None,
    allow_key_env: Annotated[
        list[str] | None,
        typer.Option(
            help="an API-key variable a config opened from /admin may use, as NAME=BASE_URL "
            "(or NAME: to any allowed base URL); repeatable. None by default, besides the "
            "start-up config's"
        ),
    ] = None,
    allow_base_url: Annotated[
        list[str] | None,
        typer.Option(
            help="a base URL the models of a config opened from /admin may use; repeatable. "
            "None by default, besides the start-up config's and --allow-key-env's"
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="make the start-up checks (a study's AI witnesses timed against the delay "
            "model included) and exit without serving",
        ),
    ] = False,
) -> None:
    """Start the browser arena: people play Turing tests with each other and with AI witnesses.

    The lobby is at /, the admin pages at /admin (password from TURINGLAB_ADMIN_PASSWORD, or
    generated and printed)."""
    from turinglab.extras import require_extra

    require_extra("arena")
    from turinglab.arena.web.serve import serve as serve_arena

    if not 0 < port < 65536:
        raise fail(f"--port must be between 1 and 65535, not {port}")
    if config_path is not None and config_path.is_dir():
        raise fail(f"config {config_path} is a folder; give the YAML file of a study config")
    if config_path is not None and not config_path.is_file():
        raise fail(f"config {config_path}: no such file")
    if itt_batch_size < 1:
        raise fail(f"--itt-batch-size must be at least 1, not {itt_batch_size}")
    serve_arena(
        config_path,
        host=host,
        port=port,
        store=store,
        redis=redis,
        itt_study=itt_study,
        itt_batch_size=itt_batch_size,
        itt_collect=itt_collect,
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
        allow_key_env=allow_key_env or (),
        allow_base_url=allow_base_url or (),
        check_only=check,
    )
