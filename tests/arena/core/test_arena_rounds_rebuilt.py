"""A round book Redis lost (it restarted empty) is rebuilt from the store before any matching
decision reads it (arena/cluster/shared_rounds.py, store/arena_people.study_rounds): the person's
study rounds per role, counted as the store counts them, and whom they met. Real Redis (a fresh
namespace) and a real store (SQLite, and PostgreSQL for the counts)."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from arena_fixtures import make_setup
from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster.shared_rounds import BookLost, SharedRounds
from turinglab.arena.core.rounds import RoundBook
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, TrialSpec
from turinglab.store import arena_games
from turinglab.store.arena_people import PastRounds
from turinglab.store.database import GameStart, SeatRecord, Store

MODE = "two-party"
_ids = itertools.count(1)


@pytest.fixture
async def client() -> AsyncIterator[tuple[aioredis.Redis, str]]:
    async with alive_namespace("P1", "P2") as made:
        yield made


@pytest.fixture
def kept(tmp_path) -> Iterator[ArenaStore]:
    made = ArenaStore(Store(str(tmp_path / "store.db")), make_setup())
    yield made
    made.close()
    made.store.close()


def play(kept: ArenaStore, judge: str, witness: str | None = None, **how: object) -> None:
    """A game in the store: `judge` interrogating, `witness` (if any) in the witness seat; it
    ends as `how["end"]` says (FINISHED by default; None: still being played)."""
    n = next(_ids)
    mode = str(how.get("mode", MODE))
    people = {"interrogator": judge} | ({"seat_only": witness} if witness else {})
    spec = TrialSpec(n, f"t{n}", "two-party-test", n, dict.fromkeys(people, "human"))
    start = GameStart(
        kept.run_id,
        None,
        1,
        "two-party-test",
        1000.0 + n,
        [SeatRecord(s, "human", "human", pid) for s, pid in people.items()],
        None,
        "w1",
        {"arena_game": f"g-{n}", "mode": mode, "solo": mode == "practice", "trial": spec.to_json()},
    )
    with kept.store.writing() as conn:
        (gid,) = arena_games.start_games(kept.store, conn, [(start, spec)])
        end = how.get("end", FINISHED)
        if end is not None:
            result = GameResult(str(end), flags=["abandoned"] if end == FLAGGED else [])
            arena_games.end_game(kept.store, conn, gid, result, 2000.0 + n, worker="w1")


def rounds(client: tuple[aioredis.Redis, str], kept: ArenaStore) -> SharedRounds:
    """A process's SharedRounds reading the store as the cluster does (StoreRoutes.past_rounds)."""

    async def past(run: str, pid: str) -> PastRounds:
        assert run == kept.run_id
        return await asyncio.to_thread(kept.study_rounds, pid)

    return SharedRounds(client[0], client[1], met_ttl_s=60, past=past)


def test_the_store_counts_study_rounds_per_role_and_whom_they_met(store_location: str) -> None:
    kept = ArenaStore(Store(store_location), make_setup())
    try:
        play(kept, "p", "q")  # p interrogates q
        play(kept, "p", end=None)  # p alone with AIs, still playing: counted
        play(kept, "r", "p")  # p witnesses
        play(kept, "s", "p", end=FLAGGED)  # abandoned: given back, but they met
        play(kept, "p", mode="practice")  # practice: never counted
        with kept.store.writing() as conn:
            arena_games.save_consent(kept.store, conn, kept.run_id, "p", {"pid": "P"}, "w1")
        assert kept.study_rounds("p") == PastRounds(2, 1, frozenset({"q", "r", "s"}))
        assert kept.study_rounds("q") == PastRounds(0, 1, frozenset({"p"}))
        assert kept.study_rounds("nobody") == PastRounds(0, 0, frozenset())
    finally:
        kept.close()
        kept.store.close()


async def test_a_lost_book_is_rebuilt_from_the_store(client: tuple, kept: ArenaStore) -> None:
    redis, prefix = client
    shared, book = rounds(client, kept), RoundBook(4, random.Random(0))  # quota 2 and 2
    play(kept, "p", "q")
    play(kept, "r", "p")
    play(kept, "p", "s", end=FLAGGED)  # given back
    await shared.load(kept.run_id, "p", book)  # no book in Redis: the store's counts
    assert (book.progress("p").interrogated, book.progress("p").witnessed) == (1, 1)
    assert await redis.hgetall(shared.book_key(kept.run_id, "p")) == {"i": "1", "w": "1"}
    assert await redis.smembers(f"{prefix}met:p") == {"q", "r", "s"}
    assert 0 < await redis.ttl(f"{prefix}met:p") <= 60
    # q, whom p met, queued (their own book rebuilt as they queue): p may not meet them again.
    assert (await shared.take_or_wait(kept.run_id, MODE, "q", "P1", book)).outcome == "waiting"
    assert (await shared.take_or_wait(kept.run_id, MODE, "p", "P2", book)).outcome == "waiting"


