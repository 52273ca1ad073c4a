"""A thousand seeded schedules (seeds 1..1000, two processes, crashes and Redis restarts: the
command's defaults), a hundred on three processes, a hundred on three processes where people
give up on a page that broke (`--give-up-p 0.5`), a hundred where PostgreSQL also refuses
or stalls (`--faults crash,redis-restart,postgres`), a hundred where Redis is also paused
(`--faults crash,redis-restart,redis-pause`) and a hundred where one process's network to it
is cut (`redis-cut`), in blocks of 50, so the suite's workers
share them. Each block is the command itself, run as a user runs it (with the string hashes it
fixes, so a seed's schedule is the one `--seed S --trace` replays).

The seeds that still break a promise are listed with what they break (open bugs, named in
docs/simulation.md): a block fails on any other violation, and on a listed seed that no longer
breaks it (then take it off the list, with its fix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

SEEDS = range(1, 1001)
BLOCK = 50
# None open (161, 958, 999 were, until the takeover told a killed owner from a stopped one and
# an input unanswered for 5 s was told to wait: tests/sim/test_sim_arena.py).
KNOWN: dict[int, str] = {}


# Three processes: a third one holding sockets of games played elsewhere (seed 72 broke here
# until an owner back on Redis asked its holders again).
THREE = range(1, 101)
# People who close a page that broke (seeds 83, 88 broke here: tests/sim/test_sim_arena.py).
GIVE_UP = range(1, 101)
# The database slow, and out once (seed 39 broke here until a lost round book waited for it).
POSTGRES = range(1, 101)
# Redis paused too (seeds 11, 18 and 82 broke here: tests/sim/test_sim_redis_pause.py).
REDIS_PAUSE = range(1, 101)
REDIS_PAUSE_KNOWN: dict[int, str] = {}
# One process cut off from Redis (26 of seeds 1-200 broke here, then 11: each fixed in
# tests/sim/test_sim_redis_cut.py).
REDIS_CUT = range(1, 101)
REDIS_CUT_KNOWN: dict[int, str] = {}


@pytest.mark.parametrize("first", range(SEEDS.start, SEEDS.stop, BLOCK))
def test_a_block_of_seeded_schedules_keeps_every_promise(first: int) -> None:
    _block(first, 2)


@pytest.mark.parametrize("first", range(THREE.start, THREE.stop, BLOCK))
def test_a_block_of_three_process_schedules_keeps_every_promise(first: int) -> None:
    _block(first, 3)


@pytest.mark.parametrize("first", range(GIVE_UP.start, GIVE_UP.stop, BLOCK))
def test_a_block_of_schedules_where_people_give_up_keeps_every_promise(first: int) -> None:
    _block(first, 3, "--give-up-p", "0.5")


@pytest.mark.parametrize("first", range(POSTGRES.start, POSTGRES.stop, BLOCK))
def test_a_block_of_schedules_where_the_database_fails_keeps_every_promise(first: int) -> None:
    _block(first, 2, "--faults", "crash,redis-restart,postgres")


@pytest.mark.parametrize("first", range(REDIS_PAUSE.start, REDIS_PAUSE.stop, BLOCK))
def test_a_block_of_schedules_where_redis_pauses_keeps_every_promise(first: int) -> None:
    _block(first, 2, "--faults", "crash,redis-restart,redis-pause", known=REDIS_PAUSE_KNOWN)


@pytest.mark.parametrize("first", range(REDIS_CUT.start, REDIS_CUT.stop, BLOCK))
def test_a_block_of_schedules_where_a_process_is_cut_off_from_redis_keeps_every_promise(
    first: int,
) -> None:
    _block(first, 2, "--faults", "crash,redis-restart,redis-cut", known=REDIS_CUT_KNOWN)


def _block(first: int, processes: int, *more: str, known: dict[int, str] | None = None) -> None:
    seeds = f"{first}:{first + BLOCK}"
    command = [sys.executable, "-m", "turinglab", "sim", "arena", "--json", "--seeds", seeds]
    done = subprocess.run(
        [*command, "--processes", str(processes), *more],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        timeout=900,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["schedules"] == BLOCK, done.stderr[-2000:]
    broken: dict[int, set[str]] = {}
    for v in report["violations"]:
        broken.setdefault(v["seed"], set()).add(v["invariant"])
    if known is None:
        known = KNOWN if (processes, more) == (2, ()) else {}
    assert broken == {s: {i} for s, i in known.items() if first <= s < first + BLOCK}
