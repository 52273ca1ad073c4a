"""Shared fixtures: real databases (SQLite file, PostgreSQL on 127.0.0.1:5432) and a fake
chat-completions server."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from turinglab.testing.fake_openai import FakeOpenAIServer

PG_ADMIN_URL = os.environ.get("TURINGLAB_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def pytest_configure(config: pytest.Config) -> None:
    """Before any test (and before xdist starts its workers): assemble Gemma's GGUF from the
    package's chunks into ~/.cache once. Done by several workers at once on a fresh machine,
    one would find the other's half-written file and fail its checksum."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    from turinglab.agents.errors import FatalError
    from turinglab.agents.local_gguf import resolve_model_path

    with contextlib.suppress(FatalError):  # not installed: the tests that need it say so
        resolve_model_path("gemma3-base")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    import psycopg

    name = f"turinglab_test_{uuid.uuid4().hex[:8]}"
    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        pytest.fail(
            f"PostgreSQL is not reachable at {PG_ADMIN_URL} ({err}). Start it with "
            "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`."
        )
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.database)])
def store_location(request: pytest.FixtureRequest, tmp_path) -> str:
    """Each store test runs on a SQLite file and on PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
async def fake_server() -> AsyncIterator[FakeOpenAIServer]:
    """A started in-process fake server (no latency, no faults); change it with .configure()."""
    server = FakeOpenAIServer()
    await server.start()
    yield server
    await server.stop()