async def test_who_played_all_rounds_in_the_store_is_done(client: tuple, kept: ArenaStore) -> None:
    shared, book = rounds(client, kept), RoundBook(4, random.Random(0))
    for partner in "ab":
        play(kept, "p", partner)
    for partner in "cd":
        play(kept, partner, "p")
    assert (await shared.take_or_wait(kept.run_id, MODE, "p", "P1", book)).outcome == "done"
    assert book.done("p")
    # Seated with AIs only, counted on top of the store's rounds (not from 0).
    await shared.count_alone(kept.run_id, "e", book)
    play(kept, "f", "e")
    await client[0].delete(shared.book_key(kept.run_id, "e"))
    await shared.count_alone(kept.run_id, "e", book)
    assert (book.progress("e").interrogated, book.progress("e").witnessed) == (1, 1)


async def test_seeding_never_overwrites_newer_counts(client: tuple, kept: ArenaStore) -> None:
    redis, prefix = client
    shared = rounds(client, kept)
    play(kept, "p", "q")
    key = shared.book_key(kept.run_id, "p")
    await redis.hset(key, mapping={"i": 2, "w": 1})  # a process counted more meanwhile
    await redis.sadd(f"{prefix}met:p", "x")
    assert await shared.seed(kept.run_id, "p")
    assert await redis.hgetall(key) == {"i": "2", "w": "1"}
    assert await redis.smembers(f"{prefix}met:p") == {"q", "x"}


async def test_an_unreadable_store_decides_nothing_until_it_answers(client: tuple) -> None:
    """Redis lost the book and the store cannot be read: deciding on an empty book would seat
    someone for rounds they played (sim seed 158 under `postgres`), so nothing is decided and
    nobody is queued; once the store answers, its counts decide."""
    stored: list[PastRounds] = []

    async def past(run: str, pid: str) -> PastRounds:
        if not stored:
            raise ConnectionError("store down")
        return stored[0]

    redis, prefix = client
    shared = SharedRounds(redis, prefix, met_ttl_s=60, past=past)
    book = RoundBook(4, random.Random(0))
    with pytest.raises(BookLost):
        await shared.take_or_wait("run", MODE, "p", "P1", book)
    with pytest.raises(BookLost):
        await shared.count_alone("run", "p", book)
    assert shared.seeded == 0  # tried again next time
    assert await redis.lrange(f"{prefix}queue:{MODE}", 0, -1) == []
    assert not await redis.exists(shared.book_key("run", "p"))
    stored.append(PastRounds(interrogated=2, witnessed=2, met=frozenset({"q"})))
    assert (await shared.take_or_wait("run", MODE, "p", "P1", book)).outcome == "done"


async def test_a_study_across_two_processes_survives_losing_redis(
    client: tuple, kept: ArenaStore
) -> None:
    """Two processes pair eight people (4 rounds each) and the store records each game as it is
    seated; Redis loses every key of the arena halfway. Nobody plays past their quota in either
    role, and no two people meet twice."""
    redis, prefix = client
    procs = [(rounds(client, kept), RoundBook(4, random.Random(k)), f"P{k + 1}") for k in (0, 1)]
    people = [f"p{k}" for k in range(8)]
    rng = random.Random(7)
    flushed = False
    seated: list[tuple[str, str]] = []  # (interrogator, witness), as the store has them
    for sweep in range(40):
        if not flushed and sweep == 3:
            keys = [k async for k in redis.scan_iter(f"{prefix}*") if ":alive:" not in k]
            await redis.delete(*keys)  # Redis restarted empty (the heartbeats came back)
            flushed = True
        rng.shuffle(people)
        for pid in people:
            shared, book, proc = rng.choice(procs)
            taken = await shared.take_or_wait(kept.run_id, MODE, pid, proc, book)
            if taken.outcome == "paired":
                pair = (pid, taken.partner_id)
                seated.append(pair if taken.role == "interrogator" else (pair[1], pair[0]))
                play(kept, *seated[-1])
    asked = Counter(judge for judge, _ in seated)
    answered = Counter(witness for _, witness in seated)
    assert max(asked.values()) <= 2 and max(answered.values()) <= 2
    assert len({frozenset(pair) for pair in seated}) == len(seated)
    assert len(seated) >= 12  # most of the study's 16 games were played
